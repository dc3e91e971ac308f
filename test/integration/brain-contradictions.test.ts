// The contradiction detector on the labeled pairs of test/fixtures/brain-contradictions.txt, held
// to floors a little below what it reaches (figures: test/bench/brain-contradictions.bench.ts and
// docs/brain.md). A change to the rule, the word lists or the stemmer that costs precision or
// recall fails here.
import { describe, expect, it } from 'vitest';
import { evaluate, loadPairs } from '../support/contradiction-labels.ts';

/** Reached 0.972 / 0.966 on all pairs and 1.000 / 0.944 on the held-out ones (2026-11-24). */
const FLOORS = { all: { precision: 0.94, recall: 0.93 }, heldOut: { precision: 0.92, recall: 0.88 } };

describe('contradiction detector on the labeled pairs', () => {
  const pairs = loadPairs();

  it('has at least 400 pairs of each label, a third of them small talk, numbers elsewhere and paraphrases', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(400);
    for (const label of ['contradiction', 'compatible', 'unrelated'] as const) {
      expect(pairs.filter((p) => p.label === label).length).toBeGreaterThanOrEqual(100);
    }
    const hard = pairs.filter((p) => ['smalltalk', 'numbers-elsewhere', 'paraphrase'].includes(p.category));
    expect(hard.length * 3).toBeGreaterThanOrEqual(pairs.length);
    expect(pairs.filter((p) => p.heldOut).length).toBeGreaterThanOrEqual(90);
  });

  it('holds precision and recall above their floors, on all pairs and on the held-out ones', () => {
    const all = evaluate(pairs);
    const heldOut = evaluate(pairs.filter((p) => p.heldOut));
    const { mistakes, ...figures } = all;
    console.log(
      `contradiction detector: ${JSON.stringify({ ...figures, heldOut: { precision: heldOut.precision, recall: heldOut.recall } })}`,
    );
    expect(all.precision).toBeGreaterThanOrEqual(FLOORS.all.precision);
    expect(all.recall).toBeGreaterThanOrEqual(FLOORS.all.recall);
    expect(heldOut.precision).toBeGreaterThanOrEqual(FLOORS.heldOut.precision);
    expect(heldOut.recall).toBeGreaterThanOrEqual(FLOORS.heldOut.recall);
    expect(mistakes.length).toBe(all.falsePositives + all.falseNegatives);
  });

  it('never refuses a correction as a duplicate', () => {
    expect(evaluate(pairs).contradictionsRefusedAsDuplicates).toBe(0);
  });

  it('raises almost no flag on small talk and episodes that look alike', () => {
    const chatter = evaluate(pairs.filter((p) => p.category === 'smalltalk' || p.category === 'episode'));
    expect(chatter.falsePositives).toBeLessThanOrEqual(4);
  });
});
