// What vector sync costs per memory written: after MEMORIES writes (embedded stores), one pass
// verifies every vector and clears every marker (the common case), and one pass rewrites every
// vector (after an outage). Runs the pass in process, alone, so the figure is the background
// work a write leaves behind, separate from the ingest benchmark's noise.
// Run: ./node_modules/.bin/node test/bench/vector-sync.bench.ts  (MEMORIES, default 2,000)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBrainContext } from '../../services/brain/context.ts';
import { memoryPoint, type MemoryRecord } from '../../services/brain/memory-record.ts';
import { reconcileVectors } from '../../services/brain/vector-sync.ts';
import { readStorageConfig } from '../../services/common/config.ts';
import { createLogger } from '../../services/common/log.ts';
import { openStores } from '../../services/common/stores.ts';
import { testEnv } from '../support/platform.ts';
import { printTable, syntheticMemory } from './support.ts';

const MEMORIES = Number(process.env.MEMORIES ?? 2_000);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-bench-sync-'));
const logger = createLogger({ level: 'warn' });
const stores = await openStores(readStorageConfig(testEnv(dataDir), os.availableParallelism()), { logger });
const later = () => Date.now() + 3_600_000;
const ctx = createBrainContext(stores, logger);
console.log(
  `Vector sync benchmark: ${MEMORIES} memories, ${os.availableParallelism()} cores, load ${os.loadavg()[0]!.toFixed(2)}, Node ${process.version}`,
);

// Records and vectors written directly, as PutMemory leaves them (a marker due later).
const unit = new Float32Array(stores.embedder.dimensions).fill(1);
const records: MemoryRecord[] = [];
for (let i = 0; i < MEMORIES; i++) {
  const m = syntheticMemory(i);
  const now = Date.now();
  records.push({
    _id: `bench/knowledge/${m.key}`,
    organizationId: 'bench',
    namespace: 'knowledge',
    key: m.key,
    title: m.title,
    content: m.content,
    tags: m.tags,
    entities: [],
    source: { clientId: 'c', userId: 'u', clientName: '' },
    createdBy: { clientId: 'c', userId: 'u', clientName: '' },
    createdAt: now,
    updatedAt: now,
    version: 1,
    rev: 1,
    seq: i + 1,
    contentHash: '',
    stats: { worked: 0, failed: 0 },
    vectorDue: now + 5_000,
  });
}
for (const r of records) await ctx.memories.put(r);
await stores.vectors.upsert(records.map((r) => memoryPoint(r, unit)));

async function timed(label: string, run: () => Promise<{ verified: number; repaired: number }>) {
  const start = performance.now();
  const stats = await run();
  const ms = performance.now() - start;
  return {
    pass: label,
    verified: stats.verified,
    repaired: stats.repaired,
    'ms total': Math.round(ms),
    'µs/memory': Math.round((ms * 1000) / MEMORIES),
  };
}

const rows = [await timed('verify and clear (common case)', () => reconcileVectors(createBrainContext(stores, logger, { now: later })))];
for (const r of records) await ctx.memories.put(r);
await stores.vectors.delete(
  'bench',
  records.map((r) => `knowledge/${r.key}`),
);
rows.push(await timed('embed and write (after an outage)', () => reconcileVectors(createBrainContext(stores, logger, { now: later }))));
printTable('One vector sync pass over the backlog', rows);
await stores.close();
fs.rmSync(dataDir, { recursive: true, force: true });
