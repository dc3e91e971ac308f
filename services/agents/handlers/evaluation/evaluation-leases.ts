// The evaluation worker's side: claim with a lease, record results, complete. As with runs
// (run-leases.ts), a claim is a compare-and-set on the evaluation's version that gives it a new
// lease id and moves `dueAt` to the lease's end, so one worker holds an evaluation at a time and
// one that dies leaves it to another when the lease expires. A result is stored under its
// evaluation and case with insert-if-absent, and the next cases handed out skip the cases that
// have one, so a worker that takes over resumes where the last one stopped and no case is ever
// scored twice. Every call of the holder names its lease; a lost lease is refused (lease-lost).
import { create } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { randomUUID } from 'node:crypto';
import {
  ClaimEvaluationResponseSchema,
  CompleteEvaluationResponseSchema,
  EvaluationStatus,
  RecordCaseResultsResponseSchema,
  type ClaimEvaluationRequest,
  type CompleteEvaluationRequest,
  type RecordCaseResultsRequest,
} from '../../../../gen/mindgate/agents/v1/evaluation_pb.js';
import { failure, REASONS } from '../../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../../common/rpc/validate.ts';
import { toCase } from './datasets.ts';
import { evaluationMessage, FINISHED, ownedEvaluation } from './evaluations.ts';
import { aggregate } from './metrics.ts';
import { caseRunId, resultId, type CaseRecord, type CaseResultRecord, type EvaluationContext, type EvaluationRecord } from './records.ts';

const AGENT_ID = /^[A-Za-z0-9._:@-]{1,200}$/;
const CLAIM_BATCH = 10;
const CASES_GIVEN = 20;
const MAX_RESULTS = 100;

function leaseMs(seconds: number): number {
  if (seconds === 0) return 60_000;
  if (seconds < 5 || seconds > 3_600) invalid('lease_seconds', 'must be from 5 to 3600 (0 for 60)');
  return seconds * 1000;
}

const lost = (why: string) =>
  failure(`the lease on this evaluation is lost (${why}): stop working on it`, Code.FailedPrecondition, REASONS.leaseLost);

/** The evaluation, while the caller holds its lease; lease-lost otherwise. */
export async function held(ctx: EvaluationContext, organizationId: string, evaluationId: string, leaseId: string) {
  const evaluation = await ownedEvaluation(ctx, requireOrganization(organizationId), evaluationId);
  if (evaluation.status !== EvaluationStatus.RUNNING || evaluation.leaseId !== leaseId)
    throw lost(FINISHED.has(evaluation.status) ? 'it has finished' : 'another claim holds it');
  if ((evaluation.leaseExpiresAt ?? 0) <= ctx.now()) throw lost('it expired');
  return evaluation;
}

/**
 * Moves the lease's end on (a holder waiting for a case's run), at most once per half lease: the
 * compare-and-set on the version is lost when another claim took the evaluation meanwhile.
 */
export async function extendLease(ctx: EvaluationContext, evaluation: EvaluationRecord): Promise<void> {
  const now = ctx.now();
  if ((evaluation.leaseExpiresAt ?? 0) - now > evaluation.leaseMs / 2) return;
  const leaseExpiresAt = now + evaluation.leaseMs;
  const next: EvaluationRecord = { ...evaluation, leaseExpiresAt, dueAt: leaseExpiresAt, version: evaluation.version + 1 };
  if (!(await ctx.evaluations.put(next, { expect: { version: evaluation.version } }))) throw lost('it changed under it');
}

/** The next cases of the evaluation's snapshot that have no result yet, in order. */
async function nextCases(ctx: EvaluationContext, evaluation: EvaluationRecord): Promise<CaseRecord[]> {
  let after = evaluation.cursorSeq;
  for (;;) {
    const batch = await ctx.cases.find(
      { datasetId: evaluation.datasetId, seq: { $gt: after, $lte: evaluation.lastSeq } },
      { sort: { field: 'seq', direction: 'asc' }, limit: CASES_GIVEN },
    );
    if (batch.length === 0) return [];
    const done = new Set((await ctx.results.getMany(batch.map((c) => resultId(evaluation._id, c._id)))).map((r) => r.caseId));
    const todo = batch.filter((c) => !done.has(c._id));
    if (todo.length > 0) return todo;
    after = batch[batch.length - 1].seq;
  }
}

async function tryClaim(ctx: EvaluationContext, evaluation: EvaluationRecord, agentId: string, lease: number) {
  const now = ctx.now();
  const claimed: EvaluationRecord = {
    ...evaluation,
    status: EvaluationStatus.RUNNING,
    agentId,
    attempt: evaluation.attempt + 1,
    leaseId: randomUUID(),
    leaseMs: lease,
    leaseExpiresAt: now + lease,
    dueAt: now + lease,
    startedAt: evaluation.startedAt ?? now,
    version: evaluation.version + 1,
  };
  return (await ctx.evaluations.put(claimed, { expect: { version: evaluation.version } })) ? claimed : undefined;
}

export async function claimEvaluation(ctx: EvaluationContext, req: ClaimEvaluationRequest) {
  if (!AGENT_ID.test(req.agentId)) invalid('agent_id', 'must be 1-200 characters of [A-Za-z0-9._:@-]');
  const lease = leaseMs(req.leaseSeconds);
  const due = await ctx.evaluations.find(
    { dueAt: { $lte: ctx.now() } },
    { sort: { field: 'dueAt', direction: 'asc' }, limit: CLAIM_BATCH },
  );
  for (const candidate of due) {
    const evaluation = await tryClaim(ctx, candidate, req.agentId, lease);
    if (!evaluation) continue;
    return create(ClaimEvaluationResponseSchema, {
      evaluation: await evaluationMessage(ctx, evaluation),
      leaseId: evaluation.leaseId,
      cases: (await nextCases(ctx, evaluation)).map(toCase),
    });
  }
  return create(ClaimEvaluationResponseSchema, {});
}

/**
 * Stores one result, unless the case has one already (a worker that lost its lease wrote it);
 * answers the case's seq. A case deleted while it was being scored is skipped (0).
 */
async function storeResult(ctx: EvaluationContext, evaluation: EvaluationRecord, r: RecordCaseResultsRequest['results'][number]) {
  if (r.caseId.length > 100) invalid('results.case_id', 'is not a case id');
  const found = await ctx.cases.get(r.caseId);
  if (!found) return 0;
  if (found.datasetId !== evaluation.datasetId || found.seq > evaluation.lastSeq)
    invalid('results.case_id', 'is not a case of this evaluation');
  // Only the case's own run (case-runs.ts), and only for a playbook subject.
  const runId = evaluation.subject.kind === 'playbook' ? caseRunId(evaluation._id, found._id) : '';
  if (r.runId !== '' && r.runId !== runId) invalid('results.run_id', "is not the case's run");
  const record: CaseResultRecord = {
    _id: resultId(evaluation._id, found._id),
    organizationId: evaluation.organizationId,
    evaluationId: evaluation._id,
    caseId: found._id,
    seq: found.seq,
    input: found.input,
    found: r.found.slice(0, 50).map((k) => ({ namespace: k.namespace, key: k.key })),
    firstRelevantRank: r.firstRelevantRank,
    scores: r.scores.map((s) => ({ name: s.name, value: s.value, passed: s.passed })),
    answer: requireText('results.answer', r.answer, 100_000),
    error: requireText('results.error', r.error, 2_000),
    attempt: evaluation.attempt,
    createdAt: ctx.now(),
    ...(r.runId === '' ? {} : { runId: r.runId }),
  };
  await ctx.results.put(record, { expect: null });
  return found.seq;
}

export async function recordCaseResults(ctx: EvaluationContext, req: RecordCaseResultsRequest) {
  const evaluation = await held(ctx, req.organizationId, req.evaluationId, req.leaseId);
  if (req.results.length > MAX_RESULTS) invalid('results', `must have at most ${MAX_RESULTS} items`);
  let cursorSeq = evaluation.cursorSeq;
  for (const r of req.results) cursorSeq = Math.max(cursorSeq, await storeResult(ctx, evaluation, r));
  const leaseExpiresAt = ctx.now() + evaluation.leaseMs;
  const next: EvaluationRecord = { ...evaluation, cursorSeq, leaseExpiresAt, dueAt: leaseExpiresAt, version: evaluation.version + 1 };
  if (!(await ctx.evaluations.put(next, { expect: { version: evaluation.version } }))) throw lost('it changed under it');
  return create(RecordCaseResultsResponseSchema, { cases: (await nextCases(ctx, next)).map(toCase) });
}

export async function completeEvaluation(ctx: EvaluationContext, req: CompleteEvaluationRequest) {
  const evaluation = await held(ctx, req.organizationId, req.evaluationId, req.leaseId);
  if (!FINISHED.has(req.status)) invalid('status', 'must be succeeded or failed');
  const results = await ctx.results.find({ evaluationId: evaluation._id });
  const next: EvaluationRecord = {
    ...evaluation,
    status: req.status,
    error: requireText('error', req.error, 2_000),
    metrics: aggregate(results),
    leaseExpiresAt: undefined,
    dueAt: undefined,
    finishedAt: ctx.now(),
    version: evaluation.version + 1,
  };
  if (!(await ctx.evaluations.put(next, { expect: { version: evaluation.version } }))) throw lost('it changed under it');
  return create(CompleteEvaluationResponseSchema, { evaluation: await evaluationMessage(ctx, next) });
}
