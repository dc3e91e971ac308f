// Query embeddings, remembered. Embedding a query is the largest share of a search's CPU (a
// model run in a worker thread, ~8-15 ms here, against ~1 ms for BM25 at 100,000 memories), and
// agents sharing an organization's memory ask the same questions again: the same task text at
// the start of every run, the same lookups. A vector depends only on the text and the model,
// which does not change while the process runs, so a remembered one is never stale (and equal to a
// new run's to about the seventh digit: the embedder pool batches concurrent texts, and a text
// embedded in a batch differs from one embedded alone in its last bits).
import type { Embedder } from '../../common/embeddings/interface.ts';

/** Remembered queries: 2,000 vectors of 512 floats are 4 MB. */
const CAPACITY = 2_000;

export class QueryEmbeddings {
  private readonly embedder: Embedder;
  private readonly capacity: number;
  /** Insertion order is recency order: a hit is moved to the end. */
  private readonly cache = new Map<string, Promise<Float32Array>>();

  constructor(embedder: Embedder, capacity = CAPACITY) {
    this.embedder = embedder;
    this.capacity = capacity;
  }

  /** The query's vector; concurrent calls for one text share one model run. */
  embed(text: string): Promise<Float32Array> {
    const held = this.cache.get(text);
    if (held) {
      this.cache.delete(text);
      this.cache.set(text, held);
      return held;
    }
    const pending = this.embedder.embed([text]).then((v) => v[0]!);
    this.cache.set(text, pending);
    // A failed run is not remembered: the next call tries again.
    pending.catch(() => this.cache.delete(text));
    if (this.cache.size > this.capacity) this.cache.delete(this.cache.keys().next().value!);
    return pending;
  }
}
