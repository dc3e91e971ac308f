// Precision and recall of the model-free relationship extractor on the labeled sentences
// (test/fixtures/graph-extraction.jsonl). Run: ./node_modules/.bin/node test/bench/graph-extraction.bench.ts
// With VERBOSE=1 it lists every miss and every wrong relationship.
import { createPatternExtractor } from '../../services/entity-graph/extractor/patterns.ts';
import { loadLabeledSentences, scoreExtractor } from '../support/graph-extraction-eval.ts';

for (const file of ['graph-extraction.jsonl', 'graph-extraction-heldout.jsonl']) {
  console.log(`\n== ${file}`);
  const score = await scoreExtractor(createPatternExtractor(), loadLabeledSentences(file));
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  console.log(`sentences ${score.sentences}, labeled relationships ${score.labeled}, found ${score.found}, correct ${score.correct}`);
  console.log(`precision ${pct(score.precision)}  recall ${pct(score.recall)}`);
  console.log('predicate        labeled  found  correct  precision  recall');
  for (const [p, t] of Object.entries(score.byPredicate).sort()) {
    const precision = t.found ? t.correct / t.found : 0;
    const recall = t.labeled ? t.correct / t.labeled : 0;
    console.log(
      `${p.padEnd(16)} ${String(t.labeled).padStart(7)} ${String(t.found).padStart(6)} ${String(t.correct).padStart(8)}  ${pct(precision).padStart(9)} ${pct(recall).padStart(7)}`,
    );
  }
  if (process.env.VERBOSE) {
    console.log('\nmissed:');
    for (const m of score.misses) console.log(`  ${m}`);
    console.log('\nwrong:');
    for (const w of score.wrong) console.log(`  ${w}`);
  }
}
