// What keeping versions costs (services/brain/version-record.ts): the extra record write an update
// makes ahead of itself, alone, and reading a memory's versions when it has VERSIONS of them: the
// first page, a page deep in the history, and one old version by number. On the embedded records
// store (SQLite), through the brain's RPC routes in this process.
// Run: ./node_modules/.bin/node test/bench/memory-versions.bench.ts   (VERSIONS=1000 READS=200)
import { createClient, createRouterTransport } from '@connectrpc/connect';
import { BrainService, Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { createBrainContext } from '../../services/brain/context.ts';
import { memoryId } from '../../services/brain/memory-record.ts';
import { brainRoutes } from '../../services/brain/routes.ts';
import { versionOf } from '../../services/brain/version-record.ts';
import { createLogger } from '../../services/common/log.ts';
import { startTestPlatform } from '../support/platform.ts';
import { measure, printTable } from './support.ts';

const VERSIONS = Number(process.env.VERSIONS ?? 1_000);
const READS = Number(process.env.READS ?? 200);
const ORG = 'org-versions-bench';
const K = Namespace.KNOWLEDGE;

const platform = await startTestPlatform({ LOG_LEVEL: 'warn' });
const ctx = createBrainContext(platform.ctx.stores, createLogger({ level: 'silent' }));
const brain = createClient(BrainService, createRouterTransport(brainRoutes(ctx)));
const row = (name: string, s: Awaited<ReturnType<typeof measure>>) => ({
  what: name,
  'p50 ms': s.p50,
  'p95 ms': s.p95,
  'per s': s.perSecond,
});
const rows = [];

// The memory and its history, written as clients would (each update saves the version it replaces).
const content = (i: number) => `Revision ${i} of the on-call rotation: week ${i % 52} is covered by team ${i % 7}.`;
rows.push(
  row(
    `PutMemory, ${VERSIONS} updates of one memory`,
    await measure(VERSIONS, 1, (i) =>
      brain.putMemory({ organizationId: ORG, namespace: K, key: 'rota', content: content(i), allowDuplicate: true }),
    ),
  ),
);
const stored = (await ctx.memories.get(memoryId(ORG, 'knowledge', 'rota')))!;
rows.push(row('the version write alone (records put)', await measure(READS, 1, () => ctx.versions.put(versionOf(stored)))));
rows.push(
  row(
    'ListMemoryVersions, first page of 50',
    await measure(READS, 1, () => brain.listMemoryVersions({ organizationId: ORG, namespace: K, key: 'rota', pageSize: 50 })),
  ),
);
let token = '';
for (let p = 0; p < Math.floor(VERSIONS / 50 / 2); p++) {
  token = (await brain.listMemoryVersions({ organizationId: ORG, namespace: K, key: 'rota', pageSize: 50, pageToken: token }))
    .nextPageToken;
}
rows.push(
  row(
    'ListMemoryVersions, a page half-way',
    await measure(READS, 1, () =>
      brain.listMemoryVersions({ organizationId: ORG, namespace: K, key: 'rota', pageSize: 50, pageToken: token }),
    ),
  ),
);
rows.push(
  row(
    'GetMemoryVersion, an old one',
    await measure(READS, 1, (i) =>
      brain.getMemoryVersion({ organizationId: ORG, namespace: K, key: 'rota', version: BigInt(1 + (i % 100)) }),
    ),
  ),
);
printTable(`memory versions, one memory with ${VERSIONS} versions (embedded SQLite)`, rows);
await platform.stop();
