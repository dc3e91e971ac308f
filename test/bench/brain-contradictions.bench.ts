// Precision and recall of the Brain's write-time contradiction detector on the labeled pairs of
// test/fixtures/brain-contradictions.txt (each pair: memory B written after memory A, as
// PutMemory compares them), per label and category, on all pairs and on the held-out part, with
// every mistake listed, and what the comparison costs per pair.
// Run: ./node_modules/.bin/node test/bench/brain-contradictions.bench.ts
import { performance } from 'node:perf_hooks';
import { evaluate, judge, loadPairs } from '../support/contradiction-labels.ts';

const pairs = loadPairs();
const all = evaluate(pairs);
const tuned = evaluate(pairs.filter((p) => !p.heldOut));
const heldOut = evaluate(pairs.filter((p) => p.heldOut));

// Cost: every pair judged REPEAT times (analysis of both texts, alignment, the rules, the duplicate check).
const REPEAT = 20;
judge(pairs[0]);
const start = performance.now();
for (let i = 0; i < REPEAT; i++) for (const p of pairs) judge(p);
const perPairUs = ((performance.now() - start) * 1000) / (REPEAT * pairs.length);

const row = (name: string, r: typeof all) =>
  `${name.padEnd(10)} pairs ${String(r.pairs).padStart(4)}  precision ${r.precision.toFixed(3)}  recall ${r.recall.toFixed(3)}  ` +
  `(tp ${r.truePositives}, fp ${r.falsePositives}, fn ${r.falseNegatives})`;
console.log(row('all', all));
console.log(row('tuned', tuned));
console.log(row('held-out', heldOut));
console.log(`labels: ${JSON.stringify(all.byLabel)}; corrections refused as duplicates: ${all.contradictionsRefusedAsDuplicates}`);
console.log(`comparison cost: ${perPairUs.toFixed(1)} µs per pair (both texts analysed)`);
console.log('flags raised per label/category:');
for (const [category, flags] of Object.entries(all.flagsByCategory)) console.log(`  ${category.padEnd(34)} ${flags}`);
console.log('mistakes:');
for (const m of all.mistakes) {
  const what = m.flagged ? `false ${m.flagged.rule}` : 'missed';
  console.log(`  line ${m.pair.line} ${m.pair.label}/${m.pair.category}: ${what}: "${m.pair.a}" / "${m.pair.b}"`);
}
