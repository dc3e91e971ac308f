// Evaluations: a dataset's cases (those added before it was created) scored against a subject.
// Creating one queues it for the evaluation workers (evaluation-leases.ts); the results and the
// aggregates are read here, and two finished evaluations of a dataset compared.
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CaseResultSchema,
  CompareEvaluationsResponseSchema,
  CreateEvaluationResponseSchema,
  EvaluationSchema,
  EvaluationStatus,
  Evaluator,
  GetEvaluationResponseSchema,
  ListCaseResultsResponseSchema,
  ListEvaluationsResponseSchema,
  type CaseResult,
  type CompareEvaluationsRequest,
  type CreateEvaluationRequest,
  type Evaluation,
  type GetEvaluationRequest,
  type ListCaseResultsRequest,
  type ListEvaluationsRequest,
  type Subject,
  type SubjectSchema,
} from '../../../../gen/mindgate/agents/v1/evaluation_pb.js';
import { failure, REASONS } from '../../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../../common/rpc/validate.ts';
import { findPage } from '../../../common/storage/records/paging.ts';
import { newId } from '../organizations.ts';
import { ownedDataset } from './datasets.ts';
import { changeOf, metricDeltas } from './metrics.ts';
import { playbookSubjectOf } from './playbook-subject.ts';
import type { CaseResultRecord, EvaluationContext, EvaluationRecord, SubjectRecord } from './records.ts';

const EVALUATION_ID = /^evr_[A-Za-z0-9]{1,60}$/;
/** The evaluators an evaluation gets when it names none; the LLM judge (which needs a model) only when asked for. */
export const ALL_EVALUATORS = [Evaluator.EXACT, Evaluator.CONTAINS, Evaluator.REGEX, Evaluator.RETRIEVAL];
const KNOWN_EVALUATORS = [...ALL_EVALUATORS, Evaluator.LLM_JUDGE];
export const FINISHED = new Set([EvaluationStatus.SUCCEEDED, EvaluationStatus.FAILED]);
const MAX_CHANGES = 1_000;

const subjectMessage = (s: SubjectRecord): MessageInitShape<typeof SubjectSchema> =>
  s.kind === 'brainSearch'
    ? { kind: { case: 'brainSearch', value: { limit: s.limit } } }
    : {
        kind: {
          case: 'playbook',
          value: {
            playbookId: s.playbookId,
            version: s.version,
            inputName: s.inputName,
            alertInputName: s.alertInputName,
            timeoutSeconds: s.timeoutSeconds,
          },
        },
      };

export const toEvaluation = (r: EvaluationRecord, scored: number): Evaluation =>
  create(EvaluationSchema, {
    evaluationId: r._id,
    organizationId: r.organizationId,
    datasetId: r.datasetId,
    subject: subjectMessage(r.subject),
    evaluators: r.evaluators,
    status: r.status,
    caseTotal: r.caseTotal,
    casesScored: scored,
    metrics: r.metrics,
    error: r.error,
    agentId: r.agentId,
    attempt: r.attempt,
    createdBy: r.createdBy,
    label: r.label,
    createTime: timestampFromMs(r.createdAt),
    startTime: r.startedAt === undefined ? undefined : timestampFromMs(r.startedAt),
    finishTime: r.finishedAt === undefined ? undefined : timestampFromMs(r.finishedAt),
  });

export const toResult = (r: CaseResultRecord): CaseResult =>
  create(CaseResultSchema, {
    evaluationId: r.evaluationId,
    caseId: r.caseId,
    seq: BigInt(r.seq),
    input: r.input,
    found: r.found,
    firstRelevantRank: r.firstRelevantRank,
    scores: r.scores,
    answer: r.answer,
    error: r.error,
    attempt: r.attempt,
    createTime: timestampFromMs(r.createdAt),
    runId: r.runId ?? '',
  });

/** The evaluation with its count of results (the number of results is the truth, not a counter). */
export async function evaluationMessage(ctx: EvaluationContext, r: EvaluationRecord): Promise<Evaluation> {
  return toEvaluation(r, await ctx.results.count({ evaluationId: r._id }));
}

export async function ownedEvaluation(ctx: EvaluationContext, organizationId: string, evaluationId: string, field = 'evaluation_id') {
  if (!EVALUATION_ID.test(evaluationId)) invalid(field, 'is not an evaluation id');
  const evaluation = await ctx.evaluations.get(evaluationId);
  if (!evaluation || evaluation.organizationId !== organizationId)
    throw new ConnectError(`evaluation "${evaluationId}" does not exist`, Code.NotFound);
  return evaluation;
}

async function subjectOf(ctx: EvaluationContext, organizationId: string, subject: Subject | undefined): Promise<SubjectRecord> {
  if (subject?.kind.case === 'playbook') return playbookSubjectOf(ctx, organizationId, subject.kind.value);
  if (subject?.kind.case !== 'brainSearch') invalid('subject', 'give a subject: brain_search or playbook');
  const limit = subject.kind.value.limit;
  if (limit > 50) invalid('subject.brain_search.limit', 'must be from 1 to 50 (0 for 10)');
  return { kind: 'brainSearch', limit: limit === 0 ? 10 : limit };
}

function evaluatorsOf(evaluators: Evaluator[]): Evaluator[] {
  for (const [i, e] of evaluators.entries()) if (!KNOWN_EVALUATORS.includes(e)) invalid(`evaluators[${i}]`, 'is not an evaluator');
  return evaluators.length === 0 ? ALL_EVALUATORS : [...new Set(evaluators)];
}

export async function createEvaluation(ctx: EvaluationContext, req: CreateEvaluationRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const evaluators = evaluatorsOf(req.evaluators);
  const label = requireText('label', req.label, 200);
  const dataset = await ownedDataset(ctx, organizationId, req.datasetId);
  const subject = await subjectOf(ctx, organizationId, req.subject);
  const [last] = await ctx.cases.find({ datasetId: dataset._id }, { sort: { field: 'seq', direction: 'desc' }, limit: 1 });
  if (!last) throw failure('the dataset has no cases: add some first', Code.FailedPrecondition, REASONS.datasetEmpty);
  const now = ctx.now();
  const evaluation: EvaluationRecord = {
    _id: newId('evr'),
    organizationId,
    datasetId: dataset._id,
    subject,
    evaluators,
    status: EvaluationStatus.QUEUED,
    lastSeq: last.seq,
    caseTotal: await ctx.cases.count({ datasetId: dataset._id }),
    cursorSeq: 0,
    metrics: [],
    error: '',
    label,
    agentId: '',
    attempt: 0,
    leaseId: '',
    leaseMs: 0,
    dueAt: now,
    createdBy: req.createdBy,
    createdAt: now,
    version: 1,
  };
  await ctx.evaluations.put(evaluation, { expect: null });
  return create(CreateEvaluationResponseSchema, { evaluation: toEvaluation(evaluation, 0) });
}

export async function getEvaluation(ctx: EvaluationContext, req: GetEvaluationRequest) {
  const evaluation = await ownedEvaluation(ctx, requireOrganization(req.organizationId), req.evaluationId);
  return create(GetEvaluationResponseSchema, { evaluation: await evaluationMessage(ctx, evaluation) });
}

export async function listEvaluations(ctx: EvaluationContext, req: ListEvaluationsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const filter: Record<string, string> = { organizationId };
  if (req.datasetId !== '') filter.datasetId = (await ownedDataset(ctx, organizationId, req.datasetId))._id;
  const page = await findPage(ctx.evaluations, filter, req, {
    field: 'createdAt',
    direction: 'desc',
    scope: `evaluations:${organizationId}:${req.datasetId}`,
  });
  return create(ListEvaluationsResponseSchema, {
    evaluations: await Promise.all(page.items.map((e) => evaluationMessage(ctx, e))),
    nextPageToken: page.nextPageToken,
  });
}

export async function listCaseResults(ctx: EvaluationContext, req: ListCaseResultsRequest) {
  const evaluation = await ownedEvaluation(ctx, requireOrganization(req.organizationId), req.evaluationId);
  const page = await findPage(ctx.results, { evaluationId: evaluation._id }, req, {
    field: 'seq',
    scope: `results:${evaluation._id}`,
    maxPageSize: 1_000,
  });
  return create(ListCaseResultsResponseSchema, { results: page.items.map(toResult), nextPageToken: page.nextPageToken });
}

export async function compareEvaluations(ctx: EvaluationContext, req: CompareEvaluationsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const base = await ownedEvaluation(ctx, organizationId, req.baseEvaluationId, 'base_evaluation_id');
  const head = await ownedEvaluation(ctx, organizationId, req.headEvaluationId, 'head_evaluation_id');
  if (!FINISHED.has(base.status) || !FINISHED.has(head.status))
    throw failure('both evaluations must have finished', Code.FailedPrecondition, REASONS.evaluationNotFinished);
  const baseResults = new Map((await ctx.results.find({ evaluationId: base._id })).map((r) => [r.caseId, r]));
  const headResults = await ctx.results.find({ evaluationId: head._id }, { sort: { field: 'seq', direction: 'asc' } });
  let compared = 0;
  const changed = [];
  for (const h of headResults) {
    const b = baseResults.get(h.caseId);
    if (!b) continue;
    compared += 1;
    const change = changeOf(b.scores, h.scores);
    if (!change || changed.length >= MAX_CHANGES) continue;
    changed.push({
      caseId: h.caseId,
      input: h.input,
      baseScores: b.scores,
      headScores: h.scores,
      baseRank: b.firstRelevantRank,
      headRank: h.firstRelevantRank,
      change,
      baseRunId: b.runId ?? '',
      headRunId: h.runId ?? '',
    });
  }
  return create(CompareEvaluationsResponseSchema, {
    metrics: metricDeltas(base.metrics, head.metrics),
    changedCases: changed,
    casesCompared: compared,
  });
}
