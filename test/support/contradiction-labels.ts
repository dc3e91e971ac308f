// The labeled memory pairs of test/fixtures/brain-contradictions.txt and how the Brain's
// write-time checks do on them: memory B written after memory A, as compareMemories decides in
// PutMemory. Used by test/bench/brain-contradictions.bench.ts (figures) and
// test/integration/brain-contradictions.test.ts (CI floors).
import { readFileSync } from 'node:fs';
import { analyze, compareMemories, wordSet, type ComparedMemory, type Disagreement } from '../../services/brain/contradiction-detector.ts';
import { contentHash } from '../../services/brain/text.ts';

export type PairLabel = 'contradiction' | 'compatible' | 'unrelated';

export interface LabeledPair {
  line: number;
  label: PairLabel;
  category: string;
  namespace: 'knowledge' | 'episodes';
  a: string;
  b: string;
  entities: string[];
  /** Written after the rule was tuned, and not used to tune it (after the `@held-out` line). */
  heldOut: boolean;
}

export const PAIRS_FILE = new URL('../fixtures/brain-contradictions.txt', import.meta.url);

export function loadPairs(): LabeledPair[] {
  const pairs: LabeledPair[] = [];
  let heldOut = false;
  readFileSync(PAIRS_FILE, 'utf8')
    .split('\n')
    .forEach((raw, i) => {
      const line = raw.trim();
      if (line.includes('@held-out')) heldOut = true;
      if (!line || line.startsWith('#')) return;
      const [label, category, namespace, a, b, entities] = line.split('|');
      if (!['contradiction', 'compatible', 'unrelated'].includes(label) || !a || !b) throw new Error(`line ${i + 1}: malformed pair`);
      if (namespace !== 'knowledge' && namespace !== 'episodes') throw new Error(`line ${i + 1}: namespace must be knowledge or episodes`);
      pairs.push({
        line: i + 1,
        label: label as PairLabel,
        category,
        namespace,
        a,
        b,
        entities: entities ? entities.split(',').map((e) => e.trim()) : [],
        heldOut,
      });
    });
  return pairs;
}

export interface PairOutcome {
  pair: LabeledPair;
  flagged?: Disagreement;
  duplicate?: 'exact' | 'near';
}

function memory(text: string, entities: string[]): ComparedMemory {
  return { text, claims: analyze(text, entities), words: wordSet(text), hash: contentHash(text), tags: [], entities };
}

export function judge(pair: LabeledPair): PairOutcome {
  const found = compareMemories(memory(pair.b, pair.entities), memory(pair.a, pair.entities), { episodes: pair.namespace === 'episodes' });
  return { pair, flagged: found.disagreement, duplicate: found.duplicate };
}

export interface DetectorReport {
  pairs: number;
  byLabel: Record<PairLabel, number>;
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  precision: number;
  recall: number;
  /** Contradictions the write would have refused as duplicates: corrections lost. */
  contradictionsRefusedAsDuplicates: number;
  /** Flags raised per category (false ones for compatible and unrelated). */
  flagsByCategory: Record<string, string>;
  mistakes: PairOutcome[];
}

export function evaluate(pairs: LabeledPair[] = loadPairs()): DetectorReport {
  const outcomes = pairs.map(judge);
  const tp = outcomes.filter((o) => o.flagged && o.pair.label === 'contradiction').length;
  const fp = outcomes.filter((o) => o.flagged && o.pair.label !== 'contradiction').length;
  const fn = outcomes.filter((o) => !o.flagged && o.pair.label === 'contradiction').length;
  const byCategory = new Map<string, { flagged: number; n: number }>();
  for (const o of outcomes) {
    const key = `${o.pair.label}/${o.pair.category}`;
    const entry = byCategory.get(key) ?? { flagged: 0, n: 0 };
    entry.n += 1;
    if (o.flagged) entry.flagged += 1;
    byCategory.set(key, entry);
  }
  const count = (label: PairLabel) => pairs.filter((p) => p.label === label).length;
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    pairs: pairs.length,
    byLabel: { contradiction: count('contradiction'), compatible: count('compatible'), unrelated: count('unrelated') },
    truePositives: tp,
    falsePositives: fp,
    falseNegatives: fn,
    precision: round(tp / Math.max(1, tp + fp)),
    recall: round(tp / Math.max(1, tp + fn)),
    contradictionsRefusedAsDuplicates: outcomes.filter((o) => o.pair.label === 'contradiction' && o.duplicate).length,
    flagsByCategory: Object.fromEntries([...byCategory].map(([k, v]) => [k, `${v.flagged}/${v.n}`])),
    mistakes: outcomes.filter((o) => Boolean(o.flagged) !== (o.pair.label === 'contradiction')),
  };
}
