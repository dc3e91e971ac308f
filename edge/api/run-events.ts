// A run's live view: its events over Server-Sent Events. The events are derived from what the
// agents service stores (the run and its steps), read again every RUN_EVENTS_POLL_MS, so any edge
// replica serves any stream and nothing is published in process. Their ids are stable: 1 is
// `queued`, 2 `running` (once claimed), 3 + i the step of index i, and 3 + step_count the final
// status; a client that reconnects with Last-Event-ID gets only what came after it, and one that
// already has the final event gets 204 (which tells an EventSource to stop).
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import type { Run, Step } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { RunStatus } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import type { AppContext } from '../context.ts';
import { errors, iso, notFoundAs404, type RestRoute, type RouteDeps } from './rest-route.ts';
import { RUN_STATUS_NAMES, runJson, runParams, stepJson } from './runs.ts';

const FINISHED = new Set([RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.TIMED_OUT]);
const KEEP_ALIVE_MS = 15_000;

interface RunEvent {
  id: number;
  event: 'status' | 'step';
  data: unknown;
}

/** The id after which to send: Last-Event-ID (or `?last_event_id`), 0 for everything. */
function lastEventId(header: string | string[] | undefined, query: number | undefined): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && /^\d{1,9}$/.test(value.trim())) return Number(value.trim());
  return query ?? 0;
}

/** The run's status events, in order, as the stored run shows them. */
function statusEvents(run: Run): RunEvent[] {
  const events: RunEvent[] = [{ id: 1, event: 'status', data: { status: 'queued', at: iso(run.createTime as Timestamp | undefined) } }];
  if (run.startTime) {
    events.push({
      id: 2,
      event: 'status',
      data: { status: 'running', at: iso(run.startTime as Timestamp | undefined), agent_id: run.agentId },
    });
  }
  if (FINISHED.has(run.status)) {
    const data = { status: RUN_STATUS_NAMES[run.status - 1], at: iso(run.finishTime as Timestamp | undefined), run: runJson(run) };
    events.push({ id: 3 + run.stepCount, event: 'status', data });
  }
  return events;
}

/** The steps of index `from` and beyond that the run has counted (a step is counted once it stands). */
async function stepsFrom(ctx: AppContext, run: Run, from: number): Promise<Step[]> {
  const steps: Step[] = [];
  let pageToken = '';
  do {
    const page = await ctx.clients.runs.listSteps({ organizationId: run.organizationId, runId: run.runId, pageSize: 100, pageToken });
    steps.push(...page.steps.filter((s) => s.index >= from && s.index < run.stepCount));
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return steps;
}

/** Every event after `after`, in id order. */
async function eventsAfter(ctx: AppContext, run: Run, after: number): Promise<RunEvent[]> {
  const events = statusEvents(run);
  const firstStep = Math.max(0, after - 2);
  if (run.stepCount > firstStep) {
    for (const step of await stepsFrom(ctx, run, firstStep)) events.push({ id: 3 + step.index, event: 'step', data: stepJson(step) });
  }
  return events.filter((e) => e.id > after).sort((a, b) => a.id - b.id);
}

export function streamRunEventsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/runs/:run_id/events',
    operationId: 'streamRunEvents',
    summary: "Stream a run's events (SSE)",
    description:
      'Server-Sent Events: `status` events (`queued` id 1, `running` id 2, the final status with the whole run, id 3 + step_count) and a `step` event for each step (id 3 + its index), in order; the stream ends after the final status. Reconnect with `Last-Event-ID` (or `?last_event_id=`) to get only what came after; 204 when nothing will come. Any replica serves any run: the stream reads the stored run every `RUN_EVENTS_POLL_MS`.',
    tags: ['Investigations'],
    params: runParams,
    query: z.object({
      last_event_id: z.coerce
        .number()
        .int()
        .min(0)
        .max(999_999_999)
        .optional()
        .meta({ description: 'For clients that cannot send Last-Event-ID.' }),
    }),
    responses: {
      '200': { description: 'The event stream.', content: { 'text/event-stream': z.string().meta({ title: 'RunEventStream' }) } },
      '204': { description: 'The run has finished and the client has every event.' },
      ...errors,
      '404': 'NotFound',
    },
    handler: async (c) => {
      const { organization_id: organizationId, run_id: runId } = c.input.params;
      const { run } = await notFoundAs404(() => ctx.clients.runs.getRun({ organizationId, runId }));
      const after = lastEventId(c.req.headers['last-event-id'], c.input.query.last_event_id);
      if (FINISHED.has(run!.status) && after >= 3 + run!.stepCount) {
        c.res.writeHead(204).end();
        return;
      }
      const closed = new AbortController();
      c.res.on('close', () => closed.abort());
      c.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
      c.res.write('retry: 1000\n\n');
      try {
        await stream(ctx, c.res, closed.signal, run!, after);
      } catch (err) {
        // The headers are gone: the stream just ends, and the client reconnects with its Last-Event-ID.
        ctx.logger.warn({ err, runId }, 'run event stream failed');
      }
      c.res.end();
    },
  });
}

/** Writes the events after `after` as they appear, until the run has finished or the client left. */
async function stream(ctx: AppContext, res: ServerResponse, closed: AbortSignal, first: Run, from: number): Promise<void> {
  let run = first;
  let after = from;
  let quietSince = Date.now();
  while (!closed.aborted) {
    for (const e of await eventsAfter(ctx, run, after)) {
      res.write(`id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
      after = e.id;
      quietSince = Date.now();
    }
    if (FINISHED.has(run.status)) return;
    if (Date.now() - quietSince >= KEEP_ALIVE_MS) {
      res.write(': keep-alive\n\n');
      quietSince = Date.now();
    }
    await sleep(ctx.config.runner.eventsPollMs, undefined, { signal: closed }).catch(() => undefined);
    if (closed.aborted) return;
    run = (await ctx.clients.runs.getRun({ organizationId: run.organizationId, runId: run.runId })).run!;
  }
}
