// The embedded records store's array lookups, side by side: the Brain's open-contradictions query
// (memory_contradictions.find({ organizationId, status: 'open', refs: { $in: 10 refs } }, newest
// first, limit 200), which every search_memories and recall_context runs), on one collection
// before its specs name `refs` (the json_each scan of every open contradiction of the
// organization, as before sqlite-multikey.ts) and after (answered from the side table, which
// declaring the spec builds from the stored documents: timed). Also what the side table costs a
// write (a second collection, filled with every spec from the start).
// Run: ./node_modules/.bin/node test/bench/records-multikey.bench.ts [sizes]   (default: 5000,50000)

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Filter, IndexSpec, RecordCollection, RecordDoc } from '../../services/common/storage/records/interface.ts';
import { createSqliteRecordStore, type SqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { seededRandom } from '../support/random.ts';
import { measure, printTable } from './support.ts';

const SIZES = (process.argv[2] ?? '5000,50000').split(',').map(Number);
/** Memories the contradictions name; each contradiction names two. */
const MEMORIES = 20_000;
const REFS_PER_QUERY = 10;

interface Contradiction extends RecordDoc {
  organizationId: string;
  status: 'open' | 'closed';
  createdAt: number;
  refs: string[];
  memberSet: string;
  reason: string;
}

// The specs of services/brain/context.ts, with and without the one that names `refs`.
const SCALAR_SPECS: IndexSpec[] = [
  { fields: ['organizationId', 'status', 'createdAt'] },
  { fields: ['organizationId', 'memberSet', 'status'] },
];
const ALL_SPECS: IndexSpec[] = [...SCALAR_SPECS, { fields: ['organizationId', 'refs'] }];

let next = seededRandom(42);
function random(n: number): number {
  return Math.floor(next() * n);
}

function ref(): string {
  return `default/key-${random(MEMORIES)}`;
}

function contradiction(i: number): Contradiction {
  const refs = [ref(), ref()].sort();
  return {
    _id: `ctr_${i}`,
    organizationId: 'org',
    // Four in five open: a busy organization whose contradictions are not being resolved.
    status: random(5) === 0 ? 'closed' : 'open',
    createdAt: 1_700_000_000_000 + i,
    refs,
    memberSet: refs.join('|'),
    reason: 'The two memories name different times for the nightly backup job.',
  };
}

function query(): Filter {
  return { organizationId: 'org', status: 'open', refs: { $in: Array.from({ length: REFS_PER_QUERY }, ref) } };
}

const NEWEST = { sort: { field: 'createdAt', direction: 'desc' }, limit: 20 * REFS_PER_QUERY } as const;

async function fill(c: RecordCollection<Contradiction>, size: number): Promise<number> {
  next = seededRandom(42);
  return (await measure(size, 1, (i) => c.put(contradiction(i)))).perSecond;
}

async function queries(store: SqliteRecordStore, name: string, size: number, label: string): Promise<Record<string, string | number>> {
  const c = store.collection<Contradiction>(name);
  console.log(`plan, ${size} documents, ${label}: ${store.explainFind(name, query(), NEWEST).join('; ')}`);
  const found: number[] = [];
  // The same queries before and after (the first ones: the scans run fewer).
  next = seededRandom(7);
  // Enough queries for stable percentiles, fewer where each one scans the organization.
  const count = label.startsWith('side') ? 2_000 : Math.max(20, Math.round(1_000_000 / size));
  const latency = await measure(count, 1, async () => {
    found.push((await c.find(query(), NEWEST)).length);
  });
  return {
    documents: size,
    lookup: label,
    queries: count,
    'queries/s': Math.round(latency.perSecond),
    'p50 ms': latency.p50,
    'p95 ms': latency.p95,
    'found (mean)': found.reduce((x, y) => x + y, 0) / found.length,
  };
}

/**
 * One collection filled without the spec that names `refs`, queried (the json_each scan), then
 * given the spec (the side table built from its documents) and queried again; and a second one
 * filled with every spec from the start, for what the side table costs a write.
 */
async function bench(
  store: SqliteRecordStore,
  size: number,
): Promise<{ reads: Record<string, string | number>[]; writes: Record<string, string | number> }> {
  const name = `contradictions_${size}`;
  const putsWithout = await fill(store.collection<Contradiction>(name, { indexes: SCALAR_SPECS }), size);
  const before = await queries(store, name, size, 'json_each scan (no spec names refs)');
  const started = performance.now();
  store.collection<Contradiction>(name, { indexes: ALL_SPECS });
  const buildMs = performance.now() - started;
  const after = await queries(store, name, size, 'side table (spec organizationId, refs)');
  const putsWith = await fill(store.collection<Contradiction>(`${name}_indexed`, { indexes: ALL_SPECS }), size);
  return {
    reads: [before, after],
    writes: {
      documents: size,
      'puts/s without side table': Math.round(putsWithout),
      'puts/s with side table': Math.round(putsWith),
      'side table built from the documents, ms': Math.round(buildMs),
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'mindgate-records-multikey-bench-'));
const store = createSqliteRecordStore({ path: join(dir, 'records.sqlite'), sweepIntervalMs: 0 });
try {
  const reads: Record<string, string | number>[] = [];
  const writes: Record<string, string | number>[] = [];
  for (const size of SIZES) {
    const figures = await bench(store, size);
    reads.push(...figures.reads);
    writes.push(figures.writes);
  }
  printTable(
    `open contradictions of ${REFS_PER_QUERY} memories, newest ${NEWEST.limit} (one organization, 4 in 5 open, 2 refs each)`,
    reads,
  );
  printTable('writes (one at a time, WAL, synchronous=normal)', writes);
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
