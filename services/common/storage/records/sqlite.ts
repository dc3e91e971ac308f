// The embedded records store: one SQLite file through node:sqlite, the default for a single
// machine. Each collection is a table (`_id` primary key, the document as JSON text, and
// `expires_at`); filters compile to SQL over json_extract/json_type/json_each (sqlite-filter.ts), and index specs
// become expression indexes on the same json_extract expressions, so the planner uses them.
//
// Array fields: an expression index holds an array's JSON text, which no "contains" lookup can
// use, so an index spec field that holds arrays also gets a side table with a row per element
// (MongoDB's multikey index), kept by triggers in the same statement as every write of the
// document; equality, `$in` and `$all` on it are answered from there (sqlite-multikey.ts).
// Other operators on array fields (null, `$ne`, ranges) and fields no index spec names scan the
// documents the filter's other conditions select, with json_each.
//
// Durability: WAL journal with synchronous=NORMAL by default. In WAL mode NORMAL never corrupts
// the database and loses nothing when the process crashes (committed pages are in the WAL, in
// the OS page cache); a power loss or kernel crash may roll back the last transactions before
// the next checkpoint. FULL adds an fsync per commit, which closes that window at a cost of
// one to two orders of magnitude in write throughput; `synchronous: 'full'` selects it.
//
// Atomicity: every method is one synchronous statement, or a BEGIN IMMEDIATE transaction, on
// one connection. node:sqlite is synchronous, so nothing else in this process interleaves, and
// other processes on the same file wait on SQLite's write lock (busy_timeout).

import { createHash } from 'node:crypto';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';

import { ensurePrivateFile } from '../../data-dir.ts';
import { InvalidRecordError, StoreClosedError, UniqueViolationError } from './errors.ts';
import type { Filter, FindOptions, IndexSpec, PutOptions, RecordCollection, RecordDoc, RecordStore, Scalar } from './interface.ts';
import { CollectionFields, FIELD_TABLES_SQL } from './sqlite-fields.ts';
import { compileClauses, type Compiled, x } from './sqlite-filter.ts';
import { quoteIdent, TABLE_PREFIX, tableName } from './sqlite-sql.ts';
import {
  checkCollectionName,
  checkDoc,
  checkId,
  checkIds,
  checkIndexSpecs,
  getPath,
  newCounterDoc,
  parseExpect,
  parseFilter,
  parseFindOptions,
  parseIncrement,
  setPath,
  type Clause,
  type ParsedIncrement,
} from './validate.ts';

export interface SqliteRecordStoreOptions {
  /** Path of the database file, or ':memory:'. The folder must exist. */
  path: string;
  /** See the file comment. Default 'normal'. */
  synchronous?: 'normal' | 'full';
  /** How long a write waits for another process's lock before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
  /** How often expired documents are deleted. Default 60 000 ms; 0 disables the timer. */
  sweepIntervalMs?: number;
  /** Clock, for tests. Default Date.now. */
  now?: () => number;
}

export interface SqliteRecordStore extends RecordStore {
  readonly kind: 'embedded';
  /** Deletes expired documents of every collection now; returns how many. */
  sweepExpired(): number;
  /** The query plan of a find, for diagnostics and tests (EXPLAIN QUERY PLAN details). */
  explainFind(collection: string, filter: Filter, options?: FindOptions): string[];
  /** The query plan of a count. */
  explainCount(collection: string, filter: Filter): string[];
}

const STATEMENT_CACHE_SIZE = 512;
const SWEEP_BATCH = 1000;
const SQLITE_CONSTRAINT_UNIQUE = 2067;
const ID_CHUNK = 500;
/** Part of every index name: a change of the columns an index spec maps to gives new names. */
const INDEX_LAYOUT = 2;

function indexName(table: string, spec: IndexSpec): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([INDEX_LAYOUT, spec.fields, spec.unique === true]))
    .digest('hex')
    .slice(0, 16);
  return `${table}__${spec.unique ? 'ux' : 'ix'}_${hash}`;
}

function fieldExpr(field: string): string {
  return field === '_id' ? '_id' : x(field);
}

interface DocRow {
  doc: string;
  expires_at: number | null;
}

export function createSqliteRecordStore(options: SqliteRecordStoreOptions): SqliteRecordStore {
  const store = new SqliteDatabase(options);
  const explainer = (collection: string) => {
    const handle = store.collections.get(collection);
    if (!handle) throw new Error(`collection "${collection}" is not open`);
    return handle;
  };
  return {
    kind: 'embedded',
    collection: <T extends RecordDoc = RecordDoc>(name: string, collectionOptions?: { indexes?: IndexSpec[] }) =>
      store.collection(name, collectionOptions?.indexes) as unknown as RecordCollection<T>,
    async ping() {
      store.statement('SELECT 1').get();
    },
    close: async () => store.close(),
    sweepExpired: () => store.sweepExpired(),
    explainFind: (collection, filter, findOptions) => explainer(collection).explain(filter, findOptions, false),
    explainCount: (collection, filter) => explainer(collection).explain(filter, undefined, true),
  };
}

/** The connection, its statement cache and what every collection shares. */
class SqliteDatabase {
  readonly db: DatabaseSync;
  readonly now: () => number;
  closed = false;
  readonly collections = new Map<string, SqliteCollection>();
  /** The fields of each unique index, by index name, to name them in a UniqueViolationError. */
  readonly uniqueIndexFields = new Map<string, string[]>();
  // Prepared statements by SQL text; filters of the same shape share one statement.
  private readonly statements = new Map<string, StatementSync>();
  /** Which paths hold arrays, and the side tables built for them. */
  readonly fields = new CollectionFields(this);
  private sweeping = false;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(options: SqliteRecordStoreOptions) {
    this.now = options.now ?? Date.now;
    // Private before SQLite opens it: the -wal and -shm files SQLite creates take this file's mode.
    if (options.path !== ':memory:') ensurePrivateFile(options.path);
    this.db = new DatabaseSync(options.path);
    configure(this.db, options);
    const sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    this.timer =
      sweepIntervalMs > 0
        ? setInterval(() => {
            // A busy database or a store closed meanwhile: the next sweep tries again.
            this.sweepInBackground().catch(() => undefined);
          }, sweepIntervalMs)
        : undefined;
    this.timer?.unref();
  }

  collection(name: string, indexSpecs: IndexSpec[] | undefined): SqliteCollection {
    if (this.closed) throw new StoreClosedError();
    checkCollectionName(name);
    const indexes = checkIndexSpecs(indexSpecs);
    const existing = this.collections.get(name);
    if (existing && indexes.length === 0) return existing;
    const handle = existing ?? new SqliteCollection(this, name);
    handle.ensureIndexes(indexes);
    this.collections.set(name, handle);
    return handle;
  }

  close(): void {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    this.closed = true;
    this.statements.clear();
    this.db.close();
  }

  statement(sql: string): StatementSync {
    if (this.closed) throw new StoreClosedError();
    const statements = this.statements;
    let stmt = statements.get(sql);
    if (stmt) {
      statements.delete(sql);
      statements.set(sql, stmt);
      return stmt;
    }
    stmt = this.db.prepare(sql);
    statements.set(sql, stmt);
    if (statements.size > STATEMENT_CACHE_SIZE) {
      const oldest = statements.keys().next().value as string;
      statements.delete(oldest);
    }
    return stmt;
  }

  exec(sql: string): void {
    if (this.closed) throw new StoreClosedError();
    this.db.exec(sql);
  }

  transaction<T>(work: () => T): T {
    this.statement('BEGIN IMMEDIATE').run();
    try {
      const result = work();
      this.statement('COMMIT').run();
      return result;
    } catch (error) {
      if (this.db.isTransaction) this.statement('ROLLBACK').run();
      throw error;
    }
  }

  private sweepBatch(table: string): number {
    const qt = quoteIdent(table);
    const result = this.statement(
      `DELETE FROM ${qt} WHERE rowid IN (SELECT rowid FROM ${qt} WHERE expires_at <= ? LIMIT ${SWEEP_BATCH})`,
    ).run(this.now());
    return Number(result.changes);
  }

  sweepTable(table: string): number {
    let total = 0;
    for (;;) {
      const deleted = this.sweepBatch(table);
      total += deleted;
      if (deleted < SWEEP_BATCH) return total;
    }
  }

  private recordTables(): string[] {
    const rows = this.statement(
      `SELECT name FROM sqlite_schema WHERE type = 'table' AND substr(name, 1, ${TABLE_PREFIX.length}) = '${TABLE_PREFIX}'`,
    ).all() as Array<{ name: string }>;
    return rows.map((row) => row.name);
  }

  sweepExpired(): number {
    if (this.closed) return 0;
    let total = 0;
    for (const table of this.recordTables()) total += this.sweepTable(table);
    return total;
  }

  // The timer's sweep deletes in batches and yields between them, so that a large backlog of
  // expired documents never holds the event loop (or the write lock) for long.
  private async sweepInBackground(): Promise<void> {
    if (this.sweeping || this.closed) return;
    this.sweeping = true;
    try {
      for (const table of this.recordTables()) {
        while (!this.closed && this.sweepBatch(table) === SWEEP_BATCH) {
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    } finally {
      this.sweeping = false;
    }
  }
}

/** The connection's settings (see the file comment), and the tables of what fields hold. */
function configure(db: DatabaseSync, options: SqliteRecordStoreOptions): void {
  db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.exec('PRAGMA foreign_keys = OFF');
  // A replaced or deleted row's bytes are zeroed in the page being written anyway, instead of
  // lingering in free space: a record rewritten sealed (an upgrade, a rotation) leaves no secret
  // in clear in the file. FAST adds no I/O; whole pages freed to the freelist keep their bytes.
  db.exec('PRAGMA secure_delete = FAST');
  db.exec(FIELD_TABLES_SQL);
}

const LIVE = '(expires_at IS NULL OR expires_at > ?)';

/** One collection: a table of `_id`, the document as JSON, and `expires_at`. */
class SqliteCollection implements RecordCollection<RecordDoc> {
  private readonly store: SqliteDatabase;
  private readonly name: string;
  private readonly table: string;
  private readonly qt: string;
  /** The `_id` index SQLite made for the primary key, quoted. */
  private readonly primaryKey: string;

  constructor(store: SqliteDatabase, name: string) {
    this.store = store;
    this.name = name;
    this.table = tableName(name);
    const qt = quoteIdent(this.table);
    this.qt = qt;
    store.db.exec(
      `CREATE TABLE IF NOT EXISTS ${qt} (
         _id TEXT NOT NULL PRIMARY KEY,
         doc TEXT NOT NULL,
         expires_at INTEGER
       ) STRICT;
       CREATE INDEX IF NOT EXISTS ${quoteIdent(`${this.table}__expires`)} ON ${qt} (expires_at)
         WHERE expires_at IS NOT NULL;`,
    );
    const pk = store.statement(`SELECT name FROM pragma_index_list(?) WHERE origin = 'pk'`).get(this.table) as { name: string };
    this.primaryKey = quoteIdent(pk.name);
  }

  /** The table to read or delete from: driven by the side tables' `_id IN (…)` when there are any. */
  private source(compiled: Compiled): string {
    return compiled.multikey ? `${this.qt} INDEXED BY ${this.primaryKey}` : this.qt;
  }

  ensureIndexes(indexes: IndexSpec[]): void {
    for (const spec of indexes) this.createIndex(spec);
    this.store.fields.registerIndexSpecs(this.name, indexes);
  }

  private createIndex(spec: IndexSpec): void {
    const { db, uniqueIndexFields } = this.store;
    const nameOfIndex = indexName(this.table, spec);
    const columns = spec.fields.map(fieldExpr);
    // Non-unique indexes end with _id, so that sorted finds (ties by _id) need no sort step,
    // and expires_at, so that counts and the liveness test need not read the documents.
    if (spec.unique) uniqueIndexFields.set(nameOfIndex, spec.fields);
    else columns.push(...(spec.fields.includes('_id') ? [] : ['_id']), 'expires_at');
    try {
      db.exec(`CREATE ${spec.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${quoteIdent(nameOfIndex)} ON ${this.qt} (${columns.join(', ')})`);
    } catch (error) {
      if (!isUniqueError(error)) throw error;
      // Expired documents may hold the duplicates: remove them and try once more.
      this.store.sweepTable(this.table);
      try {
        db.exec(`CREATE UNIQUE INDEX IF NOT EXISTS ${quoteIdent(nameOfIndex)} ON ${this.qt} (${columns.join(', ')})`);
        return;
      } catch (again) {
        if (!isUniqueError(again)) throw again;
      }
      throw new UniqueViolationError(this.name, undefined, spec.fields);
    }
  }

  private compile(clauses: Clause[]): Compiled {
    const { fields } = this.store;
    fields.refresh();
    return compileClauses(clauses, {
      isArrayPath: (path) => fields.isArray(this.name, path),
      multikeys: (path) => fields.multikeys(this.name, path),
    });
  }

  private where(filter: Filter): Compiled {
    return this.compile(parseFilter(filter));
  }

  private toUniqueError(error: unknown, id: string): unknown {
    if (!isUniqueError(error)) return error;
    const match = /index '([^']+)'/.exec(String((error as Error).message));
    const fields = match ? this.store.uniqueIndexFields.get(match[1]!) : undefined;
    return new UniqueViolationError(this.name, id, fields);
  }

  /**
   * Runs a write; on a unique-index violation deletes this collection's expired documents
   * (which still hold their index entries until swept, though they count as absent) and
   * tries once more.
   */
  private write<T>(id: string, run: () => T): T {
    try {
      return run();
    } catch (error) {
      if (!isUniqueError(error)) throw error;
      if (this.store.sweepTable(this.table) === 0) throw this.toUniqueError(error, id);
      try {
        return run();
      } catch (again) {
        throw this.toUniqueError(again, id);
      }
    }
  }

  /** Inserts the document, or replaces it whatever is stored. */
  private upsert(id: string, json: string, expires: number | null): void {
    this.write(id, () =>
      this.store
        .statement(
          `INSERT INTO ${this.qt} (_id, doc, expires_at) VALUES (?, ?, ?)
           ON CONFLICT (_id) DO UPDATE SET doc = excluded.doc, expires_at = excluded.expires_at`,
        )
        .run(id, json, expires),
    );
  }

  async put(doc: RecordDoc, putOptions?: PutOptions): Promise<boolean> {
    const { id, expiresAt, arrayPaths: paths } = checkDoc(doc);
    const expect = parseExpect(putOptions?.expect);
    const json = JSON.stringify(doc);
    // Whole milliseconds, rounded up: for an integer clock, ceil(e) > now exactly when e > now.
    const expires = expiresAt === undefined ? null : Math.ceil(expiresAt);
    this.store.fields.noteArrayPaths(this.name, paths);
    if (expect === undefined) {
      this.upsert(id, json, expires);
      return true;
    }
    const { qt, store } = this;
    if (expect === null) {
      // Inserts, or replaces a stored document only if it has expired.
      const result = this.write(id, () =>
        store
          .statement(
            `INSERT INTO ${qt} (_id, doc, expires_at) VALUES (?, ?, ?)
             ON CONFLICT (_id) DO UPDATE SET doc = excluded.doc, expires_at = excluded.expires_at
             WHERE ${qt}.expires_at IS NOT NULL AND ${qt}.expires_at <= ?`,
          )
          .run(id, json, expires, store.now()),
      );
      return result.changes === 1;
    }
    const compiled = this.compile(expect);
    const result = this.write(id, () =>
      store
        .statement(`UPDATE ${qt} SET doc = ?, expires_at = ? WHERE _id = ? AND ${LIVE} AND ${compiled.sql}`)
        .run(json, expires, id, store.now(), ...compiled.params),
    );
    return result.changes === 1;
  }

  async get(id: string): Promise<RecordDoc | undefined> {
    checkId(id);
    const row = this.store.statement(`SELECT doc, expires_at FROM ${this.qt} WHERE _id = ? AND ${LIVE}`).get(id, this.store.now()) as
      | DocRow
      | undefined;
    return row ? parseRow(row) : undefined;
  }

  async getMany(ids: string[]): Promise<RecordDoc[]> {
    const unique = [...new Set(checkIds(ids))];
    const found = new Map<string, RecordDoc>();
    const at = this.store.now();
    for (let i = 0; i < unique.length; i += ID_CHUNK) {
      const chunk = unique.slice(i, i + ID_CHUNK);
      const rows = this.store
        .statement(`SELECT _id, doc, expires_at FROM ${this.qt} WHERE _id IN (${chunk.map(() => '?').join(',')}) AND ${LIVE}`)
        .all(...chunk, at) as unknown as Array<DocRow & { _id: string }>;
      for (const row of rows) found.set(row._id, parseRow(row));
    }
    return unique.flatMap((id) => {
      const doc = found.get(id);
      return doc ? [doc] : [];
    });
  }

  async find(filter: Filter, findOptions?: FindOptions): Promise<RecordDoc[]> {
    const compiled = this.where(filter);
    const { sql, params } = this.findSql(compiled, parseFindOptions(findOptions));
    const rows = this.store.statement(sql).all(this.store.now(), ...params) as unknown as DocRow[];
    return rows.map(parseRow);
  }

  async count(filter: Filter): Promise<number> {
    const compiled = this.where(filter);
    const row = this.store.statement(this.countSql(compiled)).get(this.store.now(), ...compiled.params) as { n: number };
    return row.n;
  }

  async delete(id: string): Promise<boolean> {
    checkId(id);
    const row = this.store.statement(`DELETE FROM ${this.qt} WHERE _id = ? RETURNING expires_at`).get(id) as
      | { expires_at: number | null }
      | undefined;
    return row !== undefined && (row.expires_at === null || row.expires_at > this.store.now());
  }

  async take(id: string): Promise<RecordDoc | undefined> {
    checkId(id);
    const row = this.store
      .statement(`DELETE FROM ${this.qt} WHERE _id = ? AND ${LIVE} RETURNING doc, expires_at`)
      .get(id, this.store.now()) as DocRow | undefined;
    return row ? parseRow(row) : undefined;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const compiled = this.where(filter);
    const result = this.store
      .statement(`DELETE FROM ${this.source(compiled)} WHERE ${LIVE} AND ${compiled.sql}`)
      .run(this.store.now(), ...compiled.params);
    return Number(result.changes);
  }

  async increment(
    id: string,
    field: string,
    by: number,
    init: { expiresAt?: number; fields?: Record<string, Scalar> },
  ): Promise<RecordDoc> {
    const parsed = parseIncrement(id, field, by, init);
    return this.store.transaction(() => {
      const row = this.store.statement(`SELECT doc, expires_at FROM ${this.qt} WHERE _id = ?`).get(parsed.id) as DocRow | undefined;
      const doc = this.incremented(parsed, row);
      const { expiresAt } = checkDoc(doc);
      this.upsert(parsed.id, JSON.stringify(doc), expiresAt === undefined ? null : Math.ceil(expiresAt));
      return doc;
    });
  }

  /** The stored document with `field` increased when it is live; a new counter when not. */
  private incremented(parsed: ParsedIncrement, row: DocRow | undefined): RecordDoc {
    if (!row || (row.expires_at !== null && row.expires_at <= this.store.now())) return newCounterDoc(parsed);
    const doc = parseRow(row);
    const current = getPath(doc, parsed.field);
    if (current !== undefined && (typeof current !== 'number' || !Number.isFinite(current))) {
      throw new InvalidRecordError(`cannot increment "${parsed.field}" of record "${parsed.id}" in "${this.name}": it is not a number`);
    }
    setPath(doc, parsed.field, (current ?? 0) + parsed.by);
    return doc;
  }

  private countSql(compiled: Compiled): string {
    return `SELECT count(*) AS n FROM ${this.source(compiled)} WHERE ${LIVE} AND ${compiled.sql}`;
  }

  private findSql(compiled: Compiled, find: ReturnType<typeof parseFindOptions>): { sql: string; params: SQLInputValue[] } {
    let order = '_id ASC';
    if (find.sort) {
      const direction = find.sort.direction === 'desc' ? 'DESC' : 'ASC';
      order = find.sort.field === '_id' ? `_id ${direction}` : `${x(find.sort.field)} ${direction}, _id ASC`;
    }
    const params = [...compiled.params];
    let sql = `SELECT doc, expires_at FROM ${this.source(compiled)} WHERE ${LIVE} AND ${compiled.sql} ORDER BY ${order}`;
    if (find.limit !== undefined || find.skip > 0) {
      sql += ' LIMIT ? OFFSET ?';
      params.push(find.limit ?? -1, find.skip);
    }
    return { sql, params };
  }

  /** The query plan of a find or a count (EXPLAIN QUERY PLAN details). */
  explain(filter: Filter, findOptions: FindOptions | undefined, count: boolean): string[] {
    const compiled = this.where(filter);
    const { sql, params } = count
      ? { sql: this.countSql(compiled), params: compiled.params }
      : this.findSql(compiled, parseFindOptions(findOptions));
    const rows = this.store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(this.store.now(), ...params) as Array<{ detail: string }>;
    return rows.map((row) => row.detail);
  }
}

function parseRow(row: DocRow): RecordDoc {
  return JSON.parse(row.doc) as RecordDoc;
}

function isUniqueError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { errcode?: number }).errcode === SQLITE_CONSTRAINT_UNIQUE;
}
