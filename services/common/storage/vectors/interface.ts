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

/** Equality on payload fields; an array condition matches a point whose array holds every value. */
export type VectorFilter = Record<string, string | number | boolean | string[]>;

export interface VectorMatch {
  id: string;
  /** Cosine similarity, -1..1. */
  score: number;
  payload: Record<string, PayloadValue>;
}

export interface VectorSearchOptions {
  limit: number;
  filter?: VectorFilter;
}

export interface VectorStore {
  readonly kind: 'embedded' | 'qdrant';
  readonly dimensions: number;
  upsert(points: VectorPoint[]): Promise<void>;
  delete(organizationId: string, ids: string[]): Promise<void>;
  search(
    organizationId: string,
    vector: Float32Array | number[],
    options: VectorSearchOptions,
  ): Promise<VectorMatch[]>;
  count(organizationId: string, filter?: VectorFilter): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
