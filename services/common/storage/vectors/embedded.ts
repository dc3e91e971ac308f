// The embedded vector store, the default on a single machine: exact (exhaustive) cosine search
// over an in-memory matrix per organization, persisted in SQLite. An organization past
// `approximateFrom` points (20,000) is searched through an HNSW index built in the background,
// whose candidates the matrix scores exactly (ann-index.ts).
//
// SQLite is the record of truth; the matrices are a cache built from it. An organization's rows
// are loaded on its first search or count, and every later write goes to SQLite first and then to
// the loaded matrix. Each organization has its own matrix, so a search reads only that
// organization's rows: isolation holds by construction, not by a filter. The matrices count
// against the process's index memory budget (index-budget.ts): an evicted organization's matrix
// is dropped, writes meanwhile go to SQLite alone, and its next search loads it again.
//
// Vectors are stored L2-normalised, as little-endian float32 BLOBs. Each dimensionality has its
// own table (`vectors_512`), mirroring the Qdrant adapter's collection per dimensionality: a
// switch to a model with other dimensions starts an empty index instead of failing on old rows.

import { DatabaseSync } from 'node:sqlite';
import { ensurePrivateFile } from '../../data-dir.ts';
import { IndexBudget, type Residency } from '../index-budget.ts';
import type {
  PayloadValue,
  StoredPoint,
  VectorFilter,
  VectorMatch,
  VectorPoint,
  VectorScanPage,
  VectorSearchOptions,
  VectorStore,
} from './interface.ts';
import { MatrixIndex } from './matrix-index.ts';
import { acquireProcessLock } from './process-lock.ts';
import {
  checkFilter,
  checkIds,
  checkOrganizationId,
  checkPoints,
  checkScanOptions,
  checkSearchOptions,
  normaliseVector,
  VectorInputError,
} from './validate.ts';

export interface EmbeddedVectorStoreOptions {
  /** SQLite file (its folder is created), or `:memory:` for a store that lives as long as the process. */
  path: string;
  /** Length of every vector; 1 to 65,536. */
  dimensions: number;
  /**
   * How long a write waits for another connection's lock on the file before failing. Default
   * 5000 ms. The wait blocks the thread (node:sqlite is synchronous).
   */
  busyTimeoutMs?: number;
  /**
   * Points of one organization from which its searches use an approximate index (HNSW, with
   * exact scores: matrix-index.ts, ann-index.ts). Default 20,000: below it the exact scan takes
   * about a millisecond. `Infinity` keeps every search exact.
   */
  approximateFrom?: number;
  /** The process's index memory budget, shared with the Brain's lexical indexes; default none. */
  budget?: IndexBudget;
}

/** See EmbeddedVectorStoreOptions.approximateFrom. */
export const APPROXIMATE_FROM = 20_000;

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
  // Rows are written and read as the platform's Float32Array bytes.
  throw new Error('the embedded vector store needs a little-endian platform');
}

export function createEmbeddedVectorStore(options: EmbeddedVectorStoreOptions): VectorStore {
  const { path, dimensions, busyTimeoutMs = 5000, approximateFrom = APPROXIMATE_FROM } = options;
  const budget = options.budget ?? new IndexBudget({ limitBytes: Number.POSITIVE_INFINITY });
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 65536) {
    throw new Error(`dimensions must be an integer from 1 to 65536, got ${dimensions}`);
  }
  // Private before SQLite opens it: the -wal and -shm files SQLite creates take this file's mode.
  if (path !== ':memory:') ensurePrivateFile(path);
  // One process per file (process-lock.ts): refuse a second one before opening anything.
  const release = path === ':memory:' ? () => {} : acquireProcessLock(`${path}.lock`);
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path);
  } catch (error) {
    release();
    throw error;
  }
  return new EmbeddedVectorStore(db, { dimensions, busyTimeoutMs, approximateFrom, budget }, release);
}

/** The table of one dimensionality, and the statements every operation uses. */
function openTable(db: DatabaseSync, dimensions: number, busyTimeoutMs: number) {
  const table = `vectors_${dimensions}`;
  db.exec(`
    -- A 512-dimensional row is about 2 KB: on SQLite's default 4 KB pages only one fits per page,
    -- doubling the file. 16 KB pages hold seven. (Takes effect only when the file is created.)
    PRAGMA page_size = 16384;
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = NORMAL;
    PRAGMA busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))};
    CREATE TABLE IF NOT EXISTS ${table} (
      organization TEXT NOT NULL,
      id TEXT NOT NULL,
      vector BLOB NOT NULL,
      payload TEXT NOT NULL,
      UNIQUE (organization, id)
    );
  `);
  return {
    upsert: db.prepare(
      `INSERT INTO ${table} (organization, id, vector, payload) VALUES (?, ?, ?, ?)
       ON CONFLICT (organization, id) DO UPDATE SET vector = excluded.vector, payload = excluded.payload`,
    ),
    remove: db.prepare(`DELETE FROM ${table} WHERE organization = ? AND id = ?`),
    removeOrganization: db.prepare(`DELETE FROM ${table} WHERE organization = ?`),
    count: db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE organization = ?`),
    load: db.prepare(`SELECT id, vector, payload FROM ${table} WHERE organization = ?`),
    ping: db.prepare('SELECT 1 AS ok'),
    get: db.prepare(`SELECT payload FROM ${table} WHERE organization = ? AND id = ?`),
    scanFirst: db.prepare(`SELECT organization, id, payload FROM ${table} ORDER BY organization, id LIMIT ?`),
    scanAfter: db.prepare(
      `SELECT organization, id, payload FROM ${table} WHERE (organization, id) > (?, ?) ORDER BY organization, id LIMIT ?`,
    ),
  };
}

/** A loaded matrix and its place in the memory budget. */
interface LoadedMatrix {
  index: MatrixIndex;
  residency: Residency;
}

class EmbeddedVectorStore implements VectorStore {
  readonly kind = 'embedded';
  readonly dimensions: number;
  /** See EmbeddedVectorStoreOptions.approximateFrom. */
  private readonly approximateFrom: number;
  private readonly db: DatabaseSync;
  private readonly statements: ReturnType<typeof openTable>;
  /** Releases the process lock on the file. */
  private readonly release: () => void;
  /** The organizations' matrices loaded and not evicted. */
  private readonly loaded = new Map<string, LoadedMatrix>();
  private readonly budget: IndexBudget;
  private closed = false;

  constructor(
    db: DatabaseSync,
    settings: { dimensions: number; busyTimeoutMs: number; approximateFrom: number; budget: IndexBudget },
    release: () => void,
  ) {
    this.db = db;
    this.dimensions = settings.dimensions;
    this.approximateFrom = settings.approximateFrom;
    this.budget = settings.budget;
    this.release = release;
    this.statements = openTable(db, settings.dimensions, settings.busyTimeoutMs);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the embedded vector store is closed');
  }

  private rowCount(organizationId: string): number {
    return Number((this.statements.count.get(organizationId) as { n: number | bigint }).n);
  }

  /** The organization's matrix, loading it on first use (or after eviction); undefined when it has no vectors. */
  private matrixOf(organizationId: string): LoadedMatrix | undefined {
    const existing = this.loaded.get(organizationId);
    if (existing) {
      this.budget.touch(organizationId);
      return existing;
    }
    const rows = this.rowCount(organizationId);
    // Empty organizations are not cached, so looking up unknown names allocates nothing.
    if (rows === 0) return undefined;
    // Room for some growth without a rounding to a power of two that can waste a third.
    const index = new MatrixIndex(this.dimensions, Math.ceil(rows * 1.125), this.approximateFrom);
    // Admitted at its full size before the rows are read, so that others are evicted first.
    const loaded: LoadedMatrix = {
      index,
      residency: this.budget.admit(organizationId, {
        kind: 'vectors',
        bytes: () => index.estimatedBytes(),
        evict: () => this.unload(organizationId, loaded),
      }),
    };
    for (const row of this.statements.load.iterate(organizationId)) {
      const payload = JSON.parse(row.payload as string) as Record<string, PayloadValue>;
      index.setBytes(row.id as string, row.vector as Uint8Array, payload);
    }
    this.loaded.set(organizationId, loaded);
    loaded.residency.resized();
    return loaded;
  }

  /** Drops a loaded matrix (evicted, or its organization deleted). */
  private unload(organizationId: string, loaded: LoadedMatrix): void {
    if (this.loaded.get(organizationId) === loaded) this.loaded.delete(organizationId);
    loaded.residency.release();
    loaded.index.close();
  }

  private transaction(work: () => void): void {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      work();
      this.db.exec('COMMIT');
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  async upsert(points: VectorPoint[]): Promise<void> {
    this.assertOpen();
    const checked = checkPoints(points, this.dimensions);
    if (checked.length === 0) return;
    this.transaction(() => {
      for (const point of checked) {
        const bytes = new Uint8Array(point.vector.buffer, point.vector.byteOffset, point.vector.byteLength);
        this.statements.upsert.run(point.organizationId, point.id, bytes, JSON.stringify(point.payload));
      }
    });
    const changed = new Set<LoadedMatrix>();
    for (const point of checked) {
      const loaded = this.loaded.get(point.organizationId);
      loaded?.index.set(point.id, point.vector, point.payload);
      if (loaded) changed.add(loaded);
    }
    for (const loaded of changed) loaded.residency.resized();
  }

  async delete(organizationId: string, ids: string[]): Promise<void> {
    this.assertOpen();
    checkOrganizationId(organizationId);
    const checked = checkIds(ids);
    if (checked.length === 0) return;
    this.transaction(() => {
      for (const id of checked) this.statements.remove.run(organizationId, id);
    });
    const loaded = this.loaded.get(organizationId);
    if (loaded) {
      for (const id of checked) loaded.index.delete(id);
      if (loaded.index.size === 0) this.unload(organizationId, loaded);
      else loaded.residency.resized();
    }
  }

  async deleteOrganization(organizationId: string): Promise<void> {
    this.assertOpen();
    checkOrganizationId(organizationId);
    this.statements.removeOrganization.run(organizationId);
    const loaded = this.loaded.get(organizationId);
    if (loaded) this.unload(organizationId, loaded);
  }

  async search(organizationId: string, vector: Float32Array | number[], options: VectorSearchOptions): Promise<VectorMatch[]> {
    this.assertOpen();
    checkOrganizationId(organizationId);
    const query = normaliseVector(vector, this.dimensions, 'query vector');
    const { limit, filter } = checkSearchOptions(options);
    const loaded = this.matrixOf(organizationId);
    if (!loaded) return [];
    const matches = loaded.index.search(query, limit, filter);
    // A search may start the approximate index's build, which the estimate counts from then on.
    loaded.residency.resized();
    return matches;
  }

  async count(organizationId: string, filter?: VectorFilter): Promise<number> {
    this.assertOpen();
    checkOrganizationId(organizationId);
    const checked = checkFilter(filter);
    if (!checked || Object.keys(checked).length === 0) {
      // SQLite answers without loading the organization's matrix.
      return this.loaded.get(organizationId)?.index.size ?? this.rowCount(organizationId);
    }
    return this.matrixOf(organizationId)?.index.count(checked) ?? 0;
  }

  async retrieve(organizationId: string, ids: string[]): Promise<StoredPoint[]> {
    this.assertOpen();
    checkOrganizationId(organizationId);
    const found: StoredPoint[] = [];
    for (const id of new Set(checkIds(ids))) {
      const row = this.statements.get.get(organizationId, id) as { payload: string } | undefined;
      if (row) found.push({ organizationId, id, payload: JSON.parse(row.payload) });
    }
    return found;
  }

  async scan(options: { after?: string; limit: number }): Promise<VectorScanPage> {
    this.assertOpen();
    const { after, limit } = checkScanOptions(options);
    const { scanFirst, scanAfter } = this.statements;
    const rows = (after === undefined ? scanFirst.all(limit) : scanAfter.all(...scanCursor(after), limit)) as {
      organization: string;
      id: string;
      payload: string;
    }[];
    const points = rows.map((row) => ({ organizationId: row.organization, id: row.id, payload: JSON.parse(row.payload) }));
    const last = rows.at(-1);
    return { points, next: rows.length === limit && last ? JSON.stringify([last.organization, last.id]) : undefined };
  }

  async ping(): Promise<void> {
    this.assertOpen();
    this.statements.ping.get();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const [organizationId, loaded] of [...this.loaded]) this.unload(organizationId, loaded);
    this.db.close();
    this.release();
  }
}

/** The (organization, id) a scan page ended at, from its `next`. */
function scanCursor(after: string): [string, string] {
  try {
    const cursor = JSON.parse(after) as unknown;
    if (Array.isArray(cursor) && cursor.length === 2 && cursor.every((part) => typeof part === 'string')) {
      return cursor as [string, string];
    }
  } catch {
    // Falls through to the error below.
  }
  throw new VectorInputError('after must be the `next` of a previous page');
}
