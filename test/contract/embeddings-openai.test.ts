// The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1 that implements
// POST /v1/embeddings with deterministic vectors, and can be told to misbehave.

import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readStorageConfig } from '../../services/common/config.ts';
import { createEmbedder } from '../../services/common/embeddings/index.ts';
import { createOpenAiEmbedder, EmbeddingsError, embeddingsEndpoint } from '../../services/common/embeddings/openai.ts';

const DIMS = 8;
const API_KEY = 'sk-test-0123456789abcdef';

/** The server's vector for a text: bytes of its SHA-256, centred; not normalised. */
function rawVector(text: string, dims = DIMS): number[] {
  const hash = createHash('sha256').update(text).digest();
  return Array.from({ length: dims }, (_, i) => hash[i]! - 127.5);
}

function unit(values: number[]): number[] {
  const n = Math.sqrt(values.reduce((s, x) => s + x * x, 0));
  return values.map((x) => x / n);
}

interface Seen {
  path: string;
  authorization?: string;
  body: { model?: string; input?: string[]; dimensions?: number };
  at: number;
}

/** One scripted answer, used instead of the normal one for the next request. */
type Scripted = (req: IncomingMessage, res: ServerResponse, body: Seen['body']) => void;

let server: Server;
let base: string;
let seen: Seen[] = [];
let script: Scripted[] = [];

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: Seen['body'] = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Seen['body'];
      } catch {
        answer(res, 400, { error: { message: 'body is not JSON' } });
        return;
      }
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body, at: Date.now() });
      const scripted = script.shift();
      if (scripted) return scripted(req, res, body);
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        answer(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
        return;
      }
      const dims = body.dimensions ?? DIMS;
      answer(res, 200, {
        object: 'list',
        model: body.model,
        data: (body.input ?? []).map((text, index) => ({ object: 'embedding', index, embedding: rawVector(text, dims) })),
        usage: { prompt_tokens: 1, total_tokens: 1 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  seen = [];
  script = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function expectVectors(vectors: Float32Array[], texts: string[]): void {
  expect(vectors).toHaveLength(texts.length);
  vectors.forEach((vector, i) => {
    expect(vector).toBeInstanceOf(Float32Array);
    const expected = unit(rawVector(texts[i]!, vector.length));
    for (const [j, x] of expected.entries()) expect(vector[j]).toBeCloseTo(x, 6);
  });
}

describe('embeddingsEndpoint', () => {
  it('appends /v1/embeddings to a bare URL and /embeddings to an API base', () => {
    expect(embeddingsEndpoint('http://h:1')).toBe('http://h:1/v1/embeddings');
    expect(embeddingsEndpoint('http://h:1/')).toBe('http://h:1/v1/embeddings');
    expect(embeddingsEndpoint('https://api.openai.com/v1')).toBe('https://api.openai.com/v1/embeddings');
    expect(embeddingsEndpoint('https://api.openai.com/v1/')).toBe('https://api.openai.com/v1/embeddings');
    expect(embeddingsEndpoint('http://proxy/openai/v1')).toBe('http://proxy/openai/v1/embeddings');
    expect(embeddingsEndpoint('http://h/v1/embeddings')).toBe('http://h/v1/embeddings');
    expect(embeddingsEndpoint('http://h/custom/embeddings/')).toBe('http://h/custom/embeddings');
  });
});

describe('OpenAI-compatible embedder', () => {
  it('learns the dimensions from a probe at startup and embeds normalised vectors', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'test-model', apiKey: API_KEY });
    expect(embedder).toMatchObject({ kind: 'openai', model: 'test-model', dimensions: DIMS });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body.input).toEqual(['dimension probe']);
    const texts = ['how do I deploy', 'chocolate cake'];
    const vectors = await embedder.embed(texts);
    expectVectors(vectors, texts);
    for (const vector of vectors) expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
    expect(seen[1]).toMatchObject({ path: '/v1/embeddings', body: { model: 'test-model', input: texts } });
    expect(seen[1]!.body).not.toHaveProperty('dimensions');
    await embedder.close();
  });

  it('sends configured dimensions instead of probing', async () => {
    const embedder = await createOpenAiEmbedder({ url: `${base}/v1`, model: 'm', dimensions: 4 });
    expect(seen).toHaveLength(0);
    expect(embedder.dimensions).toBe(4);
    const [vector] = await embedder.embed(['short']);
    expect(vector!.length).toBe(4);
    expect(seen[0]!.body.dimensions).toBe(4);
  });

  it('sends the API key as a bearer token, and no authorization without one', async () => {
    const withKey = await createOpenAiEmbedder({ url: base, model: 'm', apiKey: API_KEY, dimensions: DIMS });
    await withKey.embed(['a']);
    const withoutKey = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS });
    await withoutKey.embed(['b']);
    expect(seen.map((s) => s.authorization)).toEqual([`Bearer ${API_KEY}`, undefined]);
  });

  it('splits inputs into batches of at most 96 and keeps input order', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS });
    const texts = Array.from({ length: 200 }, (_, i) => `text ${i}`);
    expectVectors(await embedder.embed(texts), texts);
    expect(seen.map((s) => s.body.input!.length)).toEqual([96, 96, 8]);
    expect(seen.flatMap((s) => s.body.input)).toEqual(texts);
  });

  it('orders results by their index when the server shuffles them', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS });
    script.push((_req, res, body) =>
      answer(res, 200, {
        data: body.input!.map((text, index) => ({ index, embedding: rawVector(text) })).reverse(),
      }),
    );
    const texts = ['first', 'second', 'third'];
    expectVectors(await embedder.embed(texts), texts);
  });

  it('makes no request for an empty list and sends blank texts as one space', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS });
    expect(await embedder.embed([])).toEqual([]);
    expect(seen).toHaveLength(0);
    await embedder.embed(['', ' \n']);
    expect(seen[0]!.body.input).toEqual([' ', ' ']);
  });

  it('cuts texts at maxInputChars', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS, maxInputChars: 10 });
    await embedder.embed(['0123456789abcdef']);
    expect(seen[0]!.body.input).toEqual(['0123456789']);
  });

  it('retries a 429 after the Retry-After delay', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS });
    script.push((_req, res) => answer(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '1' }));
    expectVectors(await embedder.embed(['patient']), ['patient']);
    expect(seen).toHaveLength(2);
    // A lower bound only: waiting longer is allowed, retrying early is not.
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('fails at once when the server asks for a longer wait than the client allows', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS, maxRetryDelayMs: 5000 });
    script.push((_req, res) => answer(res, 429, { error: { message: 'quota' } }, { 'retry-after': '120' }));
    const error = await embedder.embed(['x']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingsError);
    expect((error as EmbeddingsError).status).toBe(429);
    expect((error as Error).message).toMatch(/answered 429 and asked to retry after 120 s/);
    expect(seen).toHaveLength(1);
  });

  it('retries 5xx a bounded number of times, then surfaces status and message', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS, maxRetries: 2 });
    for (let i = 0; i < 3; i++) {
      script.push((_req, res) => answer(res, 500, { error: { message: 'model exploded' } }, { 'retry-after': '0' }));
    }
    const error = await embedder.embed(['x']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddingsError);
    expect((error as EmbeddingsError).status).toBe(500);
    expect((error as Error).message).toBe(`embeddings endpoint ${base}/v1/embeddings answered 500 (after 3 attempts): model exploded`);
    expect(seen).toHaveLength(3);
  });

  it('recovers when a 5xx is followed by success', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS });
    script.push((_req, res) => answer(res, 503, 'upstream busy', { 'retry-after': '0', 'content-type': 'text/plain' }));
    expectVectors(await embedder.embed(['again']), ['again']);
    expect(seen).toHaveLength(2);
  });

  it('does not retry other client errors', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', apiKey: API_KEY, dimensions: DIMS });
    script.push((_req, res) => answer(res, 401, { error: { message: 'Incorrect API key provided' } }));
    const error = await embedder.embed(['x']).catch((e: unknown) => e);
    expect((error as EmbeddingsError).status).toBe(401);
    expect((error as Error).message).toMatch(/answered 401: Incorrect API key provided$/);
    expect((error as Error).message).not.toContain(API_KEY);
    expect(seen).toHaveLength(1);
  });

  it('reports a body that is not JSON', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS });
    script.push((_req, res) => answer(res, 200, '{"data": [ truncated'));
    await expect(embedder.embed(['x'])).rejects.toThrow(/answered 200 with a body that is not JSON: "\{\\"data\\": \[ truncated"/);
  });

  it('reports answers of the wrong shape', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS });
    const cases: [unknown, RegExp][] = [
      [{ object: 'list' }, /no "data" array/],
      [null, /no "data" array/],
      [{ data: [] }, /0 embeddings for 1 inputs/],
      [{ data: [{ index: 0, embedding: 'AAAA' }] }, /embedding is not an array of numbers/],
      [{ data: [{ index: 0, embedding: [1, 'x', 0, 0, 0, 0, 0, 0] }] }, /embedding\[1\] is not a finite number/],
      [{ data: [{ index: 0, embedding: [1, 2, 3] }] }, /has 3 dimensions, expected 8/],
      [{ data: [{ index: 0, embedding: new Array(DIMS).fill(0) }] }, /zero vector/],
      [{ data: [{ index: 5, embedding: rawVector('x') }] }, /index is missing, out of range or repeated/],
    ];
    for (const [body, message] of cases) {
      script.push((_req, res) => answer(res, 200, body));
      await expect(embedder.embed(['x'])).rejects.toThrow(message);
    }
    script.push((_req, res) =>
      answer(res, 200, {
        data: [
          { index: 0, embedding: rawVector('a') },
          { index: 0, embedding: rawVector('b') },
        ],
      }),
    );
    await expect(embedder.embed(['a', 'b'])).rejects.toThrow(/repeated/);
  });

  it('gives up on a server that does not answer within the timeout', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS, timeoutMs: 200, maxRetries: 0 });
    script.push(() => {
      // Never answers; closeAllConnections in afterAll ends the socket.
    });
    await expect(embedder.embed(['x'])).rejects.toThrow(/failed after 1 attempts: no answer within 200 ms/);
  });

  it('reports a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const embedder = await createOpenAiEmbedder({ url: `http://127.0.0.1:${port}`, model: 'm', dimensions: DIMS, maxRetries: 1 });
    await expect(embedder.embed(['x'])).rejects.toThrow(/failed after 2 attempts: .*ECONNREFUSED/);
  });

  it('fails startup clearly when the probe fails', async () => {
    script.push((_req, res) => answer(res, 404, { error: { message: 'The model `nope` does not exist' } }));
    await expect(createOpenAiEmbedder({ url: base, model: 'nope' })).rejects.toThrow(
      /could not learn the embedding dimensions: .*answered 404: The model `nope` does not exist/,
    );
  });

  it('rejects calls after close, including one waiting to retry', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS });
    script.push((_req, res) => answer(res, 429, {}, { 'retry-after': '15' }));
    const waiting = embedder.embed(['x']).then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await embedder.close();
    expect(await waiting).toMatch(/closed/);
    await expect(embedder.embed(['y'])).rejects.toThrow(/closed/);
  });

  it('rejects inputs that are not strings', async () => {
    const embedder = await createOpenAiEmbedder({ url: base, model: 'm', dimensions: DIMS });
    await expect(embedder.embed([{} as unknown as string])).rejects.toThrow(/texts\[0\] is not a string/);
    expect(seen).toHaveLength(0);
  });

  it('is what createEmbedder builds when EMBEDDINGS_URL is set', async () => {
    const config = readStorageConfig(
      { EMBEDDINGS_URL: `${base}/v1`, EMBEDDINGS_MODEL: 'configured-model', EMBEDDINGS_API_KEY: API_KEY },
      2,
    );
    const embedder = await createEmbedder(config.embeddings);
    expect(embedder).toMatchObject({ kind: 'openai', model: 'configured-model', dimensions: DIMS });
    expect(seen[0]).toMatchObject({ authorization: `Bearer ${API_KEY}`, body: { model: 'configured-model' } });
    await embedder.close();
  });
});
