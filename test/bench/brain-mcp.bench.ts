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
// With BRAIN_PROCESS=separate the Brain runs as a process of its own (as the Helm chart runs it),
// reached by the edge over gRPC (brain-separate.ts); the server CPU column then adds both.
// BRAIN_INDEX_MEMORY_MB (default here 16384) must hold the largest scale's indexes.
// Run: ./node_modules/.bin/node test/bench/brain-mcp.bench.ts   (SCALES=10000 for a quick run)
import { fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { createBrainContext } from '../../services/brain/context.ts';
import { memoryText } from '../../services/brain/memory-record.ts';
import { createLogger } from '../../services/common/log.ts';
import { obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import { SeparateBrain } from './brain-separate.ts';
import { Seeder, variant } from './brain-seed.ts';
import { type LatencySummary, measure, printTable, rssMiB, syntheticMemory } from './support.ts';

const INGEST = Number(process.env.INGEST ?? 1_000);
const SCALES = (process.env.SCALES ?? '10000,100000').split(',').map(Number);
const QUERIES = Number(process.env.QUERIES ?? 200);
const THREADS = process.env.EMBEDDINGS_THREADS ?? '2';
const INDEX_MEMORY_MB = process.env.BRAIN_INDEX_MEMORY_MB ?? '16384';
const brainSettings = { EMBEDDINGS_THREADS: THREADS, BRAIN_INDEX_MEMORY_MB: INDEX_MEMORY_MB };
const separate = process.env.BRAIN_PROCESS === 'separate' ? await SeparateBrain.start(brainSettings) : undefined;

const fixture = JSON.parse(
  fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/brain-quality.json'), 'utf8'),
) as { queries: { query: string }[] };

const platform = await startOAuthTestPlatform({ ...brainSettings, ...separate?.platformEnv, LOG_LEVEL: 'warn', ACCESS_LOG: 'false' });
const mcpUrl = `${platform.ctx.config.publicUrls.gateway}/brain/mcp`;
const token = await obtainAccessToken(platform, { resource: mcpUrl });
const org = token.organizationId;
const brain = platform.ctx.clients.brain;
console.log(
  `Brain MCP benchmark: ${THREADS} embedding threads, Node ${process.version}, organization ${org}, ` +
    `the Brain ${separate ? 'in a process of its own' : 'in the edge process'}`,
);

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
// Only these fields: the fixture's memories also name their namespace (a string, not the enum).
const labeled = (i: number): IngestMemory => {
  const m = variant(i);
  return { key: `labeled/${i}`, title: m.title, content: m.content, tags: m.tags, entities: m.entities };
};

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

/**
 * Writes `memories` the way `path` does, `size` per call and `concurrency` calls in flight: MCP
 * from agents in another process (brain-mcp-load.ts), gRPC through the edge's own client.
 */
function ingest(path: IngestPath, memories: IngestMemory[], size: number, concurrency: number): Promise<LatencySummary> {
  const batches = range(memories.length / size, (i) => memories.slice(i * size, (i + 1) * size));
  if (path === 'manage_memories (MCP)')
    return load(
      'manage_memories',
      batches.map((b) => ({ action: 'create', ...toItem(b[0]!) })),
      concurrency,
    );
  if (path === 'manage_memories items x25 (MCP)') {
    return load(
      'manage_memories',
      batches.map((b) => ({ action: 'create', items: b.map(toItem) })),
      concurrency,
    );
  }
  return measure(batches.length, concurrency, async (i) => {
    if (path === 'PutMemory (gRPC client)') await brain.putMemory(toWrite(batches[i]![0]!));
    else await brain.putMemories({ organizationId: org, memories: batches[i]!.map(toWrite) });
  });
}

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
    const calls = await ingest(path, memories, size, size === 1 ? 16 : 2);
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
printTable('Ingest: 16 writes in flight (embedding + duplicate/contradiction check + record + vector + index)', ingestRows);
const ingested = offset;

// Larger populations are seeded straight into the stores (brain-seed.ts).
const seeder = new Seeder(createBrainContext(platform.ctx.stores, createLogger({ level: 'silent' })), org);
await seeder.prepare();
const seedUpTo = (total: number, from: number) => (separate ? separate.seed(seeder, from, total) : seeder.seed(from, total));
/** CPU of the processes serving: the edge's (and the Brain's when it runs apart), in ms. */
const serverCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000 + (separate?.cpuMs() ?? 0);
};

const rows: Record<string, string | number>[] = [];
let population = ingested;
const queries = fixture.queries.map((q) => q.query);
for (const scale of SCALES) {
  const t0 = performance.now();
  await seedUpTo(scale, population);
  population = Math.max(population, scale);
  const seeded = (performance.now() - t0) / 1000;
  // The first search refreshes the lexical index with everything seeded (cold); past 20,000
  // vectors it also starts the approximate index's build, which is awaited before measuring.
  const c0 = performance.now();
  await load('search_memories', [{ namespace: 'knowledge', query: 'who owns billing-api', limit: 10 }], 1);
  const cold = performance.now() - c0;
  const b0 = performance.now();
  await (separate ? separate.settled() : approximateIndexBuilt(org));
  const build = (performance.now() - b0) / 1000;
  const search = (i: number, suffix = '') => ({ namespace: 'knowledge', query: `${queries[i % queries.length]}${suffix}`, limit: 10 });
  const runs: [string, string, Record<string, unknown>[], number][] = [
    ['search_memories', 'search_memories', range(QUERIES, (i) => search(i)), 1],
    ['recall_context', 'recall_context', range(QUERIES, (i) => ({ task: queries[(i * 7) % queries.length], token_budget: 2_000 })), 1],
    // Asked before (the brain remembers query embeddings: query-embeddings.ts), then never asked.
    ['search x8 in flight, asked before', 'search_memories', range(4 * QUERIES, (i) => search(i)), 8],
    ['search x8 in flight, new queries', 'search_memories', range(QUERIES, (i) => search(i, ` (${scale}/${i})`)), 8],
  ];
  for (const [label, tool, calls, concurrency] of runs) {
    const cpu0 = serverCpuMs();
    const r = await load(tool, calls, concurrency);
    const cpu = serverCpuMs() - cpu0;
    rows.push({
      memories: scale,
      tool: label,
      'p50 ms': r.p50,
      'p95 ms': r.p95,
      'p99 ms': r.p99,
      'per s': r.perSecond,
      'server CPU ms/call': cpu / calls.length,
      'cold ms': label === 'search_memories' ? cold : 0,
      'seed s': label === 'search_memories' ? seeded : 0,
      'ANN build s': label === 'search_memories' ? build : 0,
      'rss MiB': rssMiB(),
      // The indexes' estimated bytes, what BRAIN_INDEX_MEMORY_MB bounds (docs/brain.md).
      'index estimate MiB': (platform.ctx.stores.indexBudget?.residentBytes ?? 0) / 2 ** 20,
    });
  }
  printTable(
    `Through ${mcpUrl} (SDK clients in another process, one call at a time unless noted), ${scale} memories`,
    rows.filter((r) => r.memories === scale),
  );
}

function range<T>(n: number, make: (i: number) => T): T[] {
  return Array.from({ length: n }, (_, i) => make(i));
}

/** Calls `tool` with each of `calls`, `concurrency` in flight, from a child process (brain-mcp-load.ts). */
function load(tool: string, calls: Record<string, unknown>[], concurrency: number): Promise<LatencySummary> {
  const child = fork(path.join(path.dirname(fileURLToPath(import.meta.url)), 'brain-mcp-load.ts'), { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('message', (summary) => resolve(summary as LatencySummary));
    child.once('exit', (code) => reject(new Error(`the load process exited with ${code}`)));
    child.send({ url: mcpUrl, token: token.access_token, tool, calls, concurrency });
  });
}

/**
 * Waits for the embedded vector store's approximate index of the organization (built in the
 * background once it holds 20,000 vectors) to be complete, so that the figures are those of a
 * brain in its steady state. The store keeps it private; a benchmark may look.
 */
async function approximateIndexBuilt(organizationId: string): Promise<void> {
  type Peek = { loaded?: Map<string, { index: { ann?: { ready: boolean } } }> };
  const matrix = () => (platform.ctx.stores.vectors as unknown as Peek).loaded?.get(organizationId)?.index;
  while (matrix()?.ann && !matrix()!.ann!.ready) await new Promise((resolve) => setTimeout(resolve, 250));
}

await platform.stop(1_000);
await separate?.stop();
