// A seeding run's progress as Server-Sent Events (text/event-stream): an `item` event for each
// item whose outcome is decided (its `id` is the item's number in the run's sequence), then a
// `progress` event with the run (same id), and `end` once the run has finished. The stream reads
// the run from the brain's SeedingService every POLL_MS, so any replica serves it, whichever one
// works the run. A client that reconnects with `Last-Event-ID` gets the items decided after it.
import type { ServerResponse } from 'node:http';
import type { SeedingItem } from '../../gen/mindgate/brain/v1/seeding_pb.js';
import type { AppContext } from '../context.ts';
import { defineApiRoute, type AnyApiRouteContext } from '../http/api-route.ts';
import { errors, notFoundAs404, type RestRoute, type RouteDeps } from './rest-route.ts';
import { notFound, seedingItemJson, seedingRunJson, seedingRunParams, tags } from './seeding-json.ts';

const POLL_MS = 500;
const GAP_MS = 2_000;
const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

function send(res: ServerResponse, event: string, id: number, data: unknown): void {
  res.write(`event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Every item decided after `after`, in the order decided. */
async function changesAfter(ctx: AppContext, organizationId: string, runId: string, after: number): Promise<SeedingItem[]> {
  const items: SeedingItem[] = [];
  let pageToken = '';
  do {
    const page = await ctx.clients.seeding.listSeedingItems({
      organizationId,
      runId,
      changedAfter: BigInt(after),
      pageSize: 100,
      pageToken,
    });
    items.push(...page.items);
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return items;
}

function lastEventId(c: AnyApiRouteContext): number {
  const raw = String(c.req.headers['last-event-id'] ?? '').trim();
  return /^\d{1,15}$/.test(raw) ? Number(raw) : 0;
}

/**
 * The items to send after `seen`, in order. Numbers are taken before their item is stored, so a
 * reader may see number n + 1 before n: the stream waits for a missing number up to GAP_MS (a
 * number whose item was never stored, a writer that died, is then passed), and sends everything
 * once the run has finished.
 */
class Sequencer {
  seen: number;
  private gapSince: number | undefined;

  constructor(seen: number) {
    this.seen = seen;
  }

  next(items: SeedingItem[], finished: boolean): SeedingItem[] {
    const out: SeedingItem[] = [];
    for (const item of items) {
      const n = Number(item.seq);
      if (n <= this.seen) continue;
      if (n !== this.seen + 1 && !finished) {
        this.gapSince ??= Date.now();
        if (Date.now() - this.gapSince < GAP_MS) break;
      }
      this.gapSince = undefined;
      this.seen = n;
      out.push(item);
    }
    return out;
  }
}

async function stream(ctx: AppContext, c: AnyApiRouteContext, organizationId: string, runId: string): Promise<void> {
  let closed = false;
  c.res.on('close', () => (closed = true));
  const sequencer = new Sequencer(lastEventId(c));
  let lastProgress = '';
  while (!closed) {
    const { run } = await ctx.clients.seeding.getSeedingRun({ organizationId, runId });
    const json = seedingRunJson(run!);
    const finished = FINISHED.has(json.status);
    for (const item of sequencer.next(await changesAfter(ctx, organizationId, runId, sequencer.seen), finished)) {
      send(c.res, 'item', Number(item.seq), seedingItemJson(item));
    }
    const snapshot = JSON.stringify(json);
    if (snapshot !== lastProgress) send(c.res, 'progress', sequencer.seen, json);
    lastProgress = snapshot;
    if (finished) {
      send(c.res, 'end', sequencer.seen, { status: json.status });
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  c.res.end();
}

export function seedingStreamRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/seeding-runs/:run_id/events',
    operationId: 'streamSeedingRun',
    summary: "Stream a seeding run's progress",
    description:
      'Server-Sent Events: `item` for each item whose outcome is decided (id: its sequence number), `progress` with the run whenever it changes, `end` when it has finished (then the stream closes). Reconnect with `Last-Event-ID` to get only what was decided after it. Any replica serves it.',
    tags,
    params: seedingRunParams,
    responses: {
      '200': { description: 'The event stream.', content: { 'text/event-stream': { type: 'string' } } },
      ...errors,
      ...notFound,
    },
    handler: async (c) => {
      const { organization_id: organizationId, run_id: runId } = c.input.params;
      // The run must exist before the stream starts, so a wrong id is a 404 problem, not an empty stream.
      await notFoundAs404(() => ctx.clients.seeding.getSeedingRun({ organizationId, runId }));
      c.res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      c.res.write(': seeding run progress\n\n');
      try {
        await stream(ctx, c, organizationId, runId);
      } catch (err) {
        // The answer has started: a failure (the brain unreachable) ends the stream with an error
        // event; the client reconnects with Last-Event-ID.
        ctx.logger.warn({ err, runId }, 'seeding progress stream ended by an error');
        c.res.end(`event: error\ndata: ${JSON.stringify({ detail: 'the seeding service did not answer; reconnect' })}\n\n`);
      }
    },
  });
}
