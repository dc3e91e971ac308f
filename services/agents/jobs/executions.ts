// A job's executions: firing one now (TriggerJob), and listing them with their runs.
import { create } from '@bufbuild/protobuf';
import {
  ListJobExecutionsResponseSchema,
  TriggerJobResponseSchema,
  type ListJobExecutionsRequest,
  type TriggerJobRequest,
} from '../../../gen/mindgate/agents/v1/jobs_pb.js';
import { requireOrganization } from '../../common/rpc/validate.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { toRun } from '../handlers/runs.ts';
import { newId } from '../handlers/organizations.ts';
import type { JobsContext } from './context.ts';
import { afterExecution } from './firing.ts';
import { ExecutionOutcome, ExecutionTrigger, toExecution, type ExecutionRecord, type JobRecord } from './records.ts';
import { EXECUTION_LEASE_MS, startTarget } from './target.ts';
import { ownedJob } from './jobs.ts';

/** Records a manual execution's outcome on the job (its schedule stays as it is). */
async function recordOnJob(ctx: JobsContext, read: JobRecord, e: ExecutionRecord): Promise<void> {
  let job: JobRecord | undefined = read;
  for (let tries = 0; job && tries < 5; tries++) {
    const { backoffSkips: _skips, ...state } = afterExecution(job, e);
    // A success ends a back-off now; a manual failure counts, and weighs on the next scheduled firing.
    const next: JobRecord = { ...job, ...state, version: job.version + 1 };
    if (e.outcome === ExecutionOutcome.SUCCEEDED) next.backoffSkips = 0;
    if (await ctx.jobs.put(next, { expect: { version: job.version } })) return;
    job = await ctx.jobs.get(read._id);
  }
}

export async function triggerJob(ctx: JobsContext, req: TriggerJobRequest) {
  const job = await ownedJob(ctx, requireOrganization(req.organizationId), req.jobId);
  const now = ctx.now();
  const held: ExecutionRecord = {
    _id: newId('exe'),
    jobId: job._id,
    organizationId: job.organizationId,
    occurrenceAt: now,
    firedAt: now,
    trigger: ExecutionTrigger.MANUAL,
    outcome: ExecutionOutcome.PENDING,
    error: '',
    occurrences: 1,
    threadId: '',
    runId: '',
    leaseUntil: now + EXECUTION_LEASE_MS,
    version: 1,
  };
  await ctx.executions.put(held, { expect: null });
  const done = (await startTarget(ctx, job, held)) ?? (await ctx.executions.get(held._id)) ?? held;
  await recordOnJob(ctx, job, done);
  const run = done.runId === '' ? undefined : await ctx.runs.runs.get(done.runId);
  return create(TriggerJobResponseSchema, { execution: toExecution(done, run && toRun(run)) });
}

export async function listJobExecutions(ctx: JobsContext, req: ListJobExecutionsRequest) {
  const job = await ownedJob(ctx, requireOrganization(req.organizationId), req.jobId);
  const page = await findPage(ctx.executions, { jobId: job._id }, req, {
    field: 'firedAt',
    direction: 'desc',
    scope: `executions:${job._id}`,
  });
  const runs = new Map((await ctx.runs.runs.getMany(page.items.map((e) => e.runId).filter(Boolean))).map((r) => [r._id, r]));
  const executions = page.items.map((e) => {
    const run = runs.get(e.runId);
    return toExecution(e, run && toRun(run));
  });
  return create(ListJobExecutionsResponseSchema, { executions, nextPageToken: page.nextPageToken });
}
