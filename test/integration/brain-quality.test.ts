// Retrieval quality on the labeled set of test/fixtures/brain-quality.json (2,080 memories, 260
// queries, one relevant memory each): recall@5 and MRR (over the top 10) for BM25 alone, the
// embedding alone and the fused ranking the brain uses, with floors that catch regressions.
// The memories are ingested through the brain's PutMemories RPC (embedding included); the three rankings
// then run through the brain's own hybrid search with different lexical weights, sharing the
// query embeddings. Figures are printed (and written to brain-quality-report.json when
// BRAIN_QUALITY_REPORT is set) for docs/brain.md.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrainContext, type BrainContext } from '../../services/brain/context.ts';
import { hybridSearch } from '../../services/brain/search/hybrid.ts';
import { DEFAULT_WEIGHTS } from '../../services/brain/search/ranking.ts';
import { createLogger } from '../../services/common/log.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { ingest } from '../support/retrieval-eval.ts';

interface Fixture {
  memories: { namespace: 'knowledge' | 'episodes'; key: string; title: string; content: string; tags: string[]; entities: string[] }[];
  queries: { namespace: 'knowledge' | 'episodes'; query: string; relevant: string[]; kind: string }[];
}

const fixture: Fixture = JSON.parse(
  fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/brain-quality.json'), 'utf8'),
);
const ORG = 'org-quality';

/** Floors a few points under the measured figures (docs/brain.md), so that noise does not fail CI. */
const FLOORS = {
  lexical: { recallAt5: 0.6, mrr: 0.5 },
  semantic: { recallAt5: 0.3, mrr: 0.2 },
  fused: { recallAt5: 0.78, mrr: 0.68 },
};

let platform: TestPlatform;
let vectors: Float32Array[] = [];

interface Metrics {
  recallAt5: number;
  mrr: number;
  byKind: Record<string, { recallAt5: number; mrr: number; n: number }>;
}

async function evaluate(ctx: BrainContext): Promise<Metrics> {
  let hits = 0;
  let rr = 0;
  const byKind: Metrics['byKind'] = {};
  for (const [i, q] of fixture.queries.entries()) {
    const { results } = await hybridSearch(ctx, {
      organizationId: ORG,
      namespace: q.namespace,
      query: q.query,
      vector: vectors[i],
      limit: 10,
    });
    const rank = results.findIndex((r) => q.relevant.includes(r.record.key));
    const k = (byKind[q.kind] ??= { recallAt5: 0, mrr: 0, n: 0 });
    k.n += 1;
    if (rank >= 0 && rank < 5) {
      hits += 1;
      k.recallAt5 += 1;
    }
    if (rank >= 0) {
      rr += 1 / (rank + 1);
      k.mrr += 1 / (rank + 1);
    }
  }
  for (const k of Object.values(byKind)) {
    k.recallAt5 = round(k.recallAt5 / k.n);
    k.mrr = round(k.mrr / k.n);
  }
  return { recallAt5: round(hits / fixture.queries.length), mrr: round(rr / fixture.queries.length), byKind };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

beforeAll(async () => {
  platform = await startTestPlatform({ EMBEDDINGS_THREADS: '2' });
  // Written through PutMemories, 25 per call: the texts of a call are embedded together.
  await ingest(platform.ctx.clients.brain, ORG, fixture.memories);
  vectors = await Promise.all(fixture.queries.map(async (q) => (await platform.ctx.stores.embedder.embed([q.query]))[0]));
}, 900_000);

afterAll(async () => {
  await platform?.stop();
});

describe('retrieval quality on the labeled set', () => {
  it('has at least 200 queries over at least 2,000 memories', () => {
    expect(fixture.memories.length).toBeGreaterThanOrEqual(2_000);
    expect(fixture.queries.length).toBeGreaterThanOrEqual(200);
  });

  it('reports BM25 alone, embeddings alone and fused above their floors', async () => {
    const logger = createLogger({ level: 'silent' });
    // The single signals without the query cues' bonus (query-cues.ts), which is the brain's.
    const context = (lexical: number, cues = DEFAULT_WEIGHTS.cues) =>
      createBrainContext(platform.ctx.stores, logger, { weights: { lexical, cues } });
    const lexical = await evaluate(context(1, 0));
    const semantic = await evaluate(context(0, 0));
    const fused = await evaluate(context(DEFAULT_WEIGHTS.lexical));
    const sweep: Record<string, { recallAt5: number; mrr: number }> = {};
    for (const w of [0.3, 0.5, 0.6, 0.7, 0.8, 0.9]) {
      const m = await evaluate(context(w));
      sweep[w] = { recallAt5: m.recallAt5, mrr: m.mrr };
    }
    const report = {
      memories: fixture.memories.length,
      queries: fixture.queries.length,
      lexical,
      semantic,
      fused,
      fusedWeight: DEFAULT_WEIGHTS.lexical,
      sweep,
    };
    console.log(`brain retrieval quality: ${JSON.stringify(report, null, 2)}`);
    if (process.env.BRAIN_QUALITY_REPORT) fs.writeFileSync(process.env.BRAIN_QUALITY_REPORT, JSON.stringify(report, null, 2));
    expect(lexical.recallAt5).toBeGreaterThanOrEqual(FLOORS.lexical.recallAt5);
    expect(lexical.mrr).toBeGreaterThanOrEqual(FLOORS.lexical.mrr);
    expect(semantic.recallAt5).toBeGreaterThanOrEqual(FLOORS.semantic.recallAt5);
    expect(semantic.mrr).toBeGreaterThanOrEqual(FLOORS.semantic.mrr);
    expect(fused.recallAt5).toBeGreaterThanOrEqual(FLOORS.fused.recallAt5);
    expect(fused.mrr).toBeGreaterThanOrEqual(FLOORS.fused.mrr);
    // The fusion must not lose to its better signal.
    expect(fused.mrr).toBeGreaterThanOrEqual(Math.max(lexical.mrr, semantic.mrr) - 0.005);
  }, 300_000);
});
