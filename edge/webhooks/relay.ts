// The webhooks relay, in every edge replica: it takes the events each producing service recorded
// in its outbox (EventOutboxService, a long poll that answers as soon as an event is ready), hands
// them to the webhooks service with each organization's monthly limit, e-mails owners about
// disabled endpoints and alert rules' addresses about their investigations, and acknowledges them. Events are claimed with a lease, so replicas share
// the work; a relay that stops before acknowledging leaves the lease to end and the events are
// handed out again, which publishing recognises by their ids (at least once, never lost).
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectError } from '@connectrpc/connect';
import type { Client } from '@connectrpc/connect';
import type { EventOutboxService } from '../../gen/mindgate/events/v1/outbox_pb.js';
import type { AppContext } from '../context.ts';
import { createMonthlyLimits } from './limits.ts';
import { mailInvestigations } from './investigation-mail.ts';
import { notifyOwners } from './notify.ts';

const WAIT_MS = 1_000;
const MAX_EVENTS = 200;
const LEASE_MS = 30_000;
const MAX_BACKOFF_MS = 10_000;

export interface EventRelay {
  start(): void;
  stop(): Promise<void>;
}

export function createEventRelay(ctx: AppContext): EventRelay {
  const logger = ctx.logger.child({ component: 'webhooks-relay' });
  const limits = createMonthlyLimits(ctx);
  const stopping = new AbortController();
  const loops: Promise<void>[] = [];

  async function relayOnce(source: Client<typeof EventOutboxService>): Promise<number> {
    const { events } = await source.claimEvents(
      { maxEvents: MAX_EVENTS, leaseMs: LEASE_MS, waitMs: WAIT_MS },
      { signal: stopping.signal, timeoutMs: WAIT_MS + 10_000 },
    );
    if (events.length === 0) return 0;
    const monthlyLimits = await limits(events.map((e) => e.organizationId));
    await ctx.clients.webhooks.publishEvents({ events, monthlyLimits });
    await notifyOwners(ctx, events);
    await mailInvestigations(ctx, events);
    await source.ackEvents({ eventIds: events.map((e) => e.eventId) });
    return events.length;
  }

  async function run(name: string, source: Client<typeof EventOutboxService>): Promise<void> {
    let backoff = 0;
    while (!stopping.signal.aborted) {
      try {
        await relayOnce(source);
        backoff = 0;
      } catch (err) {
        if (stopping.signal.aborted) return;
        backoff = Math.min(Math.max(250, backoff * 2), MAX_BACKOFF_MS);
        const message = err instanceof ConnectError ? err.rawMessage : String(err);
        logger.warn(
          { err, source: name, retryInMs: backoff },
          `webhook events of ${name} not relayed yet (${message}); they stay in its outbox`,
        );
        await sleep(backoff, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
  }

  return {
    start() {
      for (const [name, source] of Object.entries(ctx.clients.outboxes)) loops.push(run(name, source));
    },
    async stop() {
      stopping.abort();
      await Promise.allSettled(loops);
    },
  };
}
