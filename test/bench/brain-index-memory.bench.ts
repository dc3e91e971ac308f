// What the Brain's in-memory search indexes cost per 100,000 memories, and what an eviction under
// BRAIN_INDEX_MEMORY_MB (index-budget.ts) costs afterwards. One organization of SCALE memories
// (default 100,000, seeded as in brain-seed.ts) is searched cold: its lexical index is built from
// the records store, its float matrix loaded from the vectors file, its HNSW graph built in the
// background; the process's resident memory (RSS) is read after each, beside the budget's
// estimate of each structure. The organization alone exceeds the budget (default 128 MiB), so a
// search of another organization evicts it: RSS after that, then the cost of its next (cold)
// search against a warm one, the baseline. Last, ORGS smaller organizations (ORG_SIZE memories
// each) are searched in turn: RSS and the estimate stay bounded while evictions rise.
// Run: ./node_modules/.bin/node --expose-gc test/bench/brain-index-memory.bench.ts
//      (SCALE=100000 BUDGET_MB=128 ORGS=4 ORG_SIZE=15000 QUERIES=30; --expose-gc makes the RSS
//      figures settle after a full collection; without it they include garbage not yet collected)
import { createBrainContext } from '../../services/brain/context.ts';
import { hybridSearch } from '../../services/brain/search/hybrid.ts';
import { createLogger } from '../../services/common/log.ts';
import { startTestPlatform } from '../support/platform.ts';
import { qualityFixture, Seeder } from './brain-seed.ts';
import { measure, printTable, rssMiB } from './support.ts';

const SCALE = Number(process.env.SCALE ?? 100_000);
const BUDGET_MB = Number(process.env.BUDGET_MB ?? 128);
const ORGS = Number(process.env.ORGS ?? 4);
const ORG_SIZE = Number(process.env.ORG_SIZE ?? 15_000);
const QUERIES = Number(process.env.QUERIES ?? 30);
const BIG = 'org-big';
const small = Array.from({ length: ORGS }, (_, i) => `org-small-${i}`);
const silent = createLogger({ level: 'silent' });
const collect = (globalThis as { gc?: () => void }).gc;

const platform = await startTestPlatform({
  EMBEDDINGS_THREADS: process.env.EMBEDDINGS_THREADS ?? '2',
  LOG_LEVEL: 'warn',
  BRAIN_INDEX_MEMORY_MB: String(BUDGET_MB),
});
const ctx = createBrainContext(platform.ctx.stores, silent);
const budget = platform.ctx.stores.indexBudget!;
const mib = (bytes: number) => bytes / 2 ** 20;
const per100k = (value: number, memories: number) => (value * 100_000) / memories;
/** RSS after a full collection when --expose-gc is given. */
function settledRss(): number {
  collect?.();
  collect?.();
  return rssMiB();
}
async function seconds<T>(work: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const out = await work();
  return [out, (performance.now() - t0) / 1000];
}

const t0 = performance.now();
const bigSeeder = new Seeder(ctx, BIG);
await bigSeeder.prepare();
await bigSeeder.seed(0, SCALE);
for (const org of small) {
  const seeder = new Seeder(ctx, org);
  await seeder.prepare(bigSeeder);
  await seeder.seed(0, ORG_SIZE);
}
console.log(`seeded ${SCALE} + ${ORGS} x ${ORG_SIZE} memories in ${((performance.now() - t0) / 1000).toFixed(0)} s`);

const queries = Array.from({ length: QUERIES }, (_, i) => qualityFixture.queries[i % qualityFixture.queries.length]!.query);
const vectors = await platform.ctx.stores.embedder.embed(queries);
const search = (org: string, i: number) =>
  hybridSearch(ctx, { organizationId: org, namespace: 'knowledge', query: queries[i % QUERIES]!, vector: vectors[i % QUERIES], limit: 10 });

// 1. The large organization, cold: each structure's resident memory and estimate.
const rss0 = settledRss();
const [, lexicalSeconds] = await seconds(() => ctx.indexes.fresh(BIG, 'knowledge'));
const rssLexical = settledRss();
const lexicalEstimate = budget.usage().bytes.lexical;
const [, matrixSeconds] = await seconds(() => platform.ctx.stores.vectors.search(BIG, vectors[0]!, { limit: 1 }));
const rssMatrix = settledRss();
/** Waits until the HNSW graph answers (two searches in a row under 3 ms); seconds taken. */
async function graphReady(org: string): Promise<number> {
  const b0 = performance.now();
  for (let fast = 0; fast < 2 && performance.now() - b0 < 3_600_000; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const t = performance.now();
    await platform.ctx.stores.vectors.search(org, vectors[0]!, { limit: 10, filter: { namespace: 'knowledge' } });
    fast = performance.now() - t < 3 ? fast + 1 : 0;
  }
  return (performance.now() - b0) / 1000;
}
const graphSeconds = SCALE >= 20_000 ? await graphReady(BIG) : 0;
const rssGraph = settledRss();
// The matrix's estimate counts its graph from the first search, which starts the graph's build.
const vectorsEstimate = budget.usage().bytes.vectors;
printTable(
  `Resident memory of one organization's indexes, per 100,000 memories (measured at ${SCALE}, Brain at ${rss0.toFixed(0)} MiB before)`,
  [
    {
      structure: 'lexical index (BM25, lookups)',
      'RSS MiB': per100k(rssLexical - rss0, SCALE),
      'estimate MiB': per100k(mib(lexicalEstimate), SCALE),
      'cold build s': lexicalSeconds,
    },
    {
      structure: 'float matrix (ids, payloads)',
      'RSS MiB': per100k(rssMatrix - rssLexical, SCALE),
      'estimate MiB': '',
      'cold build s': matrixSeconds,
    },
    {
      structure: 'HNSW graph (background)',
      'RSS MiB': per100k(rssGraph - rssMatrix, SCALE),
      'estimate MiB': '',
      'cold build s': graphSeconds,
    },
    {
      structure: 'vectors: matrix and graph',
      'RSS MiB': per100k(rssGraph - rssLexical, SCALE),
      'estimate MiB': per100k(mib(vectorsEstimate), SCALE),
      'cold build s': matrixSeconds + graphSeconds,
    },
    {
      structure: 'all',
      'RSS MiB': per100k(rssGraph - rss0, SCALE),
      'estimate MiB': per100k(mib(budget.residentBytesOf(BIG)), SCALE),
      'cold build s': lexicalSeconds + matrixSeconds + graphSeconds,
    },
  ],
);
console.log(
  `V8 heap used ${mib(process.memoryUsage().heapUsed).toFixed(0)} MiB of ${mib(process.memoryUsage().heapTotal).toFixed(0)} MiB; ` +
    `external (WebAssembly matrices) ${mib(process.memoryUsage().external).toFixed(0)} MiB`,
);

// 2. Warm searches (the baseline), then an eviction, then the cold search that rebuilds.
const warm = await measure(QUERIES, 1, (i) => search(BIG, i));
const evictions0 = budget.usage().evictions;
await search(small[0]!, 0);
const rssEvicted = rssMiB();
const rssEvictedSettled = settledRss();
console.log(
  `\nAfter a search of another organization: ${BIG} evicted (${budget.usage().evictions - evictions0} eviction, ` +
    `${mib(budget.residentBytesOf(BIG)).toFixed(0)} MiB of it held); RSS ${rssEvicted.toFixed(0)} MiB at once, ` +
    `${rssEvictedSettled.toFixed(0)} MiB after a full collection${collect ? '' : ' (not run: no --expose-gc)'}`,
);
const [, coldSeconds] = await seconds(() => search(BIG, 1));
const exactMeanwhile = await measure(Math.min(QUERIES, 10), 1, (i) => search(BIG, i + 2));
const graphAgain = SCALE >= 20_000 ? await graphReady(BIG) : 0;
const warmAgain = await measure(QUERIES, 1, (i) => search(BIG, i));
printTable(`Searches of ${BIG} (${SCALE} memories) around its eviction`, [
  { search: 'warm (baseline)', 'p50 ms': warm.p50, 'p95 ms': warm.p95 },
  { search: 'first after eviction (lexical rebuild + matrix load)', 'p50 ms': coldSeconds * 1000, 'p95 ms': coldSeconds * 1000 },
  { search: 'next ones, exact scan while the graph rebuilds', 'p50 ms': exactMeanwhile.p50, 'p95 ms': exactMeanwhile.p95 },
  { search: `warm again (graph rebuilt in ${graphAgain.toFixed(0)} s)`, 'p50 ms': warmAgain.p50, 'p95 ms': warmAgain.p95 },
]);

// 3. Smaller organizations in turn: what the budget holds, and the process's RSS.
const rotation = [];
for (let round = 0; round < 2; round++) {
  for (const org of small) {
    const [, took] = await seconds(() => search(org, round));
    rotation.push({
      round,
      organization: org,
      'search ms': took * 1000,
      'held orgs': budget.usage().organizations,
      'estimate MiB': mib(budget.residentBytes),
      'budget MiB': BUDGET_MB,
      evictions: budget.usage().evictions,
      'RSS MiB': settledRss(),
    });
  }
}
printTable(`${ORGS} organizations of ${ORG_SIZE} memories searched in turn under BRAIN_INDEX_MEMORY_MB=${BUDGET_MB}`, rotation);
await platform.stop();
