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
import type { Filter, FindOptions, IndexSpec, PutOptions, RecordCollection, RecordDoc, RecordStore } from './interface.ts';
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

/**
 * Every method of `handle` with MongoDB's connection failures turned into StoreUnavailableError
 * (the caller answers UNAVAILABLE at once instead of an internal error).
 */
function guarded<T extends object>(handle: T, hosts: string): T {
  const out = {} as Record<string, unknown>;
  for (const [name, method] of Object.entries(handle)) {
    out[name] = (...args: unknown[]) =>
      (method as (...a: unknown[]) => Promise<unknown>).apply(handle, args).catch((error: unknown) => {
        throw unavailable(error, hosts);
      });
  }
  return out as T;
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
  const now = options.now ?? Date.now;
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
  let closed = false;

  const handles = new Map<string, { handle: RecordCollection<RecordDoc>; ensure(indexes: IndexSpec[]): void }>();

  function live(at: number): Document {
    // Matches documents without expiresAt too. Documents only ever hold numbers there.
    return { expiresAt: { $not: { $lte: at } } };
  }

  function openCollection(name: string) {
    const coll: Collection<StoredDoc> = db.collection<StoredDoc>(name);
    const uniqueIndexFields = new Map<string, string[]>();
    // Index builds run in the background; every operation awaits them and sees their failure.
    // Builds that failed because MongoDB was unreachable run again on the next operation, so a
    // collection first used during an outage works once MongoDB is back.
    let ready: Promise<unknown> = Promise.resolve();
    const builds: (() => Promise<unknown>)[] = [];
    function track(build: () => Promise<unknown>): void {
      builds.push(build);
      ready = Promise.all([ready, build()]);
      ready.catch(() => undefined);
    }
    track(() => coll.createIndex({ [HIDDEN_EXPIRY_FIELD]: 1 }, { name: TTL_INDEX_NAME, expireAfterSeconds: 0 }));

    function ensure(indexes: IndexSpec[]): void {
      if (indexes.length === 0) return;
      track(() =>
        Promise.all(
          indexes.map((spec) => {
            const keys: Document = {};
            for (const field of spec.fields) keys[field] = 1;
            if (!spec.unique) return coll.createIndex(keys, { name: indexName(spec) });
            uniqueIndexFields.set(`${indexName(spec)}_unique`, spec.fields);
            // Documents missing an indexed field are not constrained, as in the embedded store.
            const partialFilterExpression: Document = {};
            for (const field of spec.fields) partialFilterExpression[field] = { $exists: true };
            const create = () => coll.createIndex(keys, { name: `${indexName(spec)}_unique`, unique: true, partialFilterExpression });
            return create().catch(async (error: unknown) => {
              if (!isDuplicateKey(error)) throw error;
              // Expired documents may hold the duplicates: remove them and try once more.
              await coll.deleteMany({ expiresAt: { $lte: now() } });
              return create().catch((again: unknown) => {
                throw isDuplicateKey(again) ? new UniqueViolationError(name, undefined, spec.fields) : again;
              });
            });
          }),
        ),
      );
    }

    async function prepared(): Promise<void> {
      if (closed) throw new StoreClosedError();
      try {
        await ready;
      } catch (error) {
        if (!isUnavailable(error)) throw error;
        ready = Promise.all(builds.map((build) => build()));
        ready.catch(() => undefined);
        await ready;
      }
    }

    function toUniqueError(error: MongoServerError, id: string): UniqueViolationError {
      const index = violatedIndexName(error);
      return new UniqueViolationError(name, id, index ? uniqueIndexFields.get(index) : undefined);
    }

    /**
     * Runs a write. On a duplicate key in a secondary unique index, deletes the collection's
     * expired documents (the TTL monitor may not have yet; they count as absent) and tries
     * once more. A duplicate `_id` goes back to the caller.
     */
    async function write<T>(id: string, run: () => Promise<T>): Promise<T> {
      try {
        return await run();
      } catch (error) {
        if (!isDuplicateKey(error) || isDuplicateId(error)) throw error;
        const purged = await coll.deleteMany({ expiresAt: { $lte: now() } });
        if (purged.deletedCount === 0) throw toUniqueError(error, id);
        try {
          return await run();
        } catch (again) {
          if (isDuplicateKey(again) && !isDuplicateId(again)) throw toUniqueError(again, id);
          throw again;
        }
      }
    }

    function mapIncrementError(error: unknown, field: string, id: string): unknown {
      if (error instanceof MongoServerError && (error.code === TYPE_MISMATCH || error.code === PATH_NOT_VIABLE)) {
        return new InvalidRecordError(`cannot increment "${field}" of record "${id}" in "${name}": it is not a number`);
      }
      return error;
    }

    const methods: RecordCollection<RecordDoc> = {
      async put(doc: RecordDoc, putOptions?: PutOptions): Promise<boolean> {
        const { id } = checkDoc(doc);
        const expect = parseExpect(putOptions?.expect);
        await prepared();
        const stored = toStored(doc);
        if (expect === undefined) {
          // Two upserts of one new _id can race to insert it; the loser retries as an update.
          for (let attempt = 0; ; attempt++) {
            try {
              await write(id, () => coll.replaceOne({ _id: id }, stored, { upsert: true }));
              return true;
            } catch (error) {
              if (!(isDuplicateKey(error) && isDuplicateId(error)) || attempt >= 5) throw error;
            }
          }
        }
        if (expect === null) {
          try {
            await write(id, () => coll.insertOne({ ...stored }));
            return true;
          } catch (error) {
            if (!(isDuplicateKey(error) && isDuplicateId(error))) throw error;
          }
          // The _id is taken: replace it only if the stored document has expired.
          const replaced = await write(id, () => coll.replaceOne({ _id: id, expiresAt: { $lte: now() } }, stored));
          return replaced.matchedCount === 1;
        }
        const filter = toMongoFilter(expect, live(now()));
        const result = await write(id, () => coll.replaceOne({ ...filter, _id: id }, stored));
        return result.matchedCount === 1;
      },

      async get(id: string): Promise<RecordDoc | undefined> {
        checkId(id);
        await prepared();
        const found = await coll.findOne({ _id: id, ...live(now()) });
        return found ? fromStored(found) : undefined;
      },

      async getMany(ids: string[]): Promise<RecordDoc[]> {
        const unique = [...new Set(checkIds(ids))];
        if (unique.length === 0) return [];
        await prepared();
        const found = new Map<string, RecordDoc>();
        for (const stored of await coll.find({ _id: { $in: unique }, ...live(now()) }).toArray()) {
          const doc = fromStored(stored);
          found.set(doc._id, doc);
        }
        return unique.flatMap((id) => {
          const doc = found.get(id);
          return doc ? [doc] : [];
        });
      },

      async find(filter: Filter, findOptions?: FindOptions): Promise<RecordDoc[]> {
        const clauses = parseFilter(filter);
        const parsed = parseFindOptions(findOptions);
        await prepared();
        if (parsed.limit === 0) return [];
        const sort: Document = {};
        if (parsed.sort) sort[parsed.sort.field] = parsed.sort.direction === 'desc' ? -1 : 1;
        if (parsed.sort?.field !== '_id') sort._id = 1;
        let cursor = coll.find(toMongoFilter(clauses, live(now()))).sort(sort);
        if (parsed.skip > 0) cursor = cursor.skip(parsed.skip);
        if (parsed.limit !== undefined) cursor = cursor.limit(parsed.limit);
        return (await cursor.toArray()).map((stored) => fromStored(stored));
      },

      async count(filter: Filter): Promise<number> {
        const clauses = parseFilter(filter);
        await prepared();
        return coll.countDocuments(toMongoFilter(clauses, live(now())));
      },

      async delete(id: string): Promise<boolean> {
        checkId(id);
        await prepared();
        // Removes an expired document too, but reports only a live one.
        const removed = await coll.findOneAndDelete({ _id: id });
        return removed !== null && !(typeof removed.expiresAt === 'number' && removed.expiresAt <= now());
      },

      async take(id: string): Promise<RecordDoc | undefined> {
        checkId(id);
        await prepared();
        const taken = await coll.findOneAndDelete({ _id: id, ...live(now()) });
        return taken ? fromStored(taken) : undefined;
      },

      async deleteMany(filter: Filter): Promise<number> {
        const clauses = parseFilter(filter);
        await prepared();
        const result = await coll.deleteMany(toMongoFilter(clauses, live(now())));
        return result.deletedCount;
      },

      async increment(id, field, by, init): Promise<RecordDoc> {
        const parsed = parseIncrement(id, field, by, init);
        await prepared();
        const fresh = newCounterDoc(parsed);
        for (let attempt = 0; attempt < INCREMENT_ATTEMPTS; attempt++) {
          const at = now();
          try {
            // 1. A live document: add in place.
            const updated = await coll.findOneAndUpdate(
              { _id: parsed.id, ...live(at) },
              { $inc: { [parsed.field]: parsed.by } },
              { returnDocument: 'after' },
            );
            if (updated) return fromStored(updated);
            // 2. An expired one: start a new window, unless another caller already has.
            const replaced = await write(parsed.id, () =>
              coll.findOneAndReplace({ _id: parsed.id, expiresAt: { $lte: at } }, toStored(fresh), {
                returnDocument: 'after',
              }),
            );
            if (replaced) return fromStored(replaced);
            // 3. None: create it, unless another caller just did (then go round again).
            await write(parsed.id, () => coll.insertOne(toStored(fresh)));
            return { ...fresh };
          } catch (error) {
            if (isDuplicateKey(error) && isDuplicateId(error)) continue;
            throw mapIncrementError(error, parsed.field, parsed.id);
          }
        }
        throw new Error(`increment of "${parsed.id}" in "${name}" did not settle after ${INCREMENT_ATTEMPTS} attempts`);
      },
    };
    return { handle: guarded(methods, hosts), ensure };
  }

  return {
    kind: 'mongodb',
    collection<T extends RecordDoc = RecordDoc>(name: string, collectionOptions?: { indexes?: IndexSpec[] }) {
      if (closed) throw new StoreClosedError();
      checkCollectionName(name);
      const indexes = checkIndexSpecs(collectionOptions?.indexes);
      let entry = handles.get(name);
      if (!entry) {
        entry = openCollection(name);
        handles.set(name, entry);
      }
      entry.ensure(indexes);
      return entry.handle as unknown as RecordCollection<T>;
    },
    async ping() {
      if (closed) throw new StoreClosedError();
      try {
        await db.command({ ping: 1 });
      } catch (error) {
        throw unavailable(error, hosts);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
}
