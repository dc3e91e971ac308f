// The REST API's runs: an agent working on a thread. Members start and cancel them, viewers read
// them and their steps; the platform's LLM runner executes them (edge/runs/). Each a call to the
// agents service's RunsService.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import { Executor, RunStatus, StepKind, type Run, type Step } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import { ETAG_HEADER, quoteEtag } from './etag.ts';
import {
  errors,
  iso,
  json,
  listEnvelope,
  listing,
  notFoundAs404,
  OrganizationId,
  orgParams,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';
import { ThreadId, threadParams } from './threads.ts';

export const RunId = z
  .string()
  .regex(/^run_[A-Za-z0-9]{1,60}$/, { error: 'must be a run id (run_...)' })
  .meta({ description: 'Run id.', example: 'run_Zt3pK9qW1xLm7Ns0Ve2a' });
export const runParams = z.object({ organization_id: OrganizationId, run_id: RunId });

/** The API's names of the run statuses, in the order of RunStatus (from 1). */
export const RUN_STATUS_NAMES = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out'] as const;
const Status = z.enum(RUN_STATUS_NAMES, { error: `must be one of ${RUN_STATUS_NAMES.join(', ')}` });
const EXECUTORS = { llm: Executor.LLM, external: Executor.EXTERNAL } as const;
const ExecutorName = z.enum(['llm', 'external'], { error: 'must be llm or external' });
export const KIND_NAMES: Record<number, string> = {
  [StepKind.MODEL_CALL]: 'model_call',
  [StepKind.TOOL_CALL]: 'tool_call',
  [StepKind.BRAIN_READ]: 'brain_read',
  [StepKind.BRAIN_WRITE]: 'brain_write',
  [StepKind.CONDITION]: 'condition',
};
const EXECUTOR_NAMES: Record<number, string> = { [Executor.EXTERNAL]: 'external', [Executor.PLAYBOOK]: 'playbook' };

export const RunSchema = z
  .object({
    id: z.string().meta({ example: 'run_Zt3pK9qW1xLm7Ns0Ve2a' }),
    organization_id: z.string(),
    thread_id: z.string(),
    status: Status,
    executor: z
      .enum(['llm', 'external', 'playbook'])
      .meta({ description: "Who works it: the platform's LLM runner, an external agent that claims it, or the built-in playbook runner." }),
    instructions: z.string().meta({ description: "The system prompt; empty for the runner's default." }),
    agent_id: z.string().meta({ description: 'The executor that holds or last held it.', example: 'llm:edge-0:1f2e3d4c' }),
    attempt: z.int().meta({ description: 'How many times it was claimed (more than 1 after a takeover).' }),
    lease_expires_at: z.string().nullable(),
    timeout_seconds: z.int(),
    usage: z.object({ input_tokens: z.int(), output_tokens: z.int(), tool_calls: z.int(), duration_ms: z.int() }),
    model: z.string(),
    output: z.string().meta({ description: 'What the run concluded (Markdown), once it succeeded.' }),
    error: z.string(),
    step_count: z.int(),
    created_by: z.string(),
    retry_of: z.string().nullable().meta({ description: 'The run this one retries.' }),
    playbook_id: z.string().nullable().meta({ description: 'The playbook it follows (runPlaybook).' }),
    playbook_version: z.int().nullable().meta({ description: 'The playbook version it follows: the published one when it was queued.' }),
    inputs: z.record(z.string(), z.unknown()).meta({ description: "The values given for the playbook's inputs." }),
    brain_feedback: z.boolean().meta({ description: "The run's outcome is reported to the Brain as feedback on the memories it read." }),
    created_at: z.string().nullable(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ title: 'Run' });

export const StepSchema = z
  .object({
    index: z.int(),
    kind: z.enum(['model_call', 'tool_call', 'brain_read', 'brain_write', 'condition']),
    name: z.string().meta({ example: 'brain_recall' }),
    ok: z.boolean(),
    arguments: z.record(z.string(), z.unknown()),
    result: z.record(z.string(), z.unknown()),
    error: z.string(),
    input_tokens: z.int(),
    output_tokens: z.int(),
    attempt: z.int(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ title: 'RunStep' });

const CreateRunSchema = z
  .object({
    executor: ExecutorName.optional().meta({ description: '`llm` (the default) or `external`.' }),
    instructions: z.string().max(20_000, { error: 'must be at most 20000 characters' }).optional(),
    timeout_seconds: z
      .int({ error: 'must be an integer' })
      .min(1, { error: 'must be at least 1' })
      .max(86_400, { error: 'must be at most 86400' })
      .optional(),
    brain_feedback: z.boolean({ error: 'must be true or false' }).optional().meta({
      description:
        "Report the run's outcome to the Brain (worked when it succeeds, failed when it fails) on the memories it read: an `llm` run's recalls, an `external` run's `brain_read` steps. Default false.",
    }),
  })
  .strict()
  .meta({
    title: 'CreateRun',
    example: { instructions: 'Find the cause and propose a fix.', timeout_seconds: 900, brain_feedback: true },
  });
const CancelRunSchema = z
  .object({ reason: z.string().max(1_000, { error: 'must be at most 1000 characters' }).optional() })
  .strict()
  .meta({ title: 'CancelRun', example: { reason: 'resolved by hand' } });
const runListQuery = pageQuery.extend({
  thread_id: ThreadId.optional().meta({ description: 'Only the runs of this thread.' }),
  status: Status.optional().meta({ description: 'Only runs in this status.' }),
});

export const runJson = (r: Run) => ({
  id: r.runId,
  organization_id: r.organizationId,
  thread_id: r.threadId,
  status: RUN_STATUS_NAMES[r.status - 1] ?? 'queued',
  executor: EXECUTOR_NAMES[r.executor] ?? 'llm',
  instructions: r.instructions,
  agent_id: r.agentId,
  attempt: r.attempt,
  lease_expires_at: iso(r.leaseExpireTime as Timestamp | undefined),
  timeout_seconds: r.timeoutSeconds,
  usage: {
    input_tokens: Number(r.usage?.inputTokens ?? 0),
    output_tokens: Number(r.usage?.outputTokens ?? 0),
    tool_calls: r.usage?.toolCalls ?? 0,
    duration_ms: Number(r.usage?.durationMs ?? 0),
  },
  model: r.model,
  output: r.output,
  error: r.error,
  step_count: r.stepCount,
  created_by: r.createdBy,
  retry_of: r.retryOf === '' ? null : r.retryOf,
  playbook_id: r.playbookId === '' ? null : r.playbookId,
  playbook_version: r.playbookVersion === 0 ? null : r.playbookVersion,
  inputs: r.inputs ?? {},
  brain_feedback: r.brainFeedback,
  created_at: iso(r.createTime as Timestamp | undefined),
  started_at: iso(r.startTime as Timestamp | undefined),
  finished_at: iso(r.finishTime as Timestamp | undefined),
});
export const stepJson = (s: Step) => ({
  index: s.index,
  kind: KIND_NAMES[s.kind] ?? 'tool_call',
  name: s.name,
  ok: s.ok,
  arguments: s.arguments ?? {},
  result: s.result ?? {},
  error: s.error,
  input_tokens: Number(s.inputTokens),
  output_tokens: Number(s.outputTokens),
  attempt: s.attempt,
  started_at: iso(s.startTime as Timestamp | undefined),
  finished_at: iso(s.finishTime as Timestamp | undefined),
});
export const withEtag = (description: string) => ({ ...json(RunSchema, description), headers: ETAG_HEADER });
const tags = ['Investigations'];
const notFound = { '404': 'NotFound' } as const;

function createRunRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/threads/:thread_id/runs',
      operationId: 'createRun',
      summary: 'Start a run on a thread',
      description:
        "Queues a run. An `llm` run (the default) is worked by the platform's LLM runner (where `LLM_URL` is set): it reads the thread, may recall from and write to the organization's Brain and call the tools of the organization's MCP servers through the gateway, and posts its conclusion to the thread. An `external` run waits for an agent of the organization to claim it (`claimRun`). With `brain_feedback`, the run's outcome is reported to the Brain on the memories it read.",
      tags,
      params: threadParams,
      responses: { '201': withEtag('The queued run.'), ...errors, ...notFound },
      handler: async (c) => {
        const body = await readJson(c, CreateRunSchema, limit);
        const { organization_id: organizationId, thread_id: threadId } = c.input.params;
        const { run } = await notFoundAs404(() =>
          ctx.clients.runs.createRun({
            organizationId,
            threadId,
            executor: EXECUTORS[body.executor ?? 'llm'],
            instructions: body.instructions ?? '',
            timeoutSeconds: body.timeout_seconds ?? 0,
            brainFeedback: body.brain_feedback ?? false,
            createdBy: callerOf(c).subject,
          }),
        );
        sendJson(c.res, 201, runJson(run!), { etag: quoteEtag(run!.etag) });
      },
    }),
    body: CreateRunSchema,
    creates: true,
  };
}

function listRunsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/runs',
    operationId: 'listRuns',
    summary: 'List runs',
    description: "The organization's runs, newest first; `thread_id` and `status` narrow the list.",
    tags,
    params: orgParams,
    query: runListQuery,
    responses: { '200': json(listEnvelope('runs', RunSchema, 'RunList'), 'One page of runs.'), ...errors, ...notFound },
    handler: async (c) => {
      const { thread_id: threadId, status, ...page } = c.input.query;
      const res = await listing(() =>
        notFoundAs404(() =>
          ctx.clients.runs.listRuns({
            organizationId: c.input.params.organization_id,
            threadId: threadId ?? '',
            status: status ? ((RUN_STATUS_NAMES.indexOf(status) + 1) as RunStatus) : RunStatus.UNSPECIFIED,
            ...pageArgs(page),
          }),
        ),
      );
      sendPage(c, 'runs', res.runs.map(runJson), res.nextPageToken);
    },
  });
}

function getRunRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/runs/:run_id',
    operationId: 'getRun',
    summary: 'Get a run',
    tags,
    params: runParams,
    responses: { '200': withEtag('The run.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, run_id: runId } = c.input.params;
      const { run } = await notFoundAs404(() => ctx.clients.runs.getRun({ organizationId, runId }));
      sendJson(c.res, 200, runJson(run!), { etag: quoteEtag(run!.etag) });
    },
  });
}

function cancelRunRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/runs/:run_id/cancel',
      operationId: 'cancelRun',
      summary: 'Cancel a run',
      description: 'A queued run never starts; a running one stops at its next step. 409 `run-finished` once it has finished.',
      tags,
      params: runParams,
      responses: { '200': withEtag('The cancelled run.'), ...errors, ...notFound, '409': 'Conflict' },
      handler: async (c) => {
        const body =
          c.req.headers['content-length'] === '0' || c.req.headers['content-type'] === undefined
            ? {}
            : await readJson(c, CancelRunSchema, limit);
        const { organization_id: organizationId, run_id: runId } = c.input.params;
        const { run } = await notFoundAs404(() => ctx.clients.runs.cancelRun({ organizationId, runId, reason: body.reason ?? '' }));
        sendJson(c.res, 200, runJson(run!), { etag: quoteEtag(run!.etag) });
      },
    }),
    body: CancelRunSchema,
  };
}

function retryRunRoute({ ctx }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/runs/:run_id/retry',
      operationId: 'retryRun',
      summary: 'Retry a run',
      description:
        'Queues a new run on the same thread with the same executor, instructions and timeout as a finished one (`retry_of` names it). 409 `run-active` while it is queued or running.',
      tags,
      params: runParams,
      responses: { '201': withEtag('The new run.'), ...errors, ...notFound, '409': 'Conflict' },
      handler: async (c) => {
        const { organization_id: organizationId, run_id: runId } = c.input.params;
        const { run } = await notFoundAs404(() => ctx.clients.runs.retryRun({ organizationId, runId, createdBy: callerOf(c).subject }));
        sendJson(c.res, 201, runJson(run!), { etag: quoteEtag(run!.etag) });
      },
    }),
    creates: true,
  };
}

function listStepsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/runs/:run_id/steps',
    operationId: 'listRunSteps',
    summary: "List a run's steps",
    description: 'In the order taken: model calls, Brain reads and other tool calls, with arguments, results and tokens.',
    tags,
    params: runParams,
    query: pageQuery,
    responses: { '200': json(listEnvelope('steps', StepSchema, 'RunStepList'), 'One page of steps.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, run_id: runId } = c.input.params;
      const res = await listing(() =>
        notFoundAs404(() => ctx.clients.runs.listSteps({ organizationId, runId, ...pageArgs(c.input.query) })),
      );
      sendPage(c, 'steps', res.steps.map(stepJson), res.nextPageToken);
    },
  });
}

export function runRoutes(deps: RouteDeps): RestRoute[] {
  return [createRunRoute(deps), listRunsRoute(deps), getRunRoute(deps), cancelRunRoute(deps), retryRunRoute(deps), listStepsRoute(deps)];
}
