// The REST API's scheduled jobs: a cron schedule in a time zone that starts a run on a new thread
// at each occurrence. Members and up manage them, viewers read them and their executions; each
// operation is a call to the agents service's JobsService, which owns the jobs and fires them.
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import {
  CreateJobSchema,
  executionJson,
  ExecutionSchema,
  jobJson,
  jobParams,
  JobSchema,
  MISSED_POLICIES,
  targetLoc,
  targetOf,
  UpdateJobSchema,
} from './job-json.ts';
import {
  errors,
  json,
  listEnvelope,
  listing,
  notFoundAs404,
  orgParams,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';
import { RequestValidationError } from '../http/validation.ts';
import { bodyFields } from './service-fields.ts';
import type { Job } from '../../gen/mindgate/agents/v1/jobs_pb.js';
import type { AnyApiRouteContext } from '../http/api-route.ts';

const tags = ['Scheduled jobs'];
const notFound = { '404': 'NotFound' } as const;
const withEtag = (description: string) => ({ ...json(JobSchema, description), headers: ETAG_HEADER });
/** The fields the service checks itself (a cron expression, a time zone), answered as the body's 422. */
const SERVICE_FIELDS = { schedule: ['schedule'], time_zone: ['time_zone'], name: ['name'], target: ['target'] };
/** bodyFields, with a target's fields at their place in the body's flat target. */
async function jobFields<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await bodyFields(SERVICE_FIELDS, work);
  } catch (err) {
    if (!(err instanceof RequestValidationError)) throw err;
    throw new RequestValidationError(err.detail.map((d) => ({ ...d, loc: targetLoc(d.loc) })));
  }
}

const sendJob = (c: AnyApiRouteContext, status: number, job: Job | undefined) =>
  sendJson(c.res, status, jobJson(job!), { etag: quoteEtag(job!.etag) });

function createJobRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/jobs',
      operationId: 'createJob',
      summary: 'Schedule a job',
      description:
        "A cron `schedule` (5 fields, or 6 with seconds first) in an IANA `time_zone` (UTC when absent), following its daylight-saving changes. Each occurrence starts the `target`: a run on a new thread, as `createRun` does (`type: run`), a run of a playbook on a new thread, as `runPlaybook` does (`type: playbook`, the published version when it fires or a pinned one), in both cases under the plan's `runs_per_month`, or a seeding run of the Brain from a web page (`type: seeding`). An invalid cron expression or time zone, a playbook that is not the organization's, without the version asked for or whose inputs do not fit, and a URL the deployment does not fetch from are 422 naming the field.",
      tags,
      params: orgParams,
      responses: { '201': withEtag('The job, with its next occurrence.'), ...errors },
      handler: async (c) => {
        const body = await readJson(c, CreateJobSchema, limit);
        const { job } = await jobFields(() =>
          ctx.clients.jobs.createJob({
            organizationId: c.input.params.organization_id,
            name: body.name,
            schedule: body.schedule,
            timeZone: body.time_zone ?? '',
            target: targetOf(body.target),
            enabled: body.enabled ?? true,
            missedPolicy: MISSED_POLICIES[body.missed_policy ?? 'skip'],
            createdBy: callerOf(c).subject,
          }),
        );
        sendJob(c, 201, job);
      },
    }),
    body: CreateJobSchema,
    creates: true,
  };
}

function listJobsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/jobs',
    operationId: 'listJobs',
    summary: 'List scheduled jobs',
    description: "The organization's jobs, newest first, each with its state.",
    tags,
    params: orgParams,
    query: pageQuery,
    responses: { '200': json(listEnvelope('jobs', JobSchema, 'JobList'), 'One page of jobs.'), ...errors },
    handler: async (c) => {
      const res = await listing(() =>
        ctx.clients.jobs.listJobs({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
      );
      sendPage(c, 'jobs', res.jobs.map(jobJson), res.nextPageToken);
    },
  });
}

function getJobRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/jobs/:job_id',
    operationId: 'getJob',
    summary: 'Get a scheduled job',
    description: 'With its state: the next occurrence, the last execution, failures in a row and why the last one failed.',
    tags,
    params: jobParams,
    responses: { '200': withEtag('The job.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, job_id: jobId } = c.input.params;
      sendJob(c, 200, (await notFoundAs404(() => ctx.clients.jobs.getJob({ organizationId, jobId }))).job);
    },
  });
}

function updateJobRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/organizations/:organization_id/jobs/:job_id',
      operationId: 'updateJob',
      summary: 'Change a scheduled job',
      description:
        'The fields given change. A new schedule or time zone starts from the next occurrence after now. With If-Match, only if still at that ETag (412 otherwise); firings change the ETag too.',
      tags,
      params: jobParams,
      responses: { '200': withEtag('The job, as stored.'), ...errors, ...notFound, '412': 'PreconditionFailed' },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, UpdateJobSchema, limit);
        const { organization_id: organizationId, job_id: jobId } = c.input.params;
        const { job } = await jobFields(() =>
          notFoundAs404(() =>
            ctx.clients.jobs.updateJob({
              organizationId,
              jobId,
              etag,
              name: body.name,
              schedule: body.schedule,
              timeZone: body.time_zone,
              target: body.target && targetOf(body.target),
              missedPolicy: body.missed_policy && MISSED_POLICIES[body.missed_policy],
            }),
          ),
        );
        sendJob(c, 200, job);
      },
    }),
    body: UpdateJobSchema,
  };
}

function deleteJobRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/jobs/:job_id',
    operationId: 'deleteJob',
    summary: 'Delete a scheduled job',
    description:
      'It fires no more; its executions go with it, the threads and runs it started stay. With If-Match, only if still at that ETag.',
    tags,
    params: jobParams,
    responses: { '204': { description: 'Deleted.' }, ...errors, ...notFound, '412': 'PreconditionFailed' },
    handler: async (c) => {
      const etag = ifMatch(c.req.headers['if-match']);
      const { organization_id: organizationId, job_id: jobId } = c.input.params;
      await notFoundAs404(() => ctx.clients.jobs.deleteJob({ organizationId, jobId, etag }));
      c.res.writeHead(204).end();
    },
  });
}

function stateRoute({ ctx }: RouteDeps, action: 'pause' | 'resume'): RestRoute {
  return defineApiRoute({
    method: 'POST',
    path: `/organizations/:organization_id/jobs/:job_id/${action}`,
    operationId: `${action}Job`,
    summary: action === 'pause' ? 'Pause a scheduled job' : 'Resume a scheduled job',
    description:
      action === 'pause'
        ? 'It fires nothing until resumed (a trigger still fires it). Pausing a paused job changes nothing.'
        : 'It fires again from its next occurrence after now (the ones passed while paused are not fired), with its failures cleared.',
    tags,
    params: jobParams,
    responses: { '200': withEtag(action === 'pause' ? 'The paused job.' : 'The resumed job.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, job_id: jobId } = c.input.params;
      const req = { organizationId, jobId };
      const { job } = await notFoundAs404<{ job?: Job }>(() =>
        action === 'pause' ? ctx.clients.jobs.pauseJob(req) : ctx.clients.jobs.resumeJob(req),
      );
      sendJob(c, 200, job);
    },
  });
}

function triggerJobRoute({ ctx }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/jobs/:job_id/trigger',
      operationId: 'triggerJob',
      summary: 'Fire a scheduled job now',
      description:
        "One execution now, paused or not, outside the schedule (which stays as it is). 201 with the execution: `succeeded` with the run it started, or `failed` with why (the plan's run limit, say).",
      tags,
      params: jobParams,
      responses: { '201': json(ExecutionSchema, 'The execution.'), ...errors, ...notFound },
      handler: async (c) => {
        const { organization_id: organizationId, job_id: jobId } = c.input.params;
        const { execution } = await notFoundAs404(() => ctx.clients.jobs.triggerJob({ organizationId, jobId }));
        sendJson(c.res, 201, executionJson(execution!));
      },
    }),
    creates: true,
  };
}

function listExecutionsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/jobs/:job_id/executions',
    operationId: 'listJobExecutions',
    summary: "List a scheduled job's executions",
    description: 'Newest first, each with the run it started as it stands now.',
    tags,
    params: jobParams,
    query: pageQuery,
    responses: {
      '200': json(listEnvelope('executions', ExecutionSchema, 'JobExecutionList'), 'One page of executions.'),
      ...errors,
      ...notFound,
    },
    handler: async (c) => {
      const { organization_id: organizationId, job_id: jobId } = c.input.params;
      const res = await listing(() =>
        notFoundAs404(() => ctx.clients.jobs.listJobExecutions({ organizationId, jobId, ...pageArgs(c.input.query) })),
      );
      sendPage(c, 'executions', res.executions.map(executionJson), res.nextPageToken);
    },
  });
}

export function jobRoutes(deps: RouteDeps): RestRoute[] {
  return [
    createJobRoute(deps),
    listJobsRoute(deps),
    getJobRoute(deps),
    updateJobRoute(deps),
    deleteJobRoute(deps),
    stateRoute(deps, 'pause'),
    stateRoute(deps, 'resume'),
    triggerJobRoute(deps),
    listExecutionsRoute(deps),
  ];
}
