// Where the time of one search goes at scale: the brain's hybrid search over SCALE memories of one
// organization (default 100,000, seeded as in brain-seed.ts), split into its stages, each timed
// alone over the same queries: query embedding, BM25 (lexical index), vector search, fusion,
// record reads; then whole searches one at a time and 8 in flight, straight on the brain's
// context (no HTTP: brain-mcp.bench.ts measures the tools end to end). The vector stage and the
// whole searches run twice in the same run: with the embedded store as configured (HNSW above
// 20,000 points, exact scores) and with an exact-scan copy of the same vectors, the baseline,
// with the overlap of their results (recall of the approximate search against exact search).
// Run: ./node_modules/.bin/node test/bench/brain-search-profile.bench.ts   (SCALE=1000000 QUERIES=200)
import { createBrainContext } from '../../services/brain/context.ts';
import { memoryId } from '../../services/brain/memory-record.ts';
import { hybridSearch } from '../../services/brain/search/hybrid.ts';
import { fuse } from '../../services/brain/search/ranking.ts';
import { createLogger } from '../../services/common/log.ts';
import { createEmbeddedVectorStore } from '../../services/common/storage/vectors/embedded.ts';
import type { VectorMatch, VectorPoint } from '../../services/common/storage/vectors/interface.ts';
import { startTestPlatform } from '../support/platform.ts';
import { qualityFixture, Seeder } from './brain-seed.ts';
import { type LatencySummary, measure, printTable, rssMiB } from './support.ts';

const SCALE = Number(process.env.SCALE ?? 100_000);
const QUERIES = Number(process.env.QUERIES ?? 200);
const ORG = 'org-profile';
const silent = createLogger({ level: 'silent' });

const platform = await startTestPlatform({ EMBEDDINGS_THREADS: process.env.EMBEDDINGS_THREADS ?? '2', LOG_LEVEL: 'warn' });
const ctx = createBrainContext(platform.ctx.stores, silent);
const rss0 = rssMiB();
const seeder = new Seeder(ctx, ORG);
await seeder.prepare();
const t0 = performance.now();
await seeder.seed(0, SCALE, (done) => {
  if (done % 100_000 === 0)
    console.log(`seeded ${done} (${((performance.now() - t0) / 1000).toFixed(0)} s, rss ${rssMiB().toFixed(0)} MiB)`);
});
const c0 = performance.now();
const index = await ctx.indexes.fresh(ORG, 'knowledge');
console.log(
  `${SCALE} memories seeded in ${((c0 - t0) / 1000).toFixed(0)} s; lexical index built in ${((performance.now() - c0) / 1000).toFixed(1)} s`,
);
const warm = (await ctx.stores.embedder.embed(['warm up']))[0]!;
const v0 = performance.now();
await ctx.stores.vectors.search(ORG, warm, { limit: 1 });
console.log(
  `vector matrix loaded in ${((performance.now() - v0) / 1000).toFixed(1)} s; rss ${rssMiB().toFixed(0)} MiB (${rss0.toFixed(0)} before seeding)`,
);

// The approximate index builds in the background (searches scan meanwhile): wait until two
// searches in a row take under 3 ms.
const b0 = performance.now();
for (let fast = 0; fast < 2 && performance.now() - b0 < 3_600_000; ) {
  await new Promise((resolve) => setTimeout(resolve, 250));
  const t = performance.now();
  await ctx.stores.vectors.search(ORG, warm, { limit: 10, filter: { namespace: 'knowledge' } });
  fast = performance.now() - t < 3 ? fast + 1 : 0;
}
console.log(`approximate index built in ${((performance.now() - b0) / 1000).toFixed(0)} s; rss ${rssMiB().toFixed(0)} MiB`);

// The exact baseline: the same vectors in a store that never approximates.
const exactStore = createEmbeddedVectorStore({
  path: ':memory:',
  dimensions: ctx.stores.vectors.dimensions,
  approximateFrom: Number.POSITIVE_INFINITY,
});
for (let start = 0; start < SCALE; start += 1_000) {
  const points: VectorPoint[] = [];
  for (let i = start; i < Math.min(SCALE, start + 1_000); i++) {
    points.push({
      id: `knowledge/bench/${i}`,
      organizationId: ORG,
      vector: seeder.vector(i),
      payload: { namespace: 'knowledge', key: `bench/${i}` },
    });
  }
  await exactStore.upsert(points);
}
await exactStore.search(ORG, warm, { limit: 1 });
const exactCtx = createBrainContext({ ...platform.ctx.stores, vectors: exactStore }, silent);

// Distinct queries: the labeled set's, then reworded, so no query embedding is ever reused.
const queries = Array.from({ length: QUERIES }, (_, i) => {
  const q = qualityFixture.queries[i % qualityFixture.queries.length]!.query;
  return i < qualityFixture.queries.length ? q : `${q} (${i})`;
});
const vectors: Float32Array[] = [];
const stage = (name: string, s: LatencySummary) => ({
  stage: name,
  'p50 ms': s.p50,
  'p95 ms': s.p95,
  'p99 ms': s.p99,
  'per s': s.perSecond,
});
const rows = [];
rows.push(
  stage(
    'query embedding',
    await measure(QUERIES, 1, async (i) => void (vectors[i] = (await ctx.stores.embedder.embed([queries[i]!]))[0]!)),
  ),
);
rows.push(stage('BM25 (top 50)', await measure(QUERIES, 1, async (i) => index.search(queries[i]!, 50))));
const exactMatches: VectorMatch[][] = [];
const matches: VectorMatch[][] = [];
for (const [name, store, out] of [
  ['exact scan (baseline)', exactStore, exactMatches],
  ['HNSW + exact scores', ctx.stores.vectors, matches],
] as const) {
  const s = await measure(QUERIES, 1, async (i) => {
    out[i] = await store.search(ORG, vectors[i]!, { limit: 50, filter: { namespace: 'knowledge' } });
  });
  rows.push(stage(`vector search, ${name}, top 50`, s));
}
rows.push(
  stage(
    'fusion (100 candidates)',
    await measure(QUERIES, 1, async (i) => {
      const lexical = index.search(queries[i]!, 50).map((h) => ({ key: h.key, lexical: h.score }));
      const bm25 = index.scorer(queries[i]!);
      const semantic = matches[i]!.map((m) => ({
        key: String(m.payload.key),
        lexical: bm25(String(m.payload.key)),
        semantic: m.score,
      }));
      fuse([...lexical, ...semantic], 0.7);
    }),
  ),
);
rows.push(
  stage(
    'record reads (50)',
    await measure(QUERIES, 1, (i) => ctx.memories.getMany(matches[i]!.map((m) => memoryId(ORG, 'knowledge', String(m.payload.key))))),
  ),
);

/** Share of the baseline's top k that the other found. */
function overlap(found: string[][], baseline: string[][], k: number): number {
  let hits = 0;
  let total = 0;
  for (const [i, want] of baseline.entries()) {
    const ids = new Set(want.slice(0, k));
    hits += found[i]!.slice(0, k).filter((id) => ids.has(id)).length;
    total += ids.size;
  }
  return hits / total;
}
const ids = (list: VectorMatch[][]) => list.map((m) => m.map((x) => x.id));
console.log(
  `vector recall of HNSW against exact: @10 ${overlap(ids(matches), ids(exactMatches), 10).toFixed(3)}, @50 ${overlap(ids(matches), ids(exactMatches), 50).toFixed(3)}`,
);

const tops: Record<string, string[][]> = { exact: [], hnsw: [] };
for (const [name, c, out] of [
  ['exact scan', exactCtx, tops.exact!],
  ['HNSW', ctx, tops.hnsw!],
] as const) {
  const embedded = await measure(QUERIES, 1, async (i) => {
    const r = await hybridSearch(c, { organizationId: ORG, namespace: 'knowledge', query: queries[i]!, vector: vectors[i], limit: 10 });
    out[i] = r.results.map((x) => x.record.key);
  });
  rows.push(stage(`whole search (${name}), query embedded`, embedded));
  // New query texts for each run, so that no query embedding is remembered.
  const search = (tag: string) => (i: number) =>
    hybridSearch(c, { organizationId: ORG, namespace: 'knowledge', query: `${queries[i]} ${tag}`, limit: 10 });
  rows.push(stage(`whole search (${name}), one at a time`, await measure(QUERIES, 1, search(`${name} one`))));
  rows.push(stage(`whole search (${name}), 8 in flight`, await measure(QUERIES, 8, search(`${name} eight`))));
}
printTable(`One search over ${SCALE} memories of one organization (${QUERIES} distinct queries)`, rows);
console.log(`search top-10 overlap, HNSW against exact scan: ${overlap(tops.hnsw!, tops.exact!, 10).toFixed(3)}`);
console.log(`rss ${rssMiB().toFixed(0)} MiB`);
await exactStore.close();
await platform.stop();
