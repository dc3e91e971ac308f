// The evaluators: how one case's outcome (the memories found, best first, and an answer text) is
// scored against its expectations. Each scores only the cases that hold what it needs, and each
// score is 0-1. recall@k is the share of the expected memories among the first k found (as the
// Brain's labeled suites measure it); the reciprocal rank is 1 / the rank of the first expected
// memory found (0 when none was), which the evaluation's MRR averages.
import { Evaluator, type Case, type MemoryKey } from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { compilePattern } from '../../services/agents/handlers/evaluation/case-validation.ts';

export interface Outcome {
  found: { namespace: string; key: string }[];
  answer: string;
}

export interface CaseScore {
  name: string;
  value: number;
  passed: boolean;
}

const RECALL_AT = [1, 5, 10];
const sameKey = (a: { namespace: string; key: string }, b: MemoryKey) => a.namespace === b.namespace && a.key === b.key;
const pass = (name: string, passed: boolean): CaseScore => ({ name, value: passed ? 1 : 0, passed });

/** The 1-based rank of the first expected memory found, 0 when none was. */
export function firstRelevantRank(c: Pick<Case, 'expectedMemories'>, outcome: Outcome): number {
  const index = outcome.found.findIndex((f) => c.expectedMemories.some((e) => sameKey(f, e)));
  return index + 1;
}

function retrieval(c: Case, outcome: Outcome): CaseScore[] {
  const expected = c.expectedMemories;
  const scores = RECALL_AT.map((k) => {
    const top = outcome.found.slice(0, k);
    const hits = expected.filter((e) => top.some((f) => sameKey(f, e))).length;
    const value = hits / expected.length;
    return { name: `recall@${k}`, value, passed: value === 1 };
  });
  const rank = firstRelevantRank(c, outcome);
  scores.push({ name: 'reciprocal_rank', value: rank === 0 ? 0 : 1 / rank, passed: rank === 1 });
  return scores;
}

/** Every score of the case by the evaluators asked for. */
export function scoreCase(c: Case, outcome: Outcome, evaluators: Evaluator[]): CaseScore[] {
  const scores: CaseScore[] = [];
  const expected = c.expectedAnswer.trim();
  if (evaluators.includes(Evaluator.EXACT) && expected !== '') scores.push(pass('exact', outcome.answer.trim() === expected));
  if (evaluators.includes(Evaluator.CONTAINS) && expected !== '')
    scores.push(pass('contains', outcome.answer.toLowerCase().includes(expected.toLowerCase())));
  // RE2 matches in time linear in the answer: a pattern cannot stall the worker.
  if (evaluators.includes(Evaluator.REGEX) && c.answerPattern !== '')
    scores.push(pass('regex', compilePattern(c.answerPattern).matcher(outcome.answer).find()));
  if (evaluators.includes(Evaluator.RETRIEVAL) && c.expectedMemories.length > 0) scores.push(...retrieval(c, outcome));
  return scores;
}
