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
import type { RecordDoc } from '../../services/common/storage/records/interface.ts';
import { createSqliteRecordStore, type SqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';

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
