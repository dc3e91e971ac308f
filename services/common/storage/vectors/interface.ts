// The vectors port: nearest-neighbour search over embeddings, partitioned by organization.
// Every point carries its organization and every query is confined to one organization, so
// tenant isolation does not depend on callers remembering a filter.

export type PayloadValue = string | number | boolean | string[];

export interface VectorPoint {
  /** Unique within the organization (for example `knowledge/deploy-steps`). */
  id: string;
  organizationId: string;
  vector: Float32Array | number[];
  /** Flat payload used by filters and returned with matches. */
  payload: Record<string, PayloadValue>;
}

/**
 * Equality on payload fields; an array condition matches a point whose array holds every value.
 * A scalar condition on an array field matches when the array holds it. Types compare strictly
 * ("1" never matches 1); a missing field never matches; `{}` matches every point.
 */
export type VectorFilter = Record<string, string | number | boolean | string[]>;

export interface VectorMatch {
  id: string;
  /** Cosine similarity, -1..1. */
  score: number;
  payload: Record<string, PayloadValue>;
}

/** A stored point without its vector: what `retrieve` and `scan` return. */
export interface StoredPoint {
  organizationId: string;
  id: string;
  payload: Record<string, PayloadValue>;
}

export interface VectorScanPage {
  points: StoredPoint[];
  /** Pass as `after` for the next page; absent on the last page. */
  next?: string;
}

export interface VectorSearchOptions {
  limit: number;
  filter?: VectorFilter;
}

/**
 * Invalid input (a vector of the wrong length, a non-finite or zero vector, an empty id, a payload
 * key outside [A-Za-z0-9_-] or a value of another type, a limit outside 1..1000) is rejected with a
 * `VectorInputError` (validate.ts) before anything is written; a batch is all or nothing.
 */
export interface VectorStore {
  readonly kind: 'embedded' | 'qdrant';
  readonly dimensions: number;
  /** Inserts, or replaces the vector and the whole payload of an existing (organization, id). */
  upsert(points: VectorPoint[]): Promise<void>;
  /** Ids the organization does not hold are ignored. */
  delete(organizationId: string, ids: string[]): Promise<void>;
  /** Deletes every point of the organization (its deletion); other organizations keep theirs. */
  deleteOrganization(organizationId: string): Promise<void>;
  /**
   * The `limit` most similar points of the organization that pass the filter, best first, with
   * exact cosine scores. Large organizations may be searched approximately (HNSW: Qdrant's
   * index, the embedded store's past 20,000 points), so a near neighbour can be missed.
   */
  search(organizationId: string, vector: Float32Array | number[], options: VectorSearchOptions): Promise<VectorMatch[]>;
  count(organizationId: string, filter?: VectorFilter): Promise<number>;
  /** The points among `ids` that the organization holds (any order); used to verify writes. */
  retrieve(organizationId: string, ids: string[]): Promise<StoredPoint[]>;
  /**
   * Every point of every organization, a page at a time (`limit` 1..1000), in a stable order;
   * `after` is the previous page's opaque `next`. For consistency checks, not for serving.
   */
  scan(options: { after?: string; limit: number }): Promise<VectorScanPage>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
