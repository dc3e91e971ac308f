// Brain slice benchmark on the embedded stores: ingest throughput and search latency for
// MEMORIES memories (default 10,000) in one organization, side by side:
//   direct   — embed + vector search + record fetch, called in process (the floor),
//   edge     — the edge's in-process Connect client (routes, gate, interceptors, serialization),
//   grpc     — grpc over loopback HTTP/2 to the brain's port (connect-node gRPC transport).
// Run: ./node_modules/.bin/node test/bench/brain.bench.ts  (MEMORIES=2000 for a quick run)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { BrainService, Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { readEdgeConfig } from '../../edge/config.ts';
import { startPlatform } from '../../edge/platform.ts';
import { createLogger } from '../../services/common/log.ts';
import { testEnv } from '../support/platform.ts';
import { measure, printTable, rssMiB, syntheticMemory } from './support.ts';

const MEMORIES = Number(process.env.MEMORIES ?? 10_000);
const SEARCHES = Number(process.env.SEARCHES ?? 500);
const THREADS = process.env.EMBEDDINGS_THREADS ?? '2';
const ORG = 'bench-org';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-bench-'));
const config = readEdgeConfig(
  testEnv(dataDir, { EMBEDDINGS_THREADS: THREADS, LOG_LEVEL: 'warn', ACCESS_LOG: 'false' }),
  os.availableParallelism(),
);
const platform = await startPlatform({ config, logger: createLogger({ level: 'warn' }) });
const edge = platform.ctx.clients.brain;
const grpc = createClient(BrainService, createGrpcTransport({ baseUrl: `http://${platform.grpc.brain}` }));
const auth = { headers: { 'x-internal-token': platform.internalToken } };
const { embedder, vectors } = platform.ctx.stores;

console.log(
  `Brain benchmark: ${MEMORIES} memories, ${SEARCHES} searches, ${THREADS} embedding threads, ${os.availableParallelism()} cores, Node ${process.version}`,
);
const rssBefore = rssMiB();

const ingest = await measure(MEMORIES, 16, (i) =>
  edge.putMemory({ organizationId: ORG, namespace: Namespace.KNOWLEDGE, allowDuplicate: true, ...syntheticMemory(i) }),
);
printTable('Ingest (PutMemory through the edge client, 16 in flight)', [
  { memories: MEMORIES, 'memories/s': ingest.perSecond, 'p50 ms': ingest.p50, 'p99 ms': ingest.p99, 'rss MiB': rssMiB() },
]);

const queries = Array.from({ length: SEARCHES }, (_, i) => {
  const m = syntheticMemory((i * 7919) % MEMORIES);
  return i % 2 === 0 ? m.title : `what do we know about ${m.title.split(' ').slice(0, 3).join(' ')}`;
});
// Embed each query once up front for the direct floor, so that it isolates search cost too.
const searchOnce = async (q: string) => {
  const [vector] = await embedder.embed([q]);
  const matches = await vectors.search(ORG, vector, { limit: 10, filter: { namespace: 'knowledge' } });
  return matches;
};

const rows = [];
for (const [name, run] of [
  ['direct (embed + vector search)', (i: number) => searchOnce(queries[i])],
  [
    'edge in-process client',
    (i: number) => edge.searchMemories({ organizationId: ORG, namespace: Namespace.KNOWLEDGE, query: queries[i], limit: 10 }),
  ],
  [
    'gRPC over loopback',
    (i: number) => grpc.searchMemories({ organizationId: ORG, namespace: Namespace.KNOWLEDGE, query: queries[i], limit: 10 }, auth),
  ],
] as const) {
  for (const concurrency of [1, 8]) {
    const r = await measure(SEARCHES, concurrency, run);
    rows.push({ path: name, 'in flight': concurrency, 'searches/s': r.perSecond, 'p50 ms': r.p50, 'p95 ms': r.p95, 'p99 ms': r.p99 });
  }
}
printTable(`SearchMemories (limit 10) over ${MEMORIES} memories`, rows);
console.log(`\nresident memory: ${rssMiB().toFixed(0)} MiB (before ingest ${rssBefore.toFixed(0)} MiB)`);

await platform.stop(1_000);
fs.rmSync(dataDir, { recursive: true, force: true });
