// What the plan's max_memories costs a write that adds a memory (services/brain/memory-limit.ts):
// the entitlements (cached two seconds) and a count of the organization's live memories, against
// a get by id (which every write pays anyway), with one organization holding 1,000 to 100,000
// memories among others, on the embedded SQLite store.
// Run: ./node_modules/.bin/node test/bench/memory-limit.bench.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { createEntitlementsCache } from '../../services/billing/entitlements-cache.ts';
import { createBillingClient } from '../../services/billing/client.ts';
import { readBillingConfig } from '../../services/billing/config.ts';
import { createBillingModule } from '../../services/billing/index.ts';
import { countLiveMemories, createMemoryLimit, memoriesForCounting } from '../../services/brain/memory-limit.ts';
import type { MemoryRecord } from '../../services/brain/memory-record.ts';
import { readServiceConfig } from '../../services/common/config.ts';
import { createLogger } from '../../services/common/log.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import type { Stores } from '../../services/common/stores.ts';
import { measure, printTable } from './support.ts';

const dir = mkdtempSync(join(tmpdir(), 'mindgate-limit-bench-'));
const records = createSqliteRecordStore({ path: join(dir, 'records.sqlite') });
const logger = createLogger({ level: 'silent' });
const stores = { records } as unknown as Stores;
const billingConfig = { ...readBillingConfig({}), passSecret: 'a-bench-secret-of-at-least-32-characters' };
const deps = { now: Date.now, dataDir: dir, billingConfig, billing: () => billing };
const billing = createBillingClient({
  module: () => createBillingModule(stores, logger, readServiceConfig({ DATA_DIR: dir }, 'billing', 1), deps),
  internalToken: 'x'.repeat(32),
  logger,
});
// The brain's own indexes (services/brain/context.ts), and the limit's.
records.collection<MemoryRecord>('memories', {
  indexes: [{ fields: ['organizationId', 'namespace', 'key'], unique: true }, { fields: ['organizationId', 'namespace', 'seq'] }],
});
const memories = memoriesForCounting(records);
const entitlements = createEntitlementsCache({ billing: () => billing, now: Date.now });
const limit = createMemoryLimit({ memories, entitlements, logger, now: Date.now });

function memory(org: string, i: number): MemoryRecord {
  const text = `Fact ${i} about the deployment pipeline of team ${i % 17}.`;
  return {
    _id: `${org}|knowledge|k${i}`,
    organizationId: org,
    namespace: 'knowledge',
    key: `k${i}`,
    title: `k${i}`,
    content: text,
    tags: [],
    entities: [],
    source: { kind: 'agent', id: 'bench' },
    createdBy: { kind: 'agent', id: 'bench' },
    createdAt: i,
    updatedAt: i,
    version: 1,
    rev: 1,
    seq: i,
    contentHash: String(i),
    stats: { worked: 0, failed: 0 },
  } as unknown as MemoryRecord;
}

// On Professional (2,000,000 memories), so every check below passes and does the whole work.
await billing.setPlan({ organizationId: 'org_big', plan: Plan.PROFESSIONAL });
const rows: Record<string, string | number>[] = [];
let held = 0;
for (const size of [1_000, 10_000, 100_000]) {
  await measure(size - held, 16, (i) => memories.put(memory('org_big', held + i)));
  await measure(size / 10 - Math.floor(held / 10), 16, (i) => memories.put(memory('org_other', Math.floor(held / 10) + i)));
  held = size;
  const get = await measure(2_000, 4, (i) => memories.get(`org_big|knowledge|k${i % size}`));
  const check = await measure(2_000, 4, () => limit('org_big'));
  const exact = await measure(20, 1, () => countLiveMemories(memories, 'org_big'));
  const filtered = await measure(5, 1, () => memories.count({ organizationId: 'org_big', deleted: { $ne: true } }));
  if ((await countLiveMemories(memories, 'org_big')) !== size) throw new Error('the count is wrong');
  rows.push({
    memories: size,
    'get by id p50 ms': get.p50.toFixed(3),
    'check far from limit p50 ms': check.p50.toFixed(3),
    'check p99 ms': check.p99.toFixed(2),
    'exact count (near limit) p50 ms': exact.p50.toFixed(2),
    'count deleted!=true p50 ms': filtered.p50.toFixed(1),
  });
}
printTable('max_memories check per new memory (SQLite)', rows);
await records.close();
rmSync(dir, { recursive: true, force: true });
