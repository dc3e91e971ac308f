// What the embedded records store promises beyond the port's contract: WAL on disk, expired
// documents swept away, index specs that the planner uses, and atomicity across connections
// (worker threads racing on one file).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { UniqueViolationError } from '../../services/common/storage/records/errors.ts';
import { createRecordStore, EMBEDDED_RECORDS_FILE } from '../../services/common/storage/records/index.ts';
import type { Filter, RecordDoc } from '../../services/common/storage/records/interface.ts';
import { createSqliteRecordStore, type SqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { seededRandom } from '../support/random.ts';

let dir: string;
let file: string;
const stores: Array<{ close(): Promise<void> }> = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-records-sqlite-'));
  file = path.join(dir, 'records.sqlite');
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function open(options: Partial<Parameters<typeof createSqliteRecordStore>[0]> = {}): SqliteRecordStore {
  const store = createSqliteRecordStore({ path: file, sweepIntervalMs: 0, ...options });
  stores.push(store);
  return store;
}

/** Reads the file through a connection of its own, as another process would. */
function raw<T>(query: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return query(db);
  } finally {
    db.close();
  }
}

function ids(docs: RecordDoc[]): string[] {
  return docs.map((doc) => doc._id);
}

function rowCount(table: string): number {
  return raw((db) => (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n);
}

describe('sqlite records store', () => {
  it('keeps its file in WAL mode', async () => {
    const store = open();
    await store.collection('things').put({ _id: 'a' });
    expect(raw((db) => db.prepare('PRAGMA journal_mode').get())).toEqual({ journal_mode: 'wal' });
  });

  it('works in memory', async () => {
    const store = createSqliteRecordStore({ path: ':memory:', sweepIntervalMs: 0 });
    stores.push(store);
    const c = store.collection('things');
    await c.put({ _id: 'a', n: 1 });
    expect(await c.get('a')).toEqual({ _id: 'a', n: 1 });
  });

  it('createRecordStore opens records.sqlite in a data folder it creates', async () => {
    const dataDir = path.join(dir, 'a', 'b');
    const store = await createRecordStore({ dataDir, mongodbDatabase: 'unused' });
    stores.push(store);
    expect(store.kind).toBe('embedded');
    await store.collection('things').put({ _id: 'x' });
    expect(fs.existsSync(path.join(dataDir, EMBEDDED_RECORDS_FILE))).toBe(true);
  });

  it('sweepExpired deletes expired rows and keeps live ones', async () => {
    const store = open();
    const c = store.collection('sessions');
    const other = store.collection('codes');
    await c.put({ _id: 'live', expiresAt: Date.now() + 3_600_000 });
    await c.put({ _id: 'forever' });
    for (let i = 0; i < 2500; i++) await c.put({ _id: `old${i}`, expiresAt: Date.now() - 1000 });
    await other.put({ _id: 'old', expiresAt: Date.now() - 1 });
    expect(rowCount('rec_sessions')).toBe(2502);
    expect(store.sweepExpired()).toBe(2501);
    expect(rowCount('rec_sessions')).toBe(2);
    expect(rowCount('rec_codes')).toBe(0);
    expect(store.sweepExpired()).toBe(0);
  });

  it('sweeps periodically, and stops when closed', async () => {
    const store = open({ sweepIntervalMs: 20 });
    // More than one batch of expired documents, and one that expires while we watch.
    for (let i = 0; i < 1500; i++) await store.collection('sessions').put({ _id: `gone${i}`, expiresAt: Date.now() - 1 });
    await store.collection('sessions').put({ _id: 'old', expiresAt: Date.now() + 100 });
    await store.collection('sessions').put({ _id: 'live', expiresAt: Date.now() + 3_600_000 });
    const deadline = Date.now() + 20_000;
    while (rowCount('rec_sessions') !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(rowCount('rec_sessions')).toBe(1);
    await store.close();
    // A closed store's timer must not touch the database again (it would throw if it did).
    await new Promise((r) => setTimeout(r, 60));
  });

  it('answers tenant queries from expression indexes', async () => {
    const store = open();
    const c = store.collection('memories', {
      indexes: [{ fields: ['organizationId', 'namespace', 'key'], unique: true }, { fields: ['organizationId', 'namespace', 'updatedAt'] }],
    });
    await c.put({ _id: 'm', organizationId: 'o', namespace: 'n', key: 'k', updatedAt: 1, tags: ['t'] });
    const sorted = store.explainFind(
      'memories',
      { organizationId: 'o', namespace: 'n' },
      {
        sort: { field: 'updatedAt', direction: 'asc' },
        limit: 20,
      },
    );
    expect(sorted.join('\n')).toMatch(/SEARCH rec_memories USING (COVERING )?INDEX rec_memories__ix_/);
    // The index ends with _id, so ascending order with _id ties needs no sort at all.
    expect(sorted.join('\n')).not.toMatch(/TEMP B-TREE/);
    const byKey = store.explainFind('memories', { organizationId: 'o', namespace: 'n', key: 'k' });
    expect(byKey.join('\n')).toMatch(/USING INDEX rec_memories__ux_\w+ \(<expr>=\? AND <expr>=\? AND <expr>=\?\)/);
    const withArray = store.explainFind('memories', { organizationId: 'o', tags: 't' });
    expect(withArray.join('\n')).toMatch(/SEARCH rec_memories USING (COVERING )?INDEX/);
    // Counting a tenant reads only the index, expiry included.
    expect(store.explainCount('memories', { organizationId: 'o', namespace: 'n' }).join('\n')).toMatch(/COVERING INDEX/);
  });

  it('reports unique violations after reopening without the index specs', async () => {
    const first = open();
    await first.collection('users', { indexes: [{ fields: ['email'], unique: true }] }).put({ _id: 'a', email: 'x@y' });
    await first.close();
    const second = open();
    await expect(second.collection('users').put({ _id: 'b', email: 'x@y' })).rejects.toBeInstanceOf(UniqueViolationError);
  });

  it('refuses a unique index over existing duplicates', async () => {
    const store = open();
    await store.collection('users').put({ _id: 'a', email: 'x@y' });
    await store.collection('users').put({ _id: 'b', email: 'x@y' });
    expect(() => store.collection('users', { indexes: [{ fields: ['email'], unique: true }] })).toThrow(
      'records in "users" already duplicate the key of the new unique index on (email)',
    );
  });

  it('sees arrays written through another connection', async () => {
    const a = open();
    const b = open();
    const ca = a.collection<RecordDoc>('things');
    const cb = b.collection<RecordDoc>('things');
    await ca.put({ _id: 'scalar', tags: 'red' });
    expect((await ca.find({ tags: 'red' })).map((d) => d._id)).toEqual(['scalar']);
    await cb.put({ _id: 'list', tags: ['red', 'blue'] });
    expect((await ca.find({ tags: 'red' })).map((d) => d._id)).toEqual(['list', 'scalar']);
    expect(await ca.count({ tags: { $in: ['blue'] } })).toBe(1);
  });

  it('stays atomic across connections racing on one file', async () => {
    const setup = open();
    const c = setup.collection('race');
    const codes = 150;
    for (let i = 0; i < codes; i++) await c.put({ _id: `code${i}` });
    const workers = Array.from(
      { length: 4 },
      () =>
        new Worker(new URL('./records-sqlite-worker.ts', import.meta.url), {
          workerData: { path: file, collection: 'race', codes, increments: 150 },
        }),
    );
    try {
      await Promise.all(
        workers.map(
          (w) =>
            new Promise((resolve, reject) => {
              w.once('message', resolve);
              w.once('error', reject);
            }),
        ),
      );
      const results = await Promise.all(
        workers.map(
          (w) =>
            new Promise<{ taken: string[]; inserted: string[]; counts: number[] }>((resolve, reject) => {
              w.once('message', resolve);
              w.once('error', reject);
              w.postMessage('go');
            }),
        ),
      );
      const taken = results.flatMap((r) => r.taken);
      const inserted = results.flatMap((r) => r.inserted);
      const counts = results.flatMap((r) => r.counts).sort((x, y) => x - y);
      expect(taken).toHaveLength(codes);
      expect(new Set(taken).size).toBe(codes);
      expect(inserted).toHaveLength(codes);
      expect(new Set(inserted).size).toBe(codes);
      expect(counts).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
      expect((await c.get('counter'))?.n).toBe(600);
    } finally {
      await Promise.all(workers.map((w) => w.terminate()));
    }
  });
});

describe('sqlite records store: multikey side tables', () => {
  const indexes = [{ fields: ['organizationId', 'status', 'createdAt'] }, { fields: ['organizationId', 'refs'] }];
  const contradictionsQuery = { organizationId: 'o', status: 'open', refs: { $in: ['n/a', 'n/b', 'n/c'] } };
  const newest = { sort: { field: 'createdAt', direction: 'desc' }, limit: 20 } as const;

  function sideTables(): string[] {
    return raw((db) => db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'mk\\_%' ESCAPE '\\'`).all()).map(
      (row) => (row as { name: string }).name,
    );
  }

  function sideRows(table: string): unknown[] {
    return raw((db) => db.prepare(`SELECT * FROM "${table}" ORDER BY id, v`).all()).map((row) => ({ ...(row as object) }));
  }

  it('answers array lookups from the side table, driven by the primary key', async () => {
    const store = open();
    const c = store.collection<RecordDoc>('contradictions', { indexes });
    await c.put({ _id: 'x', organizationId: 'o', status: 'open', createdAt: 1, refs: ['n/a', 'n/b'] });
    const plan = store.explainFind('contradictions', contradictionsQuery, newest).join('\n');
    expect(plan).toMatch(/SEARCH rec_contradictions USING INDEX sqlite_autoindex_rec_contradictions_1 \(_id=\?\)/);
    expect(plan).toMatch(/SEARCH mk_rec_contradictions__\w+ USING PRIMARY KEY \(k0=\? AND v=\?\)/);
    expect(plan).not.toMatch(/json_each/);
    const count = store.explainCount('contradictions', { organizationId: 'o', refs: 'n/a' }).join('\n');
    expect(count).toMatch(/SEARCH mk_rec_contradictions__\w+ USING PRIMARY KEY \(k0=\? AND v=\?\)/);
    // $all: one lookup per value. Without the tenant no side table serves (its prefix is the tenant).
    expect(store.explainFind('contradictions', { organizationId: 'o', refs: { $all: ['n/a', 'n/b'] } }).join('\n')).toMatch(
      /LIST SUBQUERY 2\n.*mk_rec_contradictions/,
    );
    const unserved: Filter[] = [
      { refs: 'n/a' },
      { organizationId: 'o', refs: { $in: ['n/a', null] } },
      { organizationId: 'o', refs: { $ne: 'n/a' } },
    ];
    for (const filter of unserved) {
      expect(store.explainFind('contradictions', filter).join('\n'), JSON.stringify(filter)).not.toMatch(/mk_rec_/);
    }
  });

  it('builds nothing for index fields that never held arrays', async () => {
    const store = open();
    const c = store.collection<RecordDoc>('contradictions', { indexes });
    await c.put({ _id: 'x', organizationId: 'o', status: 'open', createdAt: 1, refs: 'n/a' });
    expect(sideTables()).toEqual([]);
    await c.put({ _id: 'y', organizationId: 'o', status: 'open', createdAt: 2, refs: ['n/a', 'n/b', 'n/a', true, null, { k: 1 }, [2]] });
    const [table] = sideTables();
    expect(sideTables()).toHaveLength(1);
    // One row per distinct string, number or boolean element, and one for a scalar field.
    expect(sideRows(table!)).toEqual([
      { k0: 'o', v: 'n/a', id: 'x' },
      { k0: 'o', v: 'n/a', id: 'y' },
      { k0: 'o', v: 'n/b', id: 'y' },
      { k0: 'o', v: new Uint8Array([1]), id: 'y' },
    ]);
  });

  it('removes the rows of swept documents', async () => {
    const store = open();
    const c = store.collection<RecordDoc>('contradictions', { indexes });
    await c.put({ _id: 'live', organizationId: 'o', refs: ['n/a'] });
    await c.put({ _id: 'old', organizationId: 'o', refs: ['n/a', 'n/b'], expiresAt: Date.now() - 1 });
    const [table] = sideTables();
    expect(sideRows(table!)).toHaveLength(3);
    expect(store.sweepExpired()).toBe(1);
    expect(sideRows(table!)).toEqual([{ k0: 'o', v: 'n/a', id: 'live' }]);
  });

  it('builds and uses side tables across connections', async () => {
    const a = open();
    const b = open();
    const withSpecs = a.collection<RecordDoc>('contradictions', { indexes });
    await withSpecs.put({ _id: 's', organizationId: 'o', status: 'open', refs: 'n/a' });
    // A connection that never saw the specs writes the first array: it builds the side table.
    const plain = b.collection<RecordDoc>('contradictions');
    await plain.put({ _id: 'arr', organizationId: 'o', status: 'open', refs: ['n/a', 'n/b'] });
    expect(sideTables()).toHaveLength(1);
    expect(a.explainFind('contradictions', contradictionsQuery).join('\n')).toMatch(/mk_rec_contradictions/);
    expect(ids(await withSpecs.find(contradictionsQuery))).toEqual(['arr', 's']);
    await plain.put({ _id: 's', organizationId: 'o', status: 'open', refs: ['n/c'] });
    expect(ids(await withSpecs.find({ organizationId: 'o', refs: 'n/a' }))).toEqual(['arr']);
    expect(ids(await withSpecs.find({ organizationId: 'o', refs: 'n/c' }))).toEqual(['s']);
  });

  it('answers exactly as the json_each scan does', async () => {
    const store = open();
    const indexed = store.collection<RecordDoc>('indexed', { indexes: [...indexes, { fields: ['tags'] }] });
    const scanned = store.collection<RecordDoc>('scanned');
    const values: unknown[] = ['a', 'b', 'c', '1', 1, 2, 2.5, 0, true, false, null, '[1]', ['a'], { a: 'a' }];
    const next = seededRandom(7);
    const random = (n: number) => Math.floor(next() * n);
    const field = () => {
      const roll = random(10);
      if (roll === 0) return undefined;
      if (roll < 4) return values[random(values.length)];
      return Array.from({ length: random(4) }, () => values[random(values.length)]);
    };
    for (let i = 0; i < 300; i++) {
      const doc: RecordDoc = {
        _id: `d${i}`,
        organizationId: `o${random(3)}`,
        status: random(2) ? 'open' : 'closed',
        refs: field(),
        tags: field(),
      };
      await indexed.put(doc);
      await scanned.put(doc);
    }
    const scalars = values.filter((v) => !Array.isArray(v) && (v === null || typeof v !== 'object')) as Array<
      string | number | boolean | null
    >;
    let served = 0;
    for (const path of ['refs', 'tags']) {
      for (const value of scalars) {
        const other = scalars[random(scalars.length)]!;
        for (const filter of [
          { [path]: value },
          { organizationId: 'o1', [path]: value },
          { organizationId: 'o2', status: 'open', [path]: { $in: [value, other] } },
          { organizationId: 'o0', [path]: { $all: [value, other] } },
          { [path]: { $in: [value, other] } },
        ]) {
          expect(ids(await indexed.find(filter)), JSON.stringify(filter)).toEqual(ids(await scanned.find(filter)));
          if (store.explainFind('indexed', filter).join('\n').includes('mk_rec_indexed')) served += 1;
        }
      }
    }
    // Most of these filters were answered from the side tables.
    expect(served).toBeGreaterThan(80);
  });
});
