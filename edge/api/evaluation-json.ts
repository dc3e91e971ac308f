// The Agents API's shapes of evaluation: datasets, cases (also one JSON Lines line each, in the
// import and the export), evaluations, their results and comparisons, with the mappings from the
// agents service's messages.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import {
  EvaluationStatus,
  Evaluator,
  type Case,
  type CaseResult,
  type CompareEvaluationsResponse,
  type Dataset,
  type Evaluation,
} from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { LIMITS, patternProblem } from '../../services/agents/handlers/evaluation/case-validation.ts';
import { iso } from './rest-route.ts';

export const EVALUATOR_NAMES = ['exact', 'contains', 'regex', 'retrieval', 'llm_judge'] as const;
export const EVALUATOR_ENUM: Record<(typeof EVALUATOR_NAMES)[number], Evaluator> = {
  exact: Evaluator.EXACT,
  contains: Evaluator.CONTAINS,
  regex: Evaluator.REGEX,
  retrieval: Evaluator.RETRIEVAL,
  llm_judge: Evaluator.LLM_JUDGE,
};
const STATUS_NAMES: Record<number, string> = {
  [EvaluationStatus.QUEUED]: 'queued',
  [EvaluationStatus.RUNNING]: 'running',
  [EvaluationStatus.SUCCEEDED]: 'succeeded',
  [EvaluationStatus.FAILED]: 'failed',
};

const Namespace = z.enum(['knowledge', 'episodes'], { error: 'must be knowledge or episodes' });
const MemoryKeySchema = z
  .object({
    namespace: Namespace,
    key: z
      .string()
      .regex(/\S/, { error: 'must not be empty' })
      .max(LIMITS.key, { error: `must be at most ${LIMITS.key} characters` }),
  })
  .strict()
  .meta({ title: 'MemoryKey' });

/** A case as written: the body of addEvaluationCase and one line of an import. */
export const NewCaseSchema = z
  .object({
    input: z.string({ error: 'must be a string' }).trim().min(1, { error: 'must not be empty' }).max(LIMITS.input),
    alert: z.string().max(LIMITS.alert).optional().meta({ description: 'An alert-like text searched with the input.' }),
    namespace: Namespace.optional().meta({ description: 'The namespace searched; left out, both (the Brain recall).' }),
    expected_memories: z.array(MemoryKeySchema).max(LIMITS.memories).optional(),
    expected_answer: z.string().max(LIMITS.expectedAnswer).optional(),
    answer_pattern: z
      .string()
      .superRefine((value, ctx) => {
        const problem = patternProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional()
      .meta({ description: 'RE2 syntax (no backreferences or lookarounds), at most 1000 characters; matched anywhere in the answer.' }),
    labels: z
      .array(z.string().regex(/\S/, { error: 'must not be empty' }).max(LIMITS.label))
      .max(LIMITS.labels)
      .optional(),
  })
  .strict()
  .refine((c) => (c.expected_memories?.length ?? 0) > 0 || (c.expected_answer ?? '').trim() !== '' || (c.answer_pattern ?? '') !== '', {
    error: 'give expected_memories, expected_answer or answer_pattern',
  })
  .meta({ title: 'NewEvaluationCase' });
export type NewCaseJson = z.output<typeof NewCaseSchema>;

export const DatasetSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    description: z.string(),
    case_count: z.int(),
    created_by: z.string(),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ title: 'EvaluationDataset' });

export const CaseSchema = z
  .object({
    id: z.string(),
    dataset_id: z.string(),
    seq: z.int(),
    input: z.string(),
    alert: z.string(),
    namespace: Namespace.nullable(),
    expected_memories: z.array(MemoryKeySchema),
    expected_answer: z.string(),
    answer_pattern: z.string(),
    labels: z.array(z.string()),
    created_at: z.string().nullable(),
  })
  .meta({ title: 'EvaluationCase' });

const ScoreSchema = z.object({ name: z.string(), value: z.number(), passed: z.boolean() }).meta({ title: 'EvaluationScore' });
const MetricSchema = z.object({ name: z.string(), value: z.number(), cases: z.int() }).meta({ title: 'EvaluationMetric' });

export const EvaluationSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    dataset_id: z.string(),
    subject: z
      .discriminatedUnion('type', [
        z.object({ type: z.literal('brain_search'), limit: z.int() }),
        z.object({
          type: z.literal('playbook'),
          playbook_id: z.string(),
          version: z.int().meta({ description: 'The version evaluated (the one published when created, if none was named).' }),
          input_name: z.string().nullable(),
          alert_input_name: z.string().nullable(),
          timeout_seconds: z.int(),
        }),
      ])
      .meta({ title: 'EvaluationSubject' }),
    evaluators: z.array(z.enum(EVALUATOR_NAMES)),
    status: z.enum(['queued', 'running', 'succeeded', 'failed']),
    label: z.string(),
    case_total: z.int(),
    cases_scored: z.int(),
    metrics: z.array(MetricSchema).meta({ description: 'recall@1/5/10, mrr and <evaluator>_pass_rate, once finished.' }),
    error: z.string().nullable(),
    attempt: z.int(),
    created_by: z.string(),
    created_at: z.string().nullable(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ title: 'Evaluation' });

export const ResultSchema = z
  .object({
    case_id: z.string(),
    seq: z.int(),
    input: z.string(),
    found: z.array(MemoryKeySchema),
    first_relevant_rank: z.int().nullable(),
    scores: z.array(ScoreSchema),
    answer: z.string(),
    error: z.string().nullable(),
    attempt: z.int(),
    created_at: z.string().nullable(),
    run_id: z.string().nullable().meta({ description: 'The run that answered the case (a playbook subject): `getRun` shows its steps.' }),
  })
  .meta({ title: 'EvaluationResult' });

export const ComparisonSchema = z
  .object({
    base_evaluation_id: z.string(),
    head_evaluation_id: z.string(),
    cases_compared: z.int(),
    metrics: z.array(z.object({ name: z.string(), base: z.number(), head: z.number(), delta: z.number() })),
    changed_cases: z.array(
      z.object({
        case_id: z.string(),
        input: z.string(),
        change: z.enum(['improved', 'regressed', 'changed']),
        base_rank: z.int().nullable(),
        head_rank: z.int().nullable(),
        base_scores: z.array(ScoreSchema),
        head_scores: z.array(ScoreSchema),
        base_run_id: z.string().nullable(),
        head_run_id: z.string().nullable(),
      }),
    ),
  })
  .meta({ title: 'EvaluationComparison' });

const ts = (t: Timestamp | undefined) => iso(t);
const rank = (r: number) => (r === 0 ? null : r);

export const datasetJson = (d: Dataset) => ({
  id: d.datasetId,
  organization_id: d.organizationId,
  name: d.name,
  description: d.description,
  case_count: d.caseCount,
  created_by: d.createdBy,
  created_at: ts(d.createTime),
  updated_at: ts(d.updateTime),
});

/** The case as one line of an export: what an import takes back. */
export const caseLine = (c: Case) => ({
  input: c.input,
  ...(c.alert ? { alert: c.alert } : {}),
  ...(c.namespace ? { namespace: c.namespace } : {}),
  ...(c.expectedMemories.length ? { expected_memories: c.expectedMemories.map((k) => ({ namespace: k.namespace, key: k.key })) } : {}),
  ...(c.expectedAnswer ? { expected_answer: c.expectedAnswer } : {}),
  ...(c.answerPattern ? { answer_pattern: c.answerPattern } : {}),
  ...(c.labels.length ? { labels: c.labels } : {}),
});

export const caseJson = (c: Case) => ({
  id: c.caseId,
  dataset_id: c.datasetId,
  seq: Number(c.seq),
  input: c.input,
  alert: c.alert,
  namespace: c.namespace === '' ? null : c.namespace,
  expected_memories: c.expectedMemories.map((k) => ({ namespace: k.namespace, key: k.key })),
  expected_answer: c.expectedAnswer,
  answer_pattern: c.answerPattern,
  labels: c.labels,
  created_at: ts(c.createTime),
});

export const newCaseMessage = (c: NewCaseJson) => ({
  input: c.input,
  alert: c.alert ?? '',
  namespace: c.namespace ?? '',
  expectedMemories: c.expected_memories ?? [],
  expectedAnswer: c.expected_answer ?? '',
  answerPattern: c.answer_pattern ?? '',
  labels: c.labels ?? [],
});

const evaluatorName = (e: Evaluator) => EVALUATOR_NAMES.find((n) => EVALUATOR_ENUM[n] === e) ?? 'retrieval';
const scoresJson = (scores: { name: string; value: number; passed: boolean }[]) =>
  scores.map((s) => ({ name: s.name, value: s.value, passed: s.passed }));

const orNull = (s: string) => (s === '' ? null : s);

function subjectJson(subject: Evaluation['subject']) {
  if (subject?.kind.case !== 'playbook')
    return { type: 'brain_search' as const, limit: subject?.kind.case === 'brainSearch' ? subject.kind.value.limit : 10 };
  const p = subject.kind.value;
  return {
    type: 'playbook' as const,
    playbook_id: p.playbookId,
    version: p.version,
    input_name: orNull(p.inputName),
    alert_input_name: orNull(p.alertInputName),
    timeout_seconds: p.timeoutSeconds,
  };
}

export const evaluationJson = (e: Evaluation) => ({
  id: e.evaluationId,
  organization_id: e.organizationId,
  dataset_id: e.datasetId,
  subject: subjectJson(e.subject),
  evaluators: e.evaluators.map(evaluatorName),
  status: STATUS_NAMES[e.status] ?? 'queued',
  label: e.label,
  case_total: e.caseTotal,
  cases_scored: e.casesScored,
  metrics: e.metrics.map((m) => ({ name: m.name, value: m.value, cases: m.cases })),
  error: e.error === '' ? null : e.error,
  attempt: e.attempt,
  created_by: e.createdBy,
  created_at: ts(e.createTime),
  started_at: ts(e.startTime),
  finished_at: ts(e.finishTime),
});

export const resultJson = (r: CaseResult) => ({
  case_id: r.caseId,
  seq: Number(r.seq),
  input: r.input,
  found: r.found.map((k) => ({ namespace: k.namespace, key: k.key })),
  first_relevant_rank: rank(r.firstRelevantRank),
  scores: scoresJson(r.scores),
  answer: r.answer,
  error: r.error === '' ? null : r.error,
  attempt: r.attempt,
  created_at: ts(r.createTime),
  run_id: orNull(r.runId),
});

export const comparisonJson = (base: string, head: string, c: CompareEvaluationsResponse) => ({
  base_evaluation_id: base,
  head_evaluation_id: head,
  cases_compared: c.casesCompared,
  metrics: c.metrics.map((m) => ({ name: m.name, base: m.base, head: m.head, delta: m.delta })),
  changed_cases: c.changedCases.map((x) => ({
    case_id: x.caseId,
    input: x.input,
    change: x.change as 'improved' | 'regressed' | 'changed',
    base_rank: rank(x.baseRank),
    head_rank: rank(x.headRank),
    base_scores: scoresJson(x.baseScores),
    head_scores: scoresJson(x.headScores),
    base_run_id: orNull(x.baseRunId),
    head_run_id: orNull(x.headRunId),
  })),
});
