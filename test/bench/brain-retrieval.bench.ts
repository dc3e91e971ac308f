// Retrieval quality of the brain on both labeled sets, beside plain BM25 and plain embeddings:
// recall@1/5/10/20 (share of each question's evidence in the top k) and MRR, overall and per
// kind of question. Both sets are written through PutMemories (embedding included) into one
// organization each, then every question runs through the brain's hybrid search:
//   - BM25 alone: lexical weight 1, no recency or feedback;
//   - embeddings alone: lexical weight 0, no recency or feedback;
//   - the brain without query cues (query-cues.ts), and its default ranking (DEFAULT_WEIGHTS).
// Run: ./node_modules/.bin/node test/bench/brain-retrieval.bench.ts   (SETS=conversations for one;
// DATA_DIR=/some/dir keeps the stores there, and a later run with the same DATA_DIR skips writing
// sets already written: for comparing rankings without paying for the embedding again.)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBrainContext } from '../../services/brain/context.ts';
import { DEFAULT_WEIGHTS, type RankingWeights } from '../../services/brain/search/ranking.ts';
import { createLogger } from '../../services/common/log.ts';
import { startTestPlatform } from '../support/platform.ts';
import { embedQueries, evaluate, ingest, type LabeledMemory, type LabeledQuery, type Report } from '../support/retrieval-eval.ts';
import { printTable } from './support.ts';

const SETS = (process.env.SETS ?? 'quality,conversations').split(',');
const here = path.dirname(fileURLToPath(import.meta.url));
const load = (name: string) =>
  JSON.parse(fs.readFileSync(path.join(here, `../fixtures/brain-${name}.json`), 'utf8')) as {
    memories: LabeledMemory[];
    queries: LabeledQuery[];
  };

const platform = await startTestPlatform({
  EMBEDDINGS_THREADS: process.env.EMBEDDINGS_THREADS ?? '2',
  LOG_LEVEL: 'warn',
  ...(process.env.DATA_DIR ? { DATA_DIR: process.env.DATA_DIR } : {}),
});
const logger = createLogger({ level: 'silent' });
const context = (weights: Partial<RankingWeights>) => createBrainContext(platform.ctx.stores, logger, { weights });
const RANKINGS: [string, Partial<RankingWeights>][] = [
  ['BM25 alone', { lexical: 1, recency: 0, feedback: 0, cues: 0 }],
  ['embeddings alone', { lexical: 0, recency: 0, feedback: 0, cues: 0 }],
  ['brain without query cues', { ...DEFAULT_WEIGHTS, cues: 0 }],
  ['brain (default)', DEFAULT_WEIGHTS],
];

const row = (set: string, ranking: string, kind: string, r: Omit<Report, 'byKind'>) => ({
  set,
  ranking,
  kind,
  n: r.n,
  'R@1': r.recall[1],
  'R@5': r.recall[5],
  'R@10': r.recall[10],
  'R@20': r.recall[20],
  MRR: r.mrr,
});

for (const set of SETS) {
  const fixture = load(set);
  const org = `org-${set}`;
  const t0 = performance.now();
  const held = Number((await platform.ctx.clients.brain.getUsage({ organizationId: org })).memories);
  if (held < fixture.memories.length) await ingest(platform.ctx.clients.brain, org, fixture.memories);
  const seconds = (performance.now() - t0) / 1000;
  console.log(`${set}: ${fixture.memories.length} memories written in ${seconds.toFixed(1)} s, ${fixture.queries.length} questions`);
  const vectors = await embedQueries(context({}), fixture.queries);
  const rows = [];
  for (const [name, weights] of RANKINGS) {
    const report = await evaluate(context(weights), org, fixture.queries, vectors);
    rows.push(row(set, name, 'all', report));
    for (const [kind, m] of Object.entries(report.byKind)) rows.push(row(set, name, kind, m));
  }
  printTable(`Retrieval on ${set} (recall = share of evidence in the top k)`, rows);
  if (process.env.SWEEP) {
    const sweep = [];
    for (const lexical of [0.4, 0.5, 0.6, 0.7, 0.8]) {
      for (const cues of [0, 0.1, 0.2, 0.3]) {
        const report = await evaluate(context({ ...DEFAULT_WEIGHTS, lexical, cues }), org, fixture.queries, vectors);
        sweep.push(row(set, `lexical ${lexical} cues ${cues}`, 'all', report));
      }
    }
    printTable(`Lexical weight sweep on ${set}`, sweep);
  }
}
await platform.stop();
