// The production records store: MongoDB through the official driver. Documents are stored as
// they are (`_id` is MongoDB's `_id`); a document with `expiresAt` also carries the same instant
// as a Date in a hidden field, for a TTL index that deletes it eventually. MongoDB's TTL monitor
// runs about once a minute, so every read also filters out expired documents itself.
//
// Atomicity comes from single-document operations: compare-and-set is a filtered replaceOne or
// an insertOne that fails on the duplicate `_id`, `take` is findOneAndDelete, and `increment`
// is a findOneAndUpdate on the live document, falling back to replacing an expired one or
// inserting a new one (each step conditional, retried until one of them applies).

import {
  MongoClient,
  MongoError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerError,
  MongoServerSelectionError,
  type Collection,
  type Db,
  type Document,
} from 'mongodb';
import { StoreUnavailableError } from '../unavailable.ts';

import { InvalidRecordError, StoreClosedError, UniqueViolationError } from './errors.ts';
import type { Filter, FindOptions, IndexSpec, PutOptions, RecordCollection, RecordDoc, RecordStore, Scalar } from './interface.ts';
import {
  HIDDEN_EXPIRY_FIELD,
  checkCollectionName,
  checkDoc,
  checkId,
  checkIds,
  checkIndexSpecs,
  newCounterDoc,
  parseExpect,
  parseFilter,
  parseFindOptions,
  parseIncrement,
  type Clause,
  type ParsedIncrement,
} from './validate.ts';

export interface MongoRecordStoreOptions {
  url: string;
  database: string;
  /**
   * How long an operation waits for a reachable server before failing with StoreUnavailableError;
   * also the length of one connection attempt at start. Default 5 000 ms.
   */
  serverSelectionTimeoutMs?: number;
  /** Clock, for tests. Default Date.now. */
  now?: () => number;
}

export interface MongoRecordStore extends RecordStore {
  readonly kind: 'mongodb';
}

const DUPLICATE_KEY = 11000;
const TYPE_MISMATCH = 14;
const PATH_NOT_VIABLE = 28;
const INCREMENT_ATTEMPTS = 100;
const TTL_INDEX_NAME = 'mindgate_expires_ttl';

/** Server error codes of a node that is stepping down, shutting down or not primary. */
const TRANSIENT_CODES = new Set([91, 189, 10107, 11600, 11602, 13435, 13436]);

/** Whether `error` says MongoDB is unreachable or failing over (retryable), not that the request is wrong. */
function isUnavailable(error: unknown): boolean {
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError || error instanceof MongoNotConnectedError) {
    return true;
  }
  if (error instanceof MongoServerError && TRANSIENT_CODES.has(Number(error.code))) return true;
  return error instanceof MongoError && error.hasErrorLabel('RetryableWriteError');
}

/** The hosts of a connection string, without credentials or options, for logs and errors. */
export function mongoHosts(url: string): string {
  return url
    .replace(/^[a-z+]+:\/\//i, '')
    .replace(/^[^@/]*@/, '')
    .split(/[/?]/)[0]!;
}

function unavailable(error: unknown, hosts: string): unknown {
  if (!isUnavailable(error)) return error;
  return new StoreUnavailableError('records', `MongoDB at ${hosts}: ${(error as Error).message}`, { cause: error });
}

/** The methods of the records port, which guarded() wraps. */
const COLLECTION_METHODS = ['put', 'get', 'getMany', 'find', 'count', 'delete', 'take', 'deleteMany', 'increment'] as const;

/**
 * Every method of `handle` with MongoDB's connection failures turned into StoreUnavailableError
 * (the caller answers UNAVAILABLE at once instead of an internal error).
 */
function guarded(handle: RecordCollection<RecordDoc>, hosts: string): RecordCollection<RecordDoc> {
  const out = {} as Record<string, unknown>;
  for (const name of COLLECTION_METHODS) {
    const method = handle[name] as (...a: unknown[]) => Promise<unknown>;
    out[name] = (...args: unknown[]) =>
      method.apply(handle, args).catch((error: unknown) => {
        throw unavailable(error, hosts);
      });
  }
  return out as unknown as RecordCollection<RecordDoc>;
}

function isDuplicateKey(error: unknown): error is MongoServerError {
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
}

/** Whether a duplicate-key error is about `_id` (and not a secondary unique index). */
function isDuplicateId(error: MongoServerError): boolean {
  const pattern = (error as { keyPattern?: Record<string, unknown> }).keyPattern;
  if (pattern) return Object.keys(pattern).length === 1 && '_id' in pattern;
  return /index: _id_ /.test(error.message);
}

function violatedIndexName(error: MongoServerError): string | undefined {
  return /index: (\S+) dup key/.exec(error.message)?.[1];
}

/** The MongoDB index name for a spec, the same the server would choose by default. */
function indexName(spec: IndexSpec): string {
  return spec.fields.map((field) => `${field}_1`).join('_');
}

/** Clauses (already vetted) to a MongoDB filter, with only the operators the port allows. */
function toMongoFilter(clauses: Clause[], live: Document): Document {
  const filter: Document = {};
  let needsAnd = false;
  for (const clause of clauses) {
    if (clause.path === 'expiresAt') needsAnd = true;
    if (clause.operations.length === 1 && clause.operations[0]!.op === 'eq') {
      filter[clause.path] = clause.operations[0]!.value;
      continue;
    }
    const condition: Document = {};
    for (const operation of clause.operations) {
      if (operation.op === 'eq') throw new Error('unreachable: equality is never combined with operators');
      condition[`$${operation.op}`] = 'values' in operation ? operation.values : operation.value;
    }
    filter[clause.path] = condition;
  }
  if (needsAnd) return { $and: [filter, live] };
  return { ...filter, ...live };
}

/** A document as MongoDB holds it: the record plus the hidden TTL field. */
type StoredDoc = Document & { _id: string };

function toStored(doc: RecordDoc): StoredDoc {
  const stored: StoredDoc = { ...doc };
  if (typeof doc.expiresAt === 'number') stored[HIDDEN_EXPIRY_FIELD] = new Date(doc.expiresAt);
  return stored;
}

function fromStored<T extends RecordDoc>(stored: StoredDoc): T {
  const { [HIDDEN_EXPIRY_FIELD]: _hidden, ...doc } = stored;
  return doc as T;
}

export async function createMongoRecordStore(options: MongoRecordStoreOptions): Promise<MongoRecordStore> {
  const hosts = mongoHosts(options.url);
  const client = new MongoClient(options.url, {
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMs ?? 5_000,
    appName: 'mindgate',
    // Like JSON (and the embedded store): a field set to undefined is left out, not stored as null.
    ignoreUndefined: true,
  });
  try {
    await client.connect();
  } catch (error) {
    await client.close().catch(() => undefined);
    throw unavailable(error, hosts);
  }
  const db: Db = client.db(options.database);
  const state: StoreState = { closed: false, now: options.now ?? Date.now };
  const handles = new Map<string, { collection: MongoCollection; handle: RecordCollection<RecordDoc> }>();

  return {
    kind: 'mongodb',
    collection<T extends RecordDoc = RecordDoc>(name: string, collectionOptions?: { indexes?: IndexSpec[] }) {
      if (state.closed) throw new StoreClosedError();
      checkCollectionName(name);
      const indexes = checkIndexSpecs(collectionOptions?.indexes);
      let entry = handles.get(name);
      if (!entry) {
        const collection = new MongoCollection(db.collection<StoredDoc>(name), name, state);
        entry = { collection, handle: guarded(collection, hosts) };
        handles.set(name, entry);
      }
      entry.collection.ensure(indexes);
      return entry.handle as unknown as RecordCollection<T>;
    },
    async ping() {
      if (state.closed) throw new StoreClosedError();
      try {
        await db.command({ ping: 1 });
      } catch (error) {
        throw unavailable(error, hosts);
      }
    },
    async close() {
      if (state.closed) return;
      state.closed = true;
      await client.close();
    },
  };
}

/** What every collection of a store shares. */
interface StoreState {
  closed: boolean;
  now: () => number;
}

function live(at: number): Document {
  // Matches documents without expiresAt too. Documents only ever hold numbers there.
  return { expiresAt: { $not: { $lte: at } } };
}

class MongoCollection implements RecordCollection<RecordDoc> {
  private readonly coll: Collection<StoredDoc>;
  private readonly name: string;
  private readonly state: StoreState;
  private readonly uniqueIndexFields = new Map<string, string[]>();
  /**
   * Index builds run in the background; every operation awaits them and sees their failure.
   * Builds that failed because MongoDB was unreachable run again on the next operation, so a
   * collection first used during an outage works once MongoDB is back.
   */
  private ready: Promise<unknown> = Promise.resolve();
  private readonly builds: (() => Promise<unknown>)[] = [];

  constructor(coll: Collection<StoredDoc>, name: string, state: StoreState) {
    this.coll = coll;
    this.name = name;
    this.state = state;
    this.track(() => coll.createIndex({ [HIDDEN_EXPIRY_FIELD]: 1 }, { name: TTL_INDEX_NAME, expireAfterSeconds: 0 }));
  }

  private track(build: () => Promise<unknown>): void {
    this.builds.push(build);
    this.ready = Promise.all([this.ready, build()]);
    this.ready.catch(() => undefined);
  }

  ensure(indexes: IndexSpec[]): void {
    if (indexes.length === 0) return;
    this.track(() => Promise.all(indexes.map((spec) => this.createIndex(spec))));
  }

  private createIndex(spec: IndexSpec): Promise<unknown> {
    const coll = this.coll;
    const keys: Document = {};
    for (const field of spec.fields) keys[field] = 1;
    if (!spec.unique) return coll.createIndex(keys, { name: indexName(spec) });
    this.uniqueIndexFields.set(`${indexName(spec)}_unique`, spec.fields);
    // Documents missing an indexed field are not constrained, as in the embedded store.
    const partialFilterExpression: Document = {};
    for (const field of spec.fields) partialFilterExpression[field] = { $exists: true };
    const create = () => coll.createIndex(keys, { name: `${indexName(spec)}_unique`, unique: true, partialFilterExpression });
    return create().catch(async (error: unknown) => {
      if (!isDuplicateKey(error)) throw error;
      // Expired documents may hold the duplicates: remove them and try once more.
      await coll.deleteMany({ expiresAt: { $lte: this.state.now() } });
      return create().catch((again: unknown) => {
        throw isDuplicateKey(again) ? new UniqueViolationError(this.name, undefined, spec.fields) : again;
      });
    });
  }

  private async prepared(): Promise<void> {
    if (this.state.closed) throw new StoreClosedError();
    try {
      await this.ready;
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      this.ready = Promise.all(this.builds.map((build) => build()));
      this.ready.catch(() => undefined);
      await this.ready;
    }
  }

  private toUniqueError(error: MongoServerError, id: string): UniqueViolationError {
    const index = violatedIndexName(error);
    return new UniqueViolationError(this.name, id, index ? this.uniqueIndexFields.get(index) : undefined);
  }

  /**
   * Runs a write. On a duplicate key in a secondary unique index, deletes the collection's
   * expired documents (the TTL monitor may not have yet; they count as absent) and tries
   * once more. A duplicate `_id` goes back to the caller.
   */
  private async write<T>(id: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (!isDuplicateKey(error) || isDuplicateId(error)) throw error;
      const purged = await this.coll.deleteMany({ expiresAt: { $lte: this.state.now() } });
      if (purged.deletedCount === 0) throw this.toUniqueError(error, id);
      try {
        return await run();
      } catch (again) {
        if (isDuplicateKey(again) && !isDuplicateId(again)) throw this.toUniqueError(again, id);
        throw again;
      }
    }
  }

  async put(doc: RecordDoc, putOptions?: PutOptions): Promise<boolean> {
    const { id } = checkDoc(doc);
    const expect = parseExpect(putOptions?.expect);
    await this.prepared();
    const stored = toStored(doc);
    if (expect === undefined) return this.upsert(id, stored);
    if (expect === null) return this.insertIfAbsent(id, stored);
    const filter = toMongoFilter(expect, live(this.state.now()));
    const result = await this.write(id, () => this.coll.replaceOne({ ...filter, _id: id }, stored));
    return result.matchedCount === 1;
  }

  private async upsert(id: string, stored: StoredDoc): Promise<boolean> {
    // Two upserts of one new _id can race to insert it; the loser retries as an update.
    for (let attempt = 0; ; attempt++) {
      try {
        await this.write(id, () => this.coll.replaceOne({ _id: id }, stored, { upsert: true }));
        return true;
      } catch (error) {
        if (!(isDuplicateKey(error) && isDuplicateId(error)) || attempt >= 5) throw error;
      }
    }
  }

  private async insertIfAbsent(id: string, stored: StoredDoc): Promise<boolean> {
    try {
      await this.write(id, () => this.coll.insertOne({ ...stored }));
      return true;
    } catch (error) {
      if (!(isDuplicateKey(error) && isDuplicateId(error))) throw error;
    }
    // The _id is taken: replace it only if the stored document has expired.
    const replaced = await this.write(id, () => this.coll.replaceOne({ _id: id, expiresAt: { $lte: this.state.now() } }, stored));
    return replaced.matchedCount === 1;
  }

  async get(id: string): Promise<RecordDoc | undefined> {
    checkId(id);
    await this.prepared();
    const found = await this.coll.findOne({ _id: id, ...live(this.state.now()) });
    return found ? fromStored(found) : undefined;
  }

  async getMany(ids: string[]): Promise<RecordDoc[]> {
    const unique = [...new Set(checkIds(ids))];
    if (unique.length === 0) return [];
    await this.prepared();
    const found = new Map<string, RecordDoc>();
    for (const stored of await this.coll.find({ _id: { $in: unique }, ...live(this.state.now()) }).toArray()) {
      const doc = fromStored(stored);
      found.set(doc._id, doc);
    }
    return unique.flatMap((id) => {
      const doc = found.get(id);
      return doc ? [doc] : [];
    });
  }

  async find(filter: Filter, findOptions?: FindOptions): Promise<RecordDoc[]> {
    const clauses = parseFilter(filter);
    const parsed = parseFindOptions(findOptions);
    await this.prepared();
    if (parsed.limit === 0) return [];
    const sort: Document = {};
    if (parsed.sort) sort[parsed.sort.field] = parsed.sort.direction === 'desc' ? -1 : 1;
    if (parsed.sort?.field !== '_id') sort._id = 1;
    let cursor = this.coll.find(toMongoFilter(clauses, live(this.state.now()))).sort(sort);
    if (parsed.skip > 0) cursor = cursor.skip(parsed.skip);
    if (parsed.limit !== undefined) cursor = cursor.limit(parsed.limit);
    return (await cursor.toArray()).map((stored) => fromStored(stored));
  }

  async count(filter: Filter): Promise<number> {
    const clauses = parseFilter(filter);
    await this.prepared();
    return this.coll.countDocuments(toMongoFilter(clauses, live(this.state.now())));
  }

  async delete(id: string): Promise<boolean> {
    checkId(id);
    await this.prepared();
    // Removes an expired document too, but reports only a live one.
    const removed = await this.coll.findOneAndDelete({ _id: id });
    return removed !== null && !(typeof removed.expiresAt === 'number' && removed.expiresAt <= this.state.now());
  }

  async take(id: string): Promise<RecordDoc | undefined> {
    checkId(id);
    await this.prepared();
    const taken = await this.coll.findOneAndDelete({ _id: id, ...live(this.state.now()) });
    return taken ? fromStored(taken) : undefined;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const clauses = parseFilter(filter);
    await this.prepared();
    const result = await this.coll.deleteMany(toMongoFilter(clauses, live(this.state.now())));
    return result.deletedCount;
  }

  async increment(
    id: string,
    field: string,
    by: number,
    init: { expiresAt?: number; fields?: Record<string, Scalar> },
  ): Promise<RecordDoc> {
    const parsed = parseIncrement(id, field, by, init);
    await this.prepared();
    const fresh = newCounterDoc(parsed);
    for (let attempt = 0; attempt < INCREMENT_ATTEMPTS; attempt++) {
      try {
        return await this.incrementOnce(parsed, fresh);
      } catch (error) {
        if (isDuplicateKey(error) && isDuplicateId(error)) continue;
        throw this.incrementError(error, parsed.field, parsed.id);
      }
    }
    throw new Error(`increment of "${parsed.id}" in "${this.name}" did not settle after ${INCREMENT_ATTEMPTS} attempts`);
  }

  /** One round of increment; a duplicate `_id` (another caller created it first) means another round. */
  private async incrementOnce(parsed: ParsedIncrement, fresh: RecordDoc): Promise<RecordDoc> {
    const coll = this.coll;
    const at = this.state.now();
    // 1. A live document: add in place.
    const updated = await coll.findOneAndUpdate(
      { _id: parsed.id, ...live(at) },
      { $inc: { [parsed.field]: parsed.by } },
      { returnDocument: 'after' },
    );
    if (updated) return fromStored(updated);
    // 2. An expired one: start a new window, unless another caller already has.
    const replaced = await this.write(parsed.id, () =>
      coll.findOneAndReplace({ _id: parsed.id, expiresAt: { $lte: at } }, toStored(fresh), {
        returnDocument: 'after',
      }),
    );
    if (replaced) return fromStored(replaced);
    // 3. None: create it, unless another caller just did (then go round again).
    await this.write(parsed.id, () => coll.insertOne(toStored(fresh)));
    return { ...fresh };
  }

  private incrementError(error: unknown, field: string, id: string): unknown {
    if (error instanceof MongoServerError && (error.code === TYPE_MISMATCH || error.code === PATH_NOT_VIABLE)) {
      return new InvalidRecordError(`cannot increment "${field}" of record "${id}" in "${this.name}": it is not a number`);
    }
    return error;
  }
}
