// Records store figures: put, get, find, count, increment and take throughput and latency for
// the embedded SQLite store (synchronous NORMAL and FULL), and for MongoDB when MONGODB_URL is
// set. Documents look like brain memories (~600 bytes, 20 organizations, tags).
// Run: ./node_modules/.bin/node test/bench/records.bench.ts [documents]   (default: 20000)

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';

import type { RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';
import { createMongoRecordStore } from '../../services/common/storage/records/mongo.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { measure, printTable, type LatencySummary } from './support.ts';

const DOCS = Number(process.argv[2] ?? 20_000);
const ORGS = 20;
const CONCURRENCY = 16;
const TEXT = 'The nightly backup job moved to 02:00 UTC after the storage migration; ask the platform team. '.repeat(5);

interface Memory extends RecordDoc {
  organizationId: string;
  namespace: string;
  key: string;
  text: string;
  tags: string[];
  version: number;
  updatedAt: number;
}

function memory(i: number): Memory {
  return {
    _id: `m${i}`,
    organizationId: `org${i % ORGS}`,
    namespace: 'default',
    key: `key-${i}`,
    text: TEXT,
    tags: [`tag${i % 7}`, `tag${i % 11}`],
    version: 1,
    updatedAt: 1_700_000_000_000 + i,
  };
}

function row(name: string, s: LatencySummary): Record<string, string | number> {
  return { operation: name, count: s.count, 'ops/s': Math.round(s.perSecond), 'p50 ms': s.p50, 'p99 ms': s.p99 };
}

async function bench(label: string, store: RecordStore, concurrency: number): Promise<void> {
  const memories = store.collection<Memory>(`bench_${randomUUID().slice(0, 8)}`, {
    indexes: [{ fields: ['organizationId', 'namespace', 'key'], unique: true }, { fields: ['organizationId', 'namespace', 'updatedAt'] }],
  });
  const counters = store.collection<RecordDoc>(`bench_counters_${randomUUID().slice(0, 8)}`);
  const codes = store.collection<RecordDoc>(`bench_codes_${randomUUID().slice(0, 8)}`);
  const rows: Record<string, string | number>[] = [];
  const random = (n: number) => Math.floor(Math.random() * n);
  const queries = Math.min(DOCS, 5_000);

  rows.push(row('put (insert)', await measure(DOCS, concurrency, (i) => memories.put(memory(i)))));
  rows.push(
    row(
      'put (expect version)',
      await measure(queries, concurrency, (i) => memories.put({ ...memory(i), version: 2 }, { expect: { version: 1 } })),
    ),
  );
  rows.push(row('get', await measure(DOCS, concurrency, () => memories.get(`m${random(DOCS)}`))));
  rows.push(
    row(
      'getMany (20 ids)',
      await measure(queries, concurrency, () => memories.getMany(Array.from({ length: 20 }, () => `m${random(DOCS)}`))),
    ),
  );
  rows.push(
    row(
      'find tenant, sort, limit 20',
      await measure(queries, concurrency, () =>
        memories.find(
          { organizationId: `org${random(ORGS)}`, namespace: 'default' },
          { sort: { field: 'updatedAt', direction: 'desc' }, limit: 20 },
        ),
      ),
    ),
  );
  rows.push(
    row(
      'find tenant + tag (array)',
      await measure(Math.min(queries, 1_000), concurrency, () =>
        memories.find({ organizationId: `org${random(ORGS)}`, tags: `tag${random(7)}` }, { limit: 20 }),
      ),
    ),
  );
  rows.push(
    row(
      'count tenant',
      await measure(Math.min(queries, 1_000), concurrency, () => memories.count({ organizationId: `org${random(ORGS)}` })),
    ),
  );
  const window = Date.now() + 60_000;
  rows.push(
    row(
      'increment (100 keys)',
      await measure(DOCS, concurrency, () => counters.increment(`rl:${random(100)}`, 'count', 1, { expiresAt: window })),
    ),
  );
  rows.push(
    row(
      'put expect null (codes)',
      await measure(DOCS, concurrency, (i) => codes.put({ _id: `code${i}`, expiresAt: window }, { expect: null })),
    ),
  );
  rows.push(row('take', await measure(DOCS, concurrency, (i) => codes.take(`code${i}`))));
  printTable(`${label}: ${DOCS} documents, concurrency ${concurrency}`, rows);
}

const dir = mkdtempSync(join(tmpdir(), 'mindgate-records-bench-'));
try {
  for (const synchronous of ['normal', 'full'] as const) {
    const store = createSqliteRecordStore({ path: join(dir, `records-${synchronous}.sqlite`), synchronous, sweepIntervalMs: 0 });
    try {
      await bench(`sqlite (WAL, synchronous=${synchronous})`, store, 1);
    } finally {
      await store.close();
    }
  }
  const mongoUrl = process.env.MONGODB_URL;
  if (mongoUrl) {
    const database = `mindgate_bench_${randomUUID().slice(0, 8)}`;
    const store = await createMongoRecordStore({ url: mongoUrl, database });
    try {
      await bench(`mongodb (${database})`, store, CONCURRENCY);
    } finally {
      await store.close();
    }
  } else {
    console.log('\nMONGODB_URL is not set: MongoDB figures skipped.');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
