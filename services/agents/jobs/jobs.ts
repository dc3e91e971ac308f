// The JobsService's operations on jobs themselves: create, read, list, change, delete, pause and
// resume. Every change is a compare-and-set on the job's version (which the scheduler's firings
// move too), so a change and a firing never overwrite each other.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CreateJobResponseSchema,
  DeleteJobResponseSchema,
  GetJobResponseSchema,
  ListJobsResponseSchema,
  PauseJobResponseSchema,
  ResumeJobResponseSchema,
  UpdateJobResponseSchema,
  type CreateJobRequest,
  type DeleteJobRequest,
  type GetJobRequest,
  type ListJobsRequest,
  type PauseJobRequest,
  type ResumeJobRequest,
  type UpdateJobRequest,
} from '../../../gen/mindgate/agents/v1/jobs_pb.js';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { newId } from '../handlers/organizations.ts';
import type { JobsContext } from './context.ts';
import { toJob, type JobRecord } from './records.ts';
import { nextAfter, requireSchedule } from './schedule.ts';
import { requireMissedPolicy, requireName, requireTarget } from './validate.ts';

const JOB_ID = /^job_[A-Za-z0-9]{1,60}$/;

/** The job, when it is one of the organization's; NOT_FOUND otherwise (another tenant's too). */
export async function ownedJob(ctx: JobsContext, organizationId: string, jobId: string): Promise<JobRecord> {
  if (!JOB_ID.test(jobId)) invalid('job_id', 'is not a job id');
  const job = await ctx.jobs.get(jobId);
  if (!job || job.organizationId !== organizationId) throw new ConnectError(`job "${jobId}" does not exist`, Code.NotFound);
  return job;
}

const stale = () => failure('the job changed since it was read (If-Match): read it again', Code.FailedPrecondition, REASONS.etagMismatch);

/** Stores the job if it is still at the version read; undefined otherwise. */
async function tryReplace(ctx: JobsContext, current: JobRecord, fields: Partial<JobRecord>): Promise<JobRecord | undefined> {
  const next: JobRecord = { ...current, ...fields, updatedAt: ctx.now(), version: current.version + 1 };
  if (next.nextFireAt === undefined) delete next.nextFireAt;
  return (await ctx.jobs.put(next, { expect: { version: current.version } })) ? next : undefined;
}

export async function createJob(ctx: JobsContext, req: CreateJobRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const now = ctx.now();
  const schedule = requireSchedule({ schedule: req.schedule.trim(), timeZone: req.timeZone.trim() }, now);
  const job: JobRecord = {
    _id: newId('job'),
    organizationId,
    name: requireName(req.name),
    ...schedule,
    target: await requireTarget(ctx, organizationId, req.target),
    enabled: req.enabled,
    missedPolicy: requireMissedPolicy(req.missedPolicy),
    consecutiveFailures: 0,
    lastError: '',
    backoffSkips: 0,
    createdBy: requireText('created_by', req.createdBy, 200),
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  if (job.enabled) job.nextFireAt = nextAfter(job, now);
  await ctx.jobs.put(job, { expect: null });
  return create(CreateJobResponseSchema, { job: toJob(job) });
}

export async function getJob(ctx: JobsContext, req: GetJobRequest) {
  return create(GetJobResponseSchema, { job: toJob(await ownedJob(ctx, requireOrganization(req.organizationId), req.jobId)) });
}

export async function listJobs(ctx: JobsContext, req: ListJobsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(ctx.jobs, { organizationId }, req, {
    field: 'createdAt',
    direction: 'desc',
    scope: `jobs:${organizationId}`,
  });
  return create(ListJobsResponseSchema, { jobs: page.items.map(toJob), nextPageToken: page.nextPageToken });
}

export async function updateJob(ctx: JobsContext, req: UpdateJobRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const current = await ownedJob(ctx, organizationId, req.jobId);
  if (req.etag !== '' && req.etag !== String(current.version)) throw stale();
  const now = ctx.now();
  const schedule = requireSchedule(
    { schedule: req.schedule?.trim() ?? current.schedule, timeZone: req.timeZone?.trim() ?? current.timeZone },
    now,
  );
  const rescheduled = schedule.schedule !== current.schedule || schedule.timeZone !== current.timeZone;
  const fields: Partial<JobRecord> = {
    ...schedule,
    name: req.name === undefined ? current.name : requireName(req.name),
    target: req.target ? await requireTarget(ctx, organizationId, req.target) : current.target,
    missedPolicy: req.missedPolicy === undefined ? current.missedPolicy : requireMissedPolicy(req.missedPolicy),
  };
  // A new schedule starts from now; the back-off of failures under the old one ends with it.
  if (rescheduled && current.enabled) Object.assign(fields, { nextFireAt: nextAfter(schedule, now), backoffSkips: 0 });
  const next = await tryReplace(ctx, current, fields);
  if (!next) throw stale();
  return create(UpdateJobResponseSchema, { job: toJob(next) });
}

export async function deleteJob(ctx: JobsContext, req: DeleteJobRequest) {
  const current = await ownedJob(ctx, requireOrganization(req.organizationId), req.jobId);
  if (req.etag !== '' && req.etag !== String(current.version)) throw stale();
  await ctx.jobs.delete(current._id);
  await ctx.executions.deleteMany({ jobId: current._id });
  return create(DeleteJobResponseSchema, {});
}

export async function pauseJob(ctx: JobsContext, req: PauseJobRequest) {
  const organizationId = requireOrganization(req.organizationId);
  for (;;) {
    const current = await ownedJob(ctx, organizationId, req.jobId);
    if (!current.enabled) return create(PauseJobResponseSchema, { job: toJob(current) });
    const next = await tryReplace(ctx, current, { enabled: false, nextFireAt: undefined });
    if (next) return create(PauseJobResponseSchema, { job: toJob(next) });
    // Fired meanwhile: pause what it is now.
  }
}

export async function resumeJob(ctx: JobsContext, req: ResumeJobRequest) {
  const organizationId = requireOrganization(req.organizationId);
  for (;;) {
    const current = await ownedJob(ctx, organizationId, req.jobId);
    if (current.enabled) return create(ResumeJobResponseSchema, { job: toJob(current) });
    const fields = { enabled: true, nextFireAt: nextAfter(current, ctx.now()), consecutiveFailures: 0, lastError: '', backoffSkips: 0 };
    const next = await tryReplace(ctx, current, fields);
    if (next) return create(ResumeJobResponseSchema, { job: toJob(next) });
    // Changed meanwhile: resume what it is now.
  }
}
