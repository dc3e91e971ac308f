// The records port: a small document store that the embedded SQLite implementation and the
// MongoDB one both satisfy. It is deliberately narrow, so that every implementation can honour
// it exactly and the contract suite in test/contract/ can prove it.

/** A stored document. `_id` is unique within its collection. */
export interface RecordDoc {
  _id: string;
  /**
   * Epoch milliseconds after which the document is gone: reads never return it and it is
   * eventually deleted. Used for replay caches, sessions and rate-limit windows.
   */
  expiresAt?: number;
  [field: string]: unknown;
}

/** A scalar a filter can compare against. */
export type Scalar = string | number | boolean | null;

/**
 * A field condition. A bare scalar means equality; for an array field, equality means "the
 * array contains this value" (as in MongoDB).
 */
export type Condition =
  | Scalar
  | { $in: Scalar[] }
  | { $ne: Scalar }
  | { $gt: number | string }
  | { $gte: number | string }
  | { $lt: number | string }
  | { $lte: number | string }
  | { $gte: number | string; $lt: number | string }
  | { $all: Scalar[] }
  | { $exists: boolean };

/** Conditions on top-level fields (dot paths into nested objects are allowed), all must hold. */
export type Filter = Record<string, Condition>;

export interface FindOptions {
  /** Field to sort by and direction; ties are broken by `_id` ascending. */
  sort?: { field: string; direction: 'asc' | 'desc' };
  limit?: number;
  /** Skip this many matches (for simple pagination). */
  skip?: number;
}

export interface PutOptions {
  /**
   * Compare-and-set. `null`: the write succeeds only if no live document has this `_id`
   * (insert-if-absent, the basis of single-use codes and replay caches). An object: the write
   * succeeds only if the stored document exists and equals these field values (optimistic
   * concurrency on a version field). On failure `put` returns false and changes nothing.
   */
  expect?: null | Record<string, Scalar>;
}

export interface IndexSpec {
  /** Fields of the index, in order. */
  fields: string[];
  unique?: boolean;
}

export interface RecordCollection<T extends RecordDoc = RecordDoc> {
  /** Stores the document whole (insert or replace). Returns false only when `expect` failed. */
  put(doc: T, options?: PutOptions): Promise<boolean>;
  get(id: string): Promise<T | undefined>;
  getMany(ids: string[]): Promise<T[]>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  count(filter: Filter): Promise<number>;
  /** Deletes the document; returns whether a live one existed. */
  delete(id: string): Promise<boolean>;
  /**
   * Deletes and returns the document in one atomic step, so that exactly one of several
   * concurrent callers gets it (single-use consumption across replicas).
   */
  take(id: string): Promise<T | undefined>;
  deleteMany(filter: Filter): Promise<number>;
  /**
   * Atomically adds `by` to the numeric `field` of document `id`, creating the document
   * (with `init` fields, `field` starting at 0, and `expiresAt`) when it is absent or expired.
   * Returns the document after the increment. This is what rate-limit counters need.
   */
  increment(
    id: string,
    field: string,
    by: number,
    init: { expiresAt?: number; fields?: Record<string, Scalar> },
  ): Promise<T>;
}

export interface RecordStore {
  readonly kind: 'embedded' | 'mongodb';
  /**
   * Opens (creating as needed) a collection with its indexes. Cheap to call repeatedly with
   * the same name; callers usually keep the handle.
   */
  collection<T extends RecordDoc = RecordDoc>(
    name: string,
    options?: { indexes?: IndexSpec[] },
  ): RecordCollection<T>;
  /** Round-trips to the store; throws when it is unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
