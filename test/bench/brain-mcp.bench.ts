// Brain benchmark through the MCP endpoint, on the embedded stores:
//   1. ingest throughput (embedding in EMBEDDINGS_THREADS worker threads, default 2), 16 writes
//      in flight, through manage_memories on {base_url}/brain/mcp and through PutMemory, for short
//      notes (~90 characters, the "short texts" of the embedder figure) and for memories
//      of the labeled set (~190 characters), each beside the embedder's own rate on the same
//      texts (its ceiling), with the event loop's delay (it must never block on embedding);
//   2. search_memories and recall_context p50/p95 through {base_url}/brain/mcp (real HTTP, a real
//      token, the SDK client) at 10,000 and 100,000 memories in one organization, with the
//      resident memory of the process.
// Populations beyond the ingested ones are seeded straight into the records and vector stores in
// the exact shape PutMemory writes (texts of the labeled set with variations, vectors of their
// embeddings with noise), so that reaching 100,000 does not take half an hour of embedding. The
// brain's lexical index learns of them through the write sequence, as it would from a replica.
// Run: ./node_modules/.bin/node test/bench/brain-mcp.bench.ts   (SCALES=10000 for a quick run)
import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { createBrainContext } from '../../services/brain/context.ts';
import { memoryText } from '../../services/brain/memory-record.ts';
import { createLogger } from '../../services/common/log.ts';
import { obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import { Seeder, variant } from './brain-seed.ts';
import { measure, printTable, rssMiB, syntheticMemory } from './support.ts';

const INGEST = Number(process.env.INGEST ?? 1_000);
const SCALES = (process.env.SCALES ?? '10000,100000').split(',').map(Number);
const QUERIES = Number(process.env.QUERIES ?? 200);
const THREADS = process.env.EMBEDDINGS_THREADS ?? '2';

const fixture = JSON.parse(
  fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/brain-quality.json'), 'utf8'),
) as { queries: { query: string }[] };

const platform = await startOAuthTestPlatform({ EMBEDDINGS_THREADS: THREADS, LOG_LEVEL: 'warn', ACCESS_LOG: 'false' });
const mcpUrl = `${platform.ctx.config.publicUrls.gateway}/brain/mcp`;
const token = await obtainAccessToken(platform, { resource: mcpUrl });
const org = token.organizationId;
const brain = platform.ctx.clients.brain;
console.log(`Brain MCP benchmark: ${THREADS} embedding threads, Node ${process.version}, organization ${org}`);

// 1. Ingest, 16 writes in flight.
interface IngestMemory {
  key: string;
  title: string;
  content: string;
  tags: string[];
  entities: string[];
}
/** A short note: one sentence and a detail, ~90 characters with its tag. */
const shortNote = (i: number): IngestMemory => {
  const m = syntheticMemory(i);
  return { key: `note/${i}`, title: '', content: m.content.replace(/^Note \d+: /, ''), tags: m.tags, entities: [] };
};
const labeled = (i: number): IngestMemory => ({ ...variant(i), key: `labeled/${i}` });

/** The embedder alone on the texts PutMemory would embed, 16 calls in flight: the ceiling. */
async function embedderRate(memories: IngestMemory[]): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < memories.length) await platform.ctx.stores.embedder.embed([memoryText(memories[next++]!)]);
    }),
  );
  return memories.length / ((performance.now() - t) / 1000);
}

type IngestPath = 'manage_memories (MCP)' | 'PutMemory (gRPC client)' | 'manage_memories items x25 (MCP)' | 'PutMemories x25 (gRPC client)';
const PATHS: IngestPath[] = [
  'manage_memories (MCP)',
  'PutMemory (gRPC client)',
  'manage_memories items x25 (MCP)',
  'PutMemories x25 (gRPC client)',
];
const BATCH = 25;

const toItem = (m: IngestMemory) => ({
  namespace: 'knowledge' as const,
  key: m.key,
  ...(m.title ? { title: m.title } : {}),
  content: m.content,
  tags: m.tags,
  entities: m.entities,
  allow_duplicate: true,
});
const toWrite = (m: IngestMemory) => ({ organizationId: org, namespace: Namespace.KNOWLEDGE, ...m, allowDuplicate: true });

/** Writes memories [from, to) of `batch` the way `path` does. */
async function write(path: IngestPath, batch: IngestMemory[]): Promise<void> {
  if (path === 'PutMemory (gRPC client)') {
    await brain.putMemory(toWrite(batch[0]!));
  } else if (path === 'PutMemories x25 (gRPC client)') {
    await brain.putMemories({ organizationId: org, memories: batch.map(toWrite) });
  } else {
    const args =
      path === 'manage_memories (MCP)' ? { action: 'create', ...toItem(batch[0]!) } : { action: 'create', items: batch.map(toItem) };
    const r = await mcpWriter.callTool({ name: 'manage_memories', arguments: args });
    if (r.isError) throw new Error(JSON.stringify(r.content));
  }
}

const mcpWriter = await connect();
const ingestRows: Record<string, string | number>[] = [];
let offset = 0;
for (const [texts, make] of [
  ['short notes', shortNote],
  ['labeled-set memories', labeled],
] as const) {
  for (const path of PATHS) {
    const base = offset;
    offset += INGEST;
    const memories = Array.from({ length: INGEST }, (_, i) => make(base + i));
    const chars = Math.round(memories.reduce((n, m) => n + memoryText(m).length, 0) / memories.length);
    const size = path.includes('x25') ? BATCH : 1;
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    // Single writes 16 in flight; batches 2 in flight (50 memories).
    const calls = await measure(INGEST / size, size === 1 ? 16 : 2, (i) => write(path, memories.slice(i * size, (i + 1) * size)));
    loop.disable();
    const ceiling = await embedderRate(Array.from({ length: Math.min(INGEST, 400) }, (_, i) => make(base + i)));
    ingestRows.push({
      texts,
      chars,
      path,
      'memories/s': calls.perSecond * size,
      'embedder alone /s': ceiling,
      'call p50 ms': calls.p50,
      'call p95 ms': calls.p95,
      'loop delay p99 ms': loop.percentile(99) / 1e6,
      'rss MiB': rssMiB(),
    });
  }
}
await mcpWriter.close();
printTable('Ingest: 16 writes in flight (embedding + duplicate/contradiction check + record + vector + index)', ingestRows);
const ingested = offset;

// Larger populations are seeded straight into the stores (brain-seed.ts).
const seeder = new Seeder(createBrainContext(platform.ctx.stores, createLogger({ level: 'silent' })), org);
await seeder.prepare();
const seedUpTo = (total: number, from: number) => seeder.seed(from, total);

async function connect(): Promise<Client> {
  const c = new Client({ name: 'bench', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token.access_token}` } } }),
  );
  return c;
}

const rows: Record<string, string | number>[] = [];
let population = ingested;
for (const scale of SCALES) {
  const t0 = performance.now();
  await seedUpTo(scale, population);
  population = Math.max(population, scale);
  const seeded = (performance.now() - t0) / 1000;
  // A fresh connection: seeding can outlast the keep-alive of an idle one.
  const client = await connect();
  // The first search refreshes the lexical index with everything seeded (cold), then warm runs.
  const c0 = performance.now();
  await client.callTool({ name: 'search_memories', arguments: { namespace: 'knowledge', query: 'who owns billing-api', limit: 10 } });
  const cold = performance.now() - c0;
  const queries = fixture.queries.map((q) => q.query);
  const search = await measure(QUERIES, 1, async (i) => {
    const r = await client.callTool({
      name: 'search_memories',
      arguments: { namespace: 'knowledge', query: queries[i % queries.length], limit: 10 },
    });
    if (r.isError) throw new Error(JSON.stringify(r.content));
  });
  const recall = await measure(QUERIES, 1, async (i) => {
    const r = await client.callTool({
      name: 'recall_context',
      arguments: { task: queries[(i * 7) % queries.length], token_budget: 2_000 },
    });
    if (r.isError) throw new Error(JSON.stringify(r.content));
  });
  // Asked before (the brain remembers query embeddings: query-embeddings.ts), then never asked.
  const concurrent = await measure(QUERIES, 8, (i) =>
    client.callTool({
      name: 'search_memories',
      arguments: { namespace: 'knowledge', query: queries[i % queries.length], limit: 10 },
    }),
  );
  const fresh = await measure(QUERIES, 8, (i) =>
    client.callTool({
      name: 'search_memories',
      arguments: { namespace: 'knowledge', query: `${queries[i % queries.length]} (${scale}/${i})`, limit: 10 },
    }),
  );
  rows.push(
    {
      memories: scale,
      tool: 'search_memories',
      'p50 ms': search.p50,
      'p95 ms': search.p95,
      'p99 ms': search.p99,
      'per s': search.perSecond,
      'cold ms': cold,
      'seed s': seeded,
      'rss MiB': rssMiB(),
    },
    {
      memories: scale,
      tool: 'recall_context',
      'p50 ms': recall.p50,
      'p95 ms': recall.p95,
      'p99 ms': recall.p99,
      'per s': recall.perSecond,
      'cold ms': 0,
      'seed s': 0,
      'rss MiB': rssMiB(),
    },
    {
      memories: scale,
      tool: 'search x8 in flight, asked before',
      'p50 ms': concurrent.p50,
      'p95 ms': concurrent.p95,
      'p99 ms': concurrent.p99,
      'per s': concurrent.perSecond,
      'cold ms': 0,
      'seed s': 0,
      'rss MiB': rssMiB(),
    },
    {
      memories: scale,
      tool: 'search x8 in flight, new queries',
      'p50 ms': fresh.p50,
      'p95 ms': fresh.p95,
      'p99 ms': fresh.p99,
      'per s': fresh.perSecond,
      'cold ms': 0,
      'seed s': 0,
      'rss MiB': rssMiB(),
    },
  );
  printTable(
    `Through ${mcpUrl} (SDK client, one at a time unless noted), ${scale} memories`,
    rows.filter((r) => r.memories === scale),
  );
  await client.close();
}

await platform.stop(1_000);
