// A store that does not answer (MongoDB, Qdrant or the embeddings endpoint unreachable, timing
// out or failing over) is a retryable condition, never the caller's fault: the adapters throw
// this, and the services answer UNAVAILABLE (services/common/rpc/interceptors.ts).

export type StoreName = 'records' | 'vectors' | 'embeddings';

export class StoreUnavailableError extends Error {
  readonly store: StoreName;
  constructor(store: StoreName, detail: string, options?: ErrorOptions) {
    super(`the ${store} store is unavailable: ${detail}`, options);
    this.name = 'StoreUnavailableError';
    this.store = store;
  }
}

/** The StoreUnavailableError in `err`'s cause chain, if any (adapters and handlers wrap errors). */
export function storeUnavailableIn(err: unknown): StoreUnavailableError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof StoreUnavailableError) return e;
  }
  return undefined;
}
