// Each case of a playbook evaluation becomes one run of the evaluation's version. The run and its
// thread have ids derived from the evaluation and the case and are made only if absent, so a
// worker that died while a case's run was working, or two workers racing after a lease expired,
// find the same run: a case is run once, and scored once (evaluation-leases.ts). The runs are
// ordinary runs of the organization (the runs queue and its runners, the plan's runs_per_month,
// the thread list), started by whoever created the evaluation; they report no feedback to the
// Brain, so evaluating does not move the memories' scores.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { StartCaseRunResponseSchema, type StartCaseRunRequest } from '../../../../gen/mindgate/agents/v1/evaluation_pb.js';
import { Executor } from '../../../../gen/mindgate/agents/v1/runs_pb.js';
import type { PlaybookDocument } from '../../../common/playbooks/validate.ts';
import { invalid } from '../../../common/rpc/validate.ts';
import { queueVersionRun } from '../playbook-runs.ts';
import { ownedPlaybook, versionOf } from '../playbooks.ts';
import { toRun, type RunRecord } from '../runs.ts';
import { extendLease, held } from './evaluation-leases.ts';
import { caseInputs, playbooksOf } from './playbook-subject.ts';
import {
  caseRunId,
  caseThreadId,
  type CaseRecord,
  type EvaluationContext,
  type EvaluationRecord,
  type PlaybookSubjectRecord,
} from './records.ts';

/** The case's run: the one made already, or a new one of the evaluation's version. */
async function caseRun(
  ctx: EvaluationContext,
  evaluation: EvaluationRecord,
  subject: PlaybookSubjectRecord,
  c: CaseRecord,
): Promise<RunRecord> {
  const { playbooks, runs } = playbooksOf(ctx);
  const ids = { runId: caseRunId(evaluation._id, c._id), threadId: caseThreadId(evaluation._id, c._id) };
  const made = await runs().runs.get(ids.runId);
  if (made) return made;
  const playbook = await ownedPlaybook(playbooks, evaluation.organizationId, subject.playbookId);
  const version = await versionOf(playbooks, playbook, subject.version);
  const { run } = await queueVersionRun(runs(), {
    organizationId: evaluation.organizationId,
    playbookId: playbook._id,
    version,
    inputs: caseInputs(version.document as unknown as PlaybookDocument, subject, c),
    title: `Evaluation ${evaluation.label || evaluation._id}: case ${c.seq}`.slice(0, 200),
    timeoutSeconds: subject.timeoutSeconds,
    createdBy: evaluation.createdBy,
    executor: Executor.UNSPECIFIED,
    brainFeedback: false,
    ids,
  });
  // Two callers racing: the run stored is the one whose insert won.
  return (await runs().runs.get(ids.runId)) ?? run;
}

export async function startCaseRun(ctx: EvaluationContext, req: StartCaseRunRequest) {
  const evaluation = await held(ctx, req.organizationId, req.evaluationId, req.leaseId);
  const subject = evaluation.subject;
  if (subject.kind !== 'playbook') invalid('evaluation_id', 'is an evaluation of the Brain search, not of a playbook');
  if (req.caseId.length > 100) invalid('case_id', 'is not a case id');
  const c = await ctx.cases.get(req.caseId);
  if (!c) throw new ConnectError(`case "${req.caseId}" does not exist`, Code.NotFound);
  if (c.datasetId !== evaluation.datasetId || c.seq > evaluation.lastSeq) invalid('case_id', 'is not a case of this evaluation');
  const run = await caseRun(ctx, evaluation, subject, c);
  await extendLease(ctx, evaluation);
  return create(StartCaseRunResponseSchema, { run: toRun(run) });
}
