// Measures the blog search on the labeled queries of test/support/web-search-labels.ts: top-1
// accuracy, mean reciprocal rank and recall@3 for lexical only, semantic only, linear fusions
// over a range of weights and floors, and reciprocal-rank fusion; with the head chunk only and
// with section chunks. Prints a table; DEFAULT_FUSION in edge/web/search.ts comes from it.
//
//   ./node_modules/.bin/node test/bench/web-search-eval.bench.ts
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEmbedder } from '../../services/common/embeddings/index.ts';
import { loadContent } from '../../edge/web/content.ts';
import { createSearchIndex, type BlogSearchIndex, type Fusion } from '../../edge/web/search.ts';
import { LABELED_QUERIES, OFF_TOPIC_QUERIES } from '../support/web-search-labels.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const content = loadContent(path.join(root, 'content'));
const embedder = await createEmbedder({ provider: 'use-lite', threads: 2, model: 'use-lite-512' });

interface Row {
  name: string;
  top1: number;
  mrr: number;
  recall3: number;
  offTopic: number;
}

async function evaluate(index: BlogSearchIndex, fusion: Fusion, name: string): Promise<Row> {
  let top1 = 0;
  let mrr = 0;
  let recall3 = 0;
  for (const { query, expected } of LABELED_QUERIES) {
    const { hits } = await index.search(query, { limit: 10, fusion });
    const rank = hits.findIndex((h) => h.post.slug === expected) + 1;
    if (rank === 1) top1++;
    if (rank > 0) mrr += 1 / rank;
    if (rank > 0 && rank <= 3) recall3++;
  }
  let offTopic = 0;
  for (const query of OFF_TOPIC_QUERIES) offTopic += (await index.search(query, { limit: 10, fusion })).hits.length;
  const n = LABELED_QUERIES.length;
  return { name, top1: top1 / n, mrr: mrr / n, recall3: recall3 / n, offTopic: offTopic / OFF_TOPIC_QUERIES.length };
}

const rows: Row[] = [];
for (const [label, maxSectionChunks] of [
  ['head', 0],
  ['sections', 6],
] as const) {
  const index = await createSearchIndex(content.posts, { embedder, maxSectionChunks });
  const base: Fusion = { method: 'linear', lexicalWeight: 1, semanticFloor: 0.3, rrfK: 60 };
  rows.push(await evaluate(index, { ...base, lexicalWeight: 1, semanticFloor: 2 }, `${label} lexical only`));
  for (const floor of [0.2, 0.25, 0.3, 0.35, 0.4]) {
    rows.push(await evaluate(index, { ...base, lexicalWeight: 0, semanticFloor: floor }, `${label} semantic only, floor ${floor}`));
    for (const w of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]) {
      rows.push(await evaluate(index, { ...base, lexicalWeight: w, semanticFloor: floor }, `${label} linear w=${w} floor ${floor}`));
    }
    for (const w of [0.5, 0.6, 0.7]) {
      rows.push(
        await evaluate(index, { ...base, method: 'rrf', lexicalWeight: w, semanticFloor: floor }, `${label} rrf w=${w} floor ${floor}`),
      );
    }
  }
}
await embedder.close();

const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);
console.log(`${LABELED_QUERIES.length} labeled queries over ${content.posts.length} posts; off-topic: mean results per off-topic query\n`);
console.log(`${'configuration'.padEnd(40)}   top-1     MRR  recall@3  off-topic`);
for (const r of rows) {
  console.log(
    `${r.name.padEnd(40)} ${pct(r.top1)} ${r.mrr.toFixed(3).padStart(7)} ${pct(r.recall3)} ${r.offTopic.toFixed(2).padStart(10)}`,
  );
}
