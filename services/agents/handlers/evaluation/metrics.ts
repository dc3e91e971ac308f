// Aggregates of an evaluation and the comparison of two. Each case's scores are what the worker
// measured (evaluators named by what they score); an aggregate is the mean of one score over the
// cases that have it: recall@k as is, the reciprocal rank as `mrr`, an answer evaluator as its
// pass rate.
import type { CaseResultRecord, MetricRecord, ScoreRecord } from './records.ts';

const ANSWER_EVALUATORS = new Set(['exact', 'contains', 'regex', 'llm_judge']);
const round = (x: number) => Math.round(x * 10_000) / 10_000;

export const metricName = (score: string) =>
  score === 'reciprocal_rank' ? 'mrr' : ANSWER_EVALUATORS.has(score) ? `${score}_pass_rate` : score;

/** The mean of every score over the cases that have it, in a stable order. */
export function aggregate(results: Pick<CaseResultRecord, 'scores'>[]): MetricRecord[] {
  const sums = new Map<string, { total: number; cases: number }>();
  for (const result of results) {
    for (const score of result.scores) {
      const name = metricName(score.name);
      const sum = sums.get(name) ?? { total: 0, cases: 0 };
      sum.total += score.value;
      sum.cases += 1;
      sums.set(name, sum);
    }
  }
  return [...sums.entries()]
    .map(([name, s]) => ({ name, value: round(s.total / s.cases), cases: s.cases }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export interface MetricDelta {
  name: string;
  base: number;
  head: number;
  delta: number;
}

/** Metrics of either side; one missing on a side counts as 0 there. */
export function metricDeltas(base: MetricRecord[], head: MetricRecord[]): MetricDelta[] {
  const names = [...new Set([...base, ...head].map((m) => m.name))].sort();
  const value = (list: MetricRecord[], name: string) => list.find((m) => m.name === name)?.value ?? 0;
  return names.map((name) => {
    const b = value(base, name);
    const h = value(head, name);
    return { name, base: b, head: h, delta: round(h - b) };
  });
}

const scoreOf = (scores: ScoreRecord[], name: string) => scores.find((s) => s.name === name)?.value;

/** improved / regressed / changed, or undefined when every score is the same. */
export function changeOf(base: ScoreRecord[], head: ScoreRecord[]): string | undefined {
  const names = new Set([...base, ...head].map((s) => s.name));
  const same = [...names].every((n) => scoreOf(base, n) === scoreOf(head, n));
  if (same) return undefined;
  const rr = (scoreOf(head, 'reciprocal_rank') ?? 0) - (scoreOf(base, 'reciprocal_rank') ?? 0);
  if (rr !== 0) return rr > 0 ? 'improved' : 'regressed';
  const passes = (scores: ScoreRecord[]) => scores.filter((s) => ANSWER_EVALUATORS.has(s.name) && s.passed).length;
  const answers = passes(head) - passes(base);
  if (answers !== 0) return answers > 0 ? 'improved' : 'regressed';
  return 'changed';
}
