// An embedder over any OpenAI-compatible `POST /v1/embeddings` endpoint (OpenAI, Azure-style
// proxies, LiteLLM, vLLM, Ollama, text-embeddings-inference, ...).
//
// Endpoint rule (see embeddingsEndpoint): a URL whose path ends in `/embeddings` is used as it
// is; a URL with no path gets `/v1/embeddings`; any other path is taken as the API base, as the
// OpenAI SDKs do, and gets `/embeddings` (so `https://host/v1` becomes `https://host/v1/embeddings`).
//
// Dimensions: when `dimensions` is configured it is sent with every request (OpenAI's parameter
// for shortening text-embedding-3 vectors) and every answer must match it. When it is not, the
// factory embeds one probe text at startup and adopts the length of that vector, because the
// vector store needs the dimensionality before the first real call. A failed probe fails startup.
//
// Requests: inputs go in batches of at most `batchSize` (default 96). Each attempt has a timeout.
// 408, 429 and 5xx answers, timeouts and network errors are retried up to `maxRetries` times,
// after the delay the server asks for (`retry-after-ms` or `Retry-After`, in seconds or as a
// date) or else an exponential backoff; a server asking for longer than `maxRetryDelayMs` gets
// an error instead of a wait. Inputs are prepared like USE-lite's: blank texts become one space
// (OpenAI rejects empty input) and texts are cut at `maxInputChars`.

import { setTimeout as sleep } from 'node:timers/promises';
import type { Embedder } from './interface.ts';

export interface OpenAiEmbedderOptions {
  /** Base URL or full endpoint; see the endpoint rule above. */
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer …`; never logged or put in errors. */
  apiKey?: string;
  /** Expected (and requested) vector length; learned from a probe when absent. */
  dimensions?: number;
  /** Per attempt; default 30 s. */
  timeoutMs?: number;
  /** Retries after the first attempt; default 3. */
  maxRetries?: number;
  /** Longest wait before a retry; default 20 s. */
  maxRetryDelayMs?: number;
  /** Inputs per request; default 96. */
  batchSize?: number;
  /** Characters of a text that are sent; default 8192. */
  maxInputChars?: number;
}

/** The embeddings endpoint failed or answered something unusable. */
export class EmbeddingsError extends Error {
  /** The HTTP status of the last answer, when there was one. */
  readonly status?: number;
  constructor(message: string, status?: number) {
    super(message);
    this.name = 'EmbeddingsError';
    this.status = status;
  }
}

const PROBE_TEXT = 'dimension probe';

/** The URL requests go to, from a configured base URL (the rule in the file comment). */
export function embeddingsEndpoint(url: string): string {
  const parsed = new URL(url);
  const path = parsed.pathname.replace(/\/+$/, '');
  if (path.endsWith('/embeddings')) parsed.pathname = path;
  else if (path === '') parsed.pathname = '/v1/embeddings';
  else parsed.pathname = `${path}/embeddings`;
  return parsed.href;
}

function prepare(text: string, maxChars: number): string {
  if (text.trim() === '') return ' ';
  if (text.length <= maxChars) return text;
  const cut = /[\uD800-\uDBFF]/.test(text[maxChars - 1]!) ? maxChars - 1 : maxChars;
  return text.slice(0, cut);
}

/** Milliseconds the server asked us to wait, if it said. */
function retryAfterMs(headers: Headers): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms);
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

async function errorDetail(response: Response): Promise<string> {
  let text: string;
  try {
    text = (await response.text()).slice(0, 4000);
  } catch {
    return '';
  }
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    if (typeof message === 'string') text = message;
  } catch {
    // Not JSON: the text itself is the detail.
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text ? `: ${text.slice(0, 300)}` : '';
}

function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** An embeddings failure that a later attempt may not meet: no answer, a timeout, 408, 429 or 5xx. */
export function isEmbeddingsOutage(err: unknown): boolean {
  return err instanceof EmbeddingsError && (err.status === undefined || isRetryableStatus(err.status));
}

export async function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Promise<Embedder> {
  const client = new OpenAiEmbeddings(options);
  if (client.dimensions === undefined) {
    try {
      const [probe] = await client.embed([PROBE_TEXT]);
      client.dimensions = probe!.length;
    } catch (error) {
      throw new EmbeddingsError(`could not learn the embedding dimensions: ${(error as Error).message}`, (error as EmbeddingsError).status);
    }
  }
  const learned = client.dimensions;
  return {
    kind: 'openai',
    model: client.model,
    dimensions: learned,
    embed: (texts) => client.embed(texts),
    async close(): Promise<void> {
      client.close();
    },
  };
}

/** The client behind the embedder: batches, requests with retries, and checked answers. */
class OpenAiEmbeddings {
  readonly model: string;
  /** Every answer's vector length; undefined until the probe has learned it. */
  dimensions: number | undefined;
  private readonly endpoint: string;
  private readonly requestedDimensions: number | undefined;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly batchSize: number;
  private readonly maxInputChars: number;
  private readonly headers: Record<string, string>;
  private readonly closing = new AbortController();

  constructor(options: OpenAiEmbedderOptions) {
    const { model, apiKey, timeoutMs = 30_000, maxRetries = 3, maxRetryDelayMs = 20_000, batchSize = 96, maxInputChars = 8192 } = options;
    this.endpoint = embeddingsEndpoint(options.url);
    if (!model) throw new Error('an embeddings model name is required');
    if (options.dimensions !== undefined && (!Number.isInteger(options.dimensions) || options.dimensions < 1)) {
      throw new Error(`dimensions must be a positive integer, got ${options.dimensions}`);
    }
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 2048) {
      throw new Error(`batchSize must be an integer from 1 to 2048, got ${batchSize}`);
    }
    this.model = model;
    this.dimensions = options.dimensions;
    this.requestedDimensions = options.dimensions;
    this.timeoutMs = timeoutMs;
    this.maxRetries = maxRetries;
    this.maxRetryDelayMs = maxRetryDelayMs;
    this.batchSize = batchSize;
    this.maxInputChars = maxInputChars;
    this.headers = { 'content-type': 'application/json', accept: 'application/json' };
    if (apiKey) this.headers.authorization = `Bearer ${apiKey}`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (this.closing.signal.aborted) throw closedError();
    if (!Array.isArray(texts)) throw new TypeError('texts must be an array of strings');
    const index = texts.findIndex((text) => typeof text !== 'string');
    if (index >= 0) throw new TypeError(`texts[${index}] is not a string`);
    const prepared = texts.map((text) => prepare(text, this.maxInputChars));
    const out: Float32Array[] = [];
    for (let start = 0; start < prepared.length; start += this.batchSize) {
      const batch = prepared.slice(start, start + this.batchSize);
      out.push(...this.parse(await this.request(batch), batch.length));
    }
    return out;
  }

  close(): void {
    this.closing.abort();
  }

  private backoff(attempt: number): number {
    return Math.min(this.maxRetryDelayMs, 500 * 2 ** attempt * (0.75 + Math.random() * 0.25));
  }

  private async wait(ms: number): Promise<void> {
    try {
      await sleep(ms, undefined, { signal: this.closing.signal });
    } catch {
      throw closedError();
    }
  }

  /** One request with retries; returns the parsed body of a 2xx answer. */
  private async request(inputs: string[]): Promise<unknown> {
    const { endpoint, closing } = this;
    const body = JSON.stringify({
      model: this.model,
      input: inputs,
      ...(this.requestedDimensions ? { dimensions: this.requestedDimensions } : {}),
    });
    for (let attempt = 0; ; attempt++) {
      if (closing.signal.aborted) throw closedError();
      let response: Response;
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          headers: this.headers,
          body,
          signal: AbortSignal.any([closing.signal, AbortSignal.timeout(this.timeoutMs)]),
        });
      } catch (error) {
        if (closing.signal.aborted) throw closedError();
        const reason =
          error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : describeNetworkError(error);
        if (attempt < this.maxRetries) {
          await this.wait(this.backoff(attempt));
          continue;
        }
        throw new EmbeddingsError(`embeddings endpoint ${endpoint} failed after ${attempt + 1} attempts: ${reason}`);
      }
      if (response.ok) return this.readJson(response);
      if (isRetryableStatus(response.status) && attempt < this.maxRetries) {
        await this.waitToRetry(response, attempt);
        continue;
      }
      const detail = await errorDetail(response);
      const tries = attempt > 0 ? ` (after ${attempt + 1} attempts)` : '';
      throw new EmbeddingsError(`embeddings endpoint ${endpoint} answered ${response.status}${tries}${detail}`, response.status);
    }
  }

  private async readJson(response: Response): Promise<unknown> {
    const text = await response.text();
    try {
      return JSON.parse(text);
    } catch {
      throw new EmbeddingsError(
        `embeddings endpoint ${this.endpoint} answered ${response.status} with a body that is not JSON: ` +
          JSON.stringify(text.slice(0, 100)),
        response.status,
      );
    }
  }

  /** Waits as long as the server asked (or backs off), unless it asked for longer than this client waits. */
  private async waitToRetry(response: Response, attempt: number): Promise<void> {
    const asked = retryAfterMs(response.headers);
    await response.body?.cancel();
    if (asked !== undefined && asked > this.maxRetryDelayMs) {
      throw new EmbeddingsError(
        `embeddings endpoint ${this.endpoint} answered ${response.status} and asked to retry after ` +
          `${Math.ceil(asked / 1000)} s, longer than the ${this.maxRetryDelayMs / 1000} s this client waits`,
        response.status,
      );
    }
    await this.wait(asked ?? this.backoff(attempt));
  }

  private malformed(why: string): EmbeddingsError {
    return new EmbeddingsError(`embeddings endpoint ${this.endpoint} answered malformed JSON: ${why}`);
  }

  /** Checks the answer to `count` inputs and returns unit vectors in input order. */
  private parse(body: unknown, count: number): Float32Array[] {
    const data = (body as { data?: unknown } | null)?.data;
    if (!Array.isArray(data)) throw this.malformed('no "data" array');
    if (data.length !== count) throw this.malformed(`${data.length} embeddings for ${count} inputs`);
    const vectors = new Array<Float32Array>(count);
    data.forEach((item: { index?: unknown; embedding?: unknown } | null, position) => {
      const index = item?.index ?? position;
      if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= count || vectors[index as number]) {
        throw this.malformed(`data[${position}].index is missing, out of range or repeated`);
      }
      vectors[index as number] = this.unitVector(item?.embedding, position);
    });
    const first = vectors[0]!.length;
    if (vectors.some((v) => v.length !== first)) throw this.malformed('embeddings of different lengths');
    return vectors;
  }

  /** The embedding at `data[position]`, checked and scaled to unit length. */
  private unitVector(embedding: unknown, position: number): Float32Array {
    if (!Array.isArray(embedding) || embedding.length === 0) {
      throw this.malformed(`data[${position}].embedding is not an array of numbers`);
    }
    if (this.dimensions !== undefined && embedding.length !== this.dimensions) {
      throw this.malformed(`data[${position}].embedding has ${embedding.length} dimensions, expected ${this.dimensions}`);
    }
    const vector = new Float32Array(embedding.length);
    let sum = 0;
    for (let i = 0; i < embedding.length; i++) {
      const x = embedding[i];
      if (typeof x !== 'number' || !Number.isFinite(x)) {
        throw this.malformed(`data[${position}].embedding[${i}] is not a finite number`);
      }
      vector[i] = x;
      sum += x * x;
    }
    if (sum === 0) throw this.malformed(`data[${position}].embedding is the zero vector`);
    const scale = 1 / Math.sqrt(sum);
    for (let i = 0; i < vector.length; i++) vector[i]! *= scale;
    return vector;
  }
}

function closedError(): EmbeddingsError {
  return new EmbeddingsError('the embeddings client is closed');
}

function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
    if (typeof cause?.code === 'string') return `${error.message} (${cause.code})`;
    if (typeof cause?.message === 'string') return `${error.message}: ${cause.message}`;
    return error.message;
  }
  return String(error);
}
