// Scores an extractor on the labeled sentences of test/fixtures/graph-extraction.jsonl: a found
// relationship is right when its subject, predicate and object equal a labeled one (names compared
// as the graph compares them: case-folded, whitespace collapsed, a leading "the" dropped).
import { readFileSync } from 'node:fs';
import type { RelationshipExtractor } from '../../services/entity-graph/extractor/interface.ts';
import { normalizeName } from '../../services/entity-graph/records.ts';

export interface LabeledSentence {
  text: string;
  entities: string[];
  expect: [string, string, string][];
}

export interface ExtractionScore {
  sentences: number;
  labeled: number;
  found: number;
  correct: number;
  precision: number;
  recall: number;
  byPredicate: Record<string, { labeled: number; found: number; correct: number }>;
  misses: string[];
  wrong: string[];
}

/** The tuning set (graph-extraction.jsonl) or the held-out set, read only to measure (graph-extraction-heldout.jsonl). */
export function loadLabeledSentences(file = 'graph-extraction.jsonl'): LabeledSentence[] {
  const path = new URL(`../fixtures/${file}`, import.meta.url);
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as LabeledSentence);
}

const keyOf = (s: string, p: string, o: string) => `${normalizeName(s)} -[${p}]-> ${normalizeName(o)}`;

export async function scoreExtractor(extractor: RelationshipExtractor, set = loadLabeledSentences()): Promise<ExtractionScore> {
  const score: ExtractionScore = {
    sentences: set.length,
    labeled: 0,
    found: 0,
    correct: 0,
    precision: 0,
    recall: 0,
    byPredicate: {},
    misses: [],
    wrong: [],
  };
  const tally = (p: string) => (score.byPredicate[p] ??= { labeled: 0, found: 0, correct: 0 });
  for (const item of set) {
    const expected = new Map(item.expect.map(([s, p, o]) => [keyOf(s, p, o), p]));
    const found = await extractor.extract({ text: item.text, entities: item.entities });
    const got = new Map(found.map((r) => [keyOf(r.subject, r.predicate, r.object), r.predicate]));
    for (const [key, p] of expected) {
      tally(p).labeled++;
      if (got.has(key)) tally(p).correct++;
      else score.misses.push(`${item.text}  ✗ ${key}`);
    }
    for (const [key, p] of got) {
      tally(p).found++;
      if (!expected.has(key)) score.wrong.push(`${item.text}  ✗ ${key}`);
    }
    score.labeled += expected.size;
    score.found += got.size;
    score.correct += [...got.keys()].filter((k) => expected.has(k)).length;
  }
  score.precision = score.found === 0 ? 0 : score.correct / score.found;
  score.recall = score.labeled === 0 ? 0 : score.correct / score.labeled;
  return score;
}
