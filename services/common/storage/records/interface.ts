// The records port: a small document store that the embedded SQLite implementation and the
// MongoDB one both satisfy. It is deliberately narrow, so that every implementation can honour
// it exactly and the contract suite in test/contract/ can prove it.
//
// Errors (errors.ts): malformed filters, options, `expect` values, index specs and collection
// names reject with InvalidFilterError; documents that are not plain JSON (or use reserved
// names), bad ids, and `increment` of a non-numeric field reject with InvalidRecordError; a
// unique-index clash rejects with UniqueViolationError; use after close with StoreClosedError.
// Anything else is an infrastructure fault (store unreachable, disk full).

/**
 * A stored document. `_id` is a non-empty string (at most 1024 characters), unique within its
 * collection. Documents are plain JSON: strings, finite numbers, booleans, null, arrays and
 * plain objects (no Date, Buffer, bigint, NaN); a field set to `undefined` is left out. Field
 * names must be non-empty and must not start with "$" or contain "."; `_expiresAtDate` is
 * reserved. Reads return fresh copies.
 */
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
 * A field condition, with MongoDB's semantics. A bare scalar means equality; for an array
 * field, equality means "the array contains this value". Comparisons are type-strict: 1 is not
 * "1" nor true, and a range with a number bound only matches numbers (a string bound only
 * strings). `null` matches null and missing fields; `$ne` also matches missing fields and
 * arrays without the value; ranges and `$in` on an array match when any element does; `$all`
 * needs every value in the array (an empty `$all` or `$in` matches nothing). Operators may be
 * combined in one object (all must hold); any other operator is refused.
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

/**
 * Conditions on fields, all must hold. Dot paths reach into nested objects ("meta.lang"); they
 * do not step into arrays, and all-digit path segments are refused.
 */
export type Filter = Record<string, Condition>;

export interface FindOptions {
  /**
   * Field to sort by and direction; ties are broken by `_id` ascending. Without it, results
   * come in `_id` order. Documents missing the field sort first ascending, last descending;
   * sort on fields that hold one type (across types the implementations may order differently).
   */
  sort?: { field: string; direction: 'asc' | 'desc' };
  /** At most this many documents; 0 returns none. */
  limit?: number;
  /** Skip this many matches (for simple pagination). */
  skip?: number;
}

export interface PutOptions {
  /**
   * Compare-and-set. `null`: the write succeeds only if no live document has this `_id`
   * (insert-if-absent, the basis of single-use codes and replay caches). An object: the write
   * succeeds only if the stored document exists and equals these field values (optimistic
   * concurrency on a version field; each value is compared like a filter equality). On failure
   * `put` returns false and changes nothing.
   */
  expect?: null | Record<string, Scalar>;
}

export interface IndexSpec {
  /**
   * Fields of the index, in order. One of them may hold arrays: the index then has a key per
   * element, so that "the array contains", `$in` and `$all` on it are lookups (MongoDB's multikey
   * index; the embedded store keeps a side table, see sqlite-multikey.ts). The fields before it
   * narrow those lookups when the filter has an equality on each. A unique index must not name a
   * field that holds arrays (the stores would not agree on what is a duplicate).
   */
  fields: string[];
  /**
   * A `put` that would give two live documents the same values for all the fields rejects
   * with UniqueViolationError. Expired documents do not hold their key, and documents missing
   * one of the fields are not constrained.
   */
  unique?: boolean;
}

export interface RecordCollection<T extends RecordDoc = RecordDoc> {
  /** Stores the document whole (insert or replace). Returns false only when `expect` failed. */
  put(doc: T, options?: PutOptions): Promise<boolean>;
  get(id: string): Promise<T | undefined>;
  /** The live documents among `ids`, in the order of `ids`, each once. */
  getMany(ids: string[]): Promise<T[]>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  count(filter: Filter): Promise<number>;
  /** Deletes the document (an expired one too); returns whether a live one existed. */
  delete(id: string): Promise<boolean>;
  /**
   * Deletes and returns the document in one atomic step, so that exactly one of several
   * concurrent callers gets it (single-use consumption across replicas).
   */
  take(id: string): Promise<T | undefined>;
  /** Deletes the live documents that match; returns how many. */
  deleteMany(filter: Filter): Promise<number>;
  /**
   * Atomically adds `by` to the numeric `field` (a dot path) of document `id`, creating the
   * document (with `init` fields, `field` starting at 0, and `expiresAt`) when it is absent or
   * expired. A live document keeps its fields and its `expiresAt` (a fixed window); a missing
   * field starts at 0, a non-numeric one rejects with InvalidRecordError. Returns the document
   * after this very increment, so concurrent callers see distinct counts. This is what
   * rate-limit counters need.
   */
  increment(id: string, field: string, by: number, init: { expiresAt?: number; fields?: Record<string, Scalar> }): Promise<T>;
}

export interface RecordStore {
  readonly kind: 'embedded' | 'mongodb';
  /**
   * Opens (creating as needed) a collection with its indexes. Cheap to call repeatedly with
   * the same name; callers usually keep the handle. Names start with a letter and hold at most
   * 64 letters, digits, "_" or "-"; case matters. Indexes are only ever added.
   */
  collection<T extends RecordDoc = RecordDoc>(name: string, options?: { indexes?: IndexSpec[] }): RecordCollection<T>;
  /** Round-trips to the store; throws when it is unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
