// The REST API for external agents (the organization's own agents, Claude Code, an SDK program):
// they take `external` runs from the organization's queue with a lease, keep it with heartbeats,
// report their steps and complete the run. A call whose lease was lost (expired and taken over, or
// the run cancelled or timed out) is 409 `lease-lost`: the agent must stop working on the run.
// Each a call to the agents service's RunsService.
import type { JsonObject } from '@bufbuild/protobuf';
import * as z from 'zod';
import { Executor, RunStatus, StepKind } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { errors, json, notFoundAs404, orgParams, readJson, type RestRoute, type RouteDeps } from './rest-route.ts';
import { runJson, runParams, RunSchema, stepJson, StepSchema } from './runs.ts';
import { reportExternalFeedback } from '../runs/feedback.ts';
import { quoteEtag } from './etag.ts';
import { MessageSchema, messageJson } from './threads.ts';

const LeaseId = z.uuid({ error: 'must be the lease_id of your claim' }).meta({ example: '3b0f2c4e-8a1d-4f6b-9c2e-7d5a1b3c9e0f' });
const LeaseSeconds = z
  .int({ error: 'must be an integer' })
  .min(5, { error: 'must be at least 5' })
  .max(3_600, { error: 'must be at most 3600' })
  .optional()
  .meta({ description: 'The lease, 5-3600 seconds (default 60).' });
const Tokens = z.int({ error: 'must be an integer' }).min(0, { error: 'must not be negative' }).max(1e12).optional();
const KINDS = {
  model_call: StepKind.MODEL_CALL,
  tool_call: StepKind.TOOL_CALL,
  brain_read: StepKind.BRAIN_READ,
  brain_write: StepKind.BRAIN_WRITE,
} as const;

const ClaimSchema = z
  .object({
    agent_id: z
      .string()
      .regex(/^[A-Za-z0-9._:@-]{1,200}$/, { error: 'must be 1-200 characters of [A-Za-z0-9._:@-]' })
      .meta({ description: 'Who claims: your agent, as it names itself.' }),
    lease_seconds: LeaseSeconds,
  })
  .strict()
  .meta({ title: 'ClaimRun', example: { agent_id: 'oncall-bot@host-7', lease_seconds: 120 } });
const ClaimedSchema = z
  .object({ run: RunSchema, lease_id: z.string(), steps: z.array(StepSchema), messages: z.array(MessageSchema) })
  .meta({ title: 'ClaimedRun' });
const HeartbeatSchema = z
  .object({ lease_id: LeaseId, lease_seconds: LeaseSeconds })
  .strict()
  .meta({ title: 'RunHeartbeat', example: { lease_id: '3b0f2c4e-8a1d-4f6b-9c2e-7d5a1b3c9e0f' } });
const ReportStepSchema = z
  .object({
    lease_id: LeaseId,
    lease_seconds: LeaseSeconds,
    kind: z
      .enum(['model_call', 'tool_call', 'brain_read', 'brain_write'], { error: 'must be model_call, tool_call, brain_read or brain_write' })
      .meta({
        description:
          'A `brain_read` whose `result.memories` lists `{namespace, key}` names the memories the run read (its outcome is reported on them with `brain_feedback`); a `brain_write` whose result has `namespace`, `key` and `version` is listed among the memories the thread produced.',
      }),
    name: z.string().min(1, { error: 'must not be empty' }).max(200, { error: 'must be at most 200 characters' }),
    ok: z.boolean({ error: 'must be true or false' }),
    arguments: z.record(z.string(), z.unknown()).optional(),
    result: z.record(z.string(), z.unknown()).optional(),
    error: z.string().max(10_000, { error: 'must be at most 10000 characters' }).optional(),
    input_tokens: Tokens,
    output_tokens: Tokens,
    model: z.string().max(200, { error: 'must be at most 200 characters' }).optional(),
  })
  .strict()
  .meta({
    title: 'ReportRunStep',
    example: {
      lease_id: '3b0f2c4e-8a1d-4f6b-9c2e-7d5a1b3c9e0f',
      kind: 'tool_call',
      name: 'grafana/query',
      ok: true,
      arguments: { q: 'p99' },
      result: { value: 2.3 },
    },
  });
const CompleteSchema = z
  .object({
    lease_id: LeaseId,
    status: z.enum(['succeeded', 'failed'], { error: 'must be succeeded or failed' }),
    output: z.string().max(100_000, { error: 'must be at most 100000 characters' }).optional(),
    error: z.string().max(10_000, { error: 'must be at most 10000 characters' }).optional(),
  })
  .strict()
  .meta({
    title: 'CompleteRun',
    example: { lease_id: '3b0f2c4e-8a1d-4f6b-9c2e-7d5a1b3c9e0f', status: 'succeeded', output: 'The 09:35 deploy lowered the timeout.' },
  });

const tags = ['Investigations'];
const leaseResponses = { ...errors, '404': 'NotFound', '409': 'Conflict' } as const;

function claimRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/runs/claim',
      operationId: 'claimRun',
      summary: 'Claim an external run',
      description:
        "Takes the organization's oldest `external` run waiting (queued, or whose lease expired) with a lease: 200 with the run, the `lease_id` to send with every later call, the steps already recorded and the thread's messages; 204 when none waits.",
      tags,
      params: orgParams,
      responses: { '200': json(ClaimedSchema, 'The claimed run.'), '204': { description: 'No run waits.' }, ...errors },
      handler: async (c) => {
        const body = await readJson(c, ClaimSchema, limit);
        const claim = await ctx.clients.runs.claimRun({
          organizationId: c.input.params.organization_id,
          executor: Executor.EXTERNAL,
          agentId: body.agent_id,
          leaseSeconds: body.lease_seconds ?? 0,
        });
        if (!claim.run) return void c.res.writeHead(204).end();
        sendJson(c.res, 200, {
          run: runJson(claim.run),
          lease_id: claim.leaseId,
          steps: claim.steps.map(stepJson),
          messages: claim.messages.map(messageJson),
        });
      },
    }),
    body: ClaimSchema,
  };
}

function heartbeatRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/runs/:run_id/heartbeat',
      operationId: 'heartbeatRun',
      summary: "Keep a run's lease",
      description: 'Extends the lease by `lease_seconds`. 409 `lease-lost` when you no longer hold it: stop working on the run.',
      tags,
      params: runParams,
      responses: { '200': json(RunSchema, 'The run with its new lease expiry.'), ...leaseResponses },
      handler: async (c) => {
        const body = await readJson(c, HeartbeatSchema, limit);
        const { organization_id: organizationId, run_id: runId } = c.input.params;
        const { run } = await notFoundAs404(() =>
          ctx.clients.runs.heartbeatRun({ organizationId, runId, leaseId: body.lease_id, leaseSeconds: body.lease_seconds ?? 0 }),
        );
        sendJson(c.res, 200, runJson(run!), { etag: quoteEtag(run!.etag) });
      },
    }),
    body: HeartbeatSchema,
  };
}

function reportStepRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/runs/:run_id/steps',
      operationId: 'reportRunStep',
      summary: "Record a run's next step",
      description:
        'Records a finished step (its index is the next one) and extends the lease. 409 `lease-lost` when you no longer hold it.',
      tags,
      params: runParams,
      responses: { '201': json(StepSchema, 'The step as stored.'), ...leaseResponses },
      handler: async (c) => {
        const body = await readJson(c, ReportStepSchema, limit);
        const { organization_id: organizationId, run_id: runId } = c.input.params;
        const { step } = await notFoundAs404(() =>
          ctx.clients.runs.reportStep({
            organizationId,
            runId,
            leaseId: body.lease_id,
            leaseSeconds: body.lease_seconds ?? 0,
            kind: KINDS[body.kind],
            name: body.name,
            ok: body.ok,
            arguments: body.arguments as JsonObject | undefined,
            result: body.result as JsonObject | undefined,
            error: body.error ?? '',
            inputTokens: BigInt(body.input_tokens ?? 0),
            outputTokens: BigInt(body.output_tokens ?? 0),
            model: body.model ?? '',
          }),
        );
        sendJson(c.res, 201, stepJson(step!));
      },
    }),
    body: ReportStepSchema,
  };
}

function completeRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/runs/:run_id/complete',
      operationId: 'completeRun',
      summary: 'Complete a run',
      description:
        'Ends the run as `succeeded` (its `output` is posted to the thread) or `failed`. A run created with `brain_feedback` first reports its outcome to the Brain on the memories its `brain_read` steps named, recorded as a last `brain_write` step named `brain_feedback` (once: a completion retried after it does not report again). 409 `lease-lost` when you no longer hold it.',
      tags,
      params: runParams,
      responses: { '200': json(RunSchema, 'The finished run.'), ...leaseResponses },
      handler: async (c) => {
        const body = await readJson(c, CompleteSchema, limit);
        const { organization_id: organizationId, run_id: runId } = c.input.params;
        const status = body.status === 'succeeded' ? RunStatus.SUCCEEDED : RunStatus.FAILED;
        const lease = { organizationId, runId, leaseId: body.lease_id };
        await notFoundAs404(() => reportExternalFeedback(ctx.clients, lease, status === RunStatus.SUCCEEDED));
        const { run } = await notFoundAs404(() =>
          ctx.clients.runs.completeRun({
            organizationId,
            runId,
            leaseId: body.lease_id,
            status,
            output: body.output ?? '',
            error: body.error ?? '',
          }),
        );
        sendJson(c.res, 200, runJson(run!), { etag: quoteEtag(run!.etag) });
      },
    }),
    body: CompleteSchema,
  };
}

export function runLeaseRoutes(deps: RouteDeps): RestRoute[] {
  return [claimRoute(deps), heartbeatRoute(deps), reportStepRoute(deps), completeRoute(deps)];
}
