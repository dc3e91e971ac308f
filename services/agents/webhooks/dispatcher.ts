// Delivers the queued deliveries, in every replica of the agents service. Each pass reads the
// deliveries that are due, oldest first; for each, it takes one of its endpoint's concurrency slots
// (slots.ts), then claims the delivery: a compare-and-set on its version that moves `dueAt` a lease
// ahead, so exactly one replica makes each attempt, and one that dies mid-attempt leaves the lease
// to end for another to take over. The attempt (attempts.ts) runs without holding up the pass, so
// a slow endpoint never delays the others; its end wakes the next pass.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../common/log.ts';
import { attemptDelivery, endWithout } from './attempts.ts';
import type { WebhooksContext } from './context.ts';
import type { DeliveryRecord, EndpointRecord } from './records.ts';
import { createSender } from './sender.ts';
import { createSlots } from './slots.ts';

const POLL_MS = 1_000;
const BATCH = 200;
/** Attempts in flight in one replica, over all endpoints. */
const MAX_IN_FLIGHT = 64;

export interface Dispatcher {
  /** One pass over the due deliveries; resolves once its attempts have started. */
  pass(): Promise<number>;
  wake(): void;
  /** Waits for the attempts in flight. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export function createDispatcher(ctx: WebhooksContext, logger: Logger): Dispatcher {
  const replica = randomUUID();
  const leaseMs = ctx.config.timeoutMs + 30_000;
  const sender = createSender({ timeoutMs: ctx.config.timeoutMs, allowPrivate: ctx.config.allowPrivateUrls });
  const slots = createSlots(ctx, replica, leaseMs);
  const inFlight = new Map<string, Promise<void>>();
  const state = { stopped: false, again: false, woken: undefined as (() => void) | undefined };

  async function claim(d: DeliveryRecord): Promise<DeliveryRecord | undefined> {
    const claimed: DeliveryRecord = { ...d, dueAt: ctx.now() + leaseMs, leaseOwner: replica, version: d.version + 1 };
    return (await ctx.deliveries.put(claimed, { expect: { version: d.version, status: 'pending' } })) ? claimed : undefined;
  }

  /** Starts the delivery's attempt; false when its endpoint has no free slot. */
  async function start(d: DeliveryRecord, endpoint: EndpointRecord | undefined): Promise<boolean> {
    const slot = endpoint ? await slots.acquire(endpoint._id) : undefined;
    if (endpoint && !slot) return false;
    const claimed = await claim(d);
    if (!claimed) {
      if (slot) await slots.release(slot);
      return true;
    }
    const work = (async () => {
      try {
        if (!endpoint) await endWithout(ctx, claimed, 'the endpoint was deleted');
        else if (!endpoint.enabled && !claimed.test) await endWithout(ctx, claimed, 'the endpoint is disabled');
        else await attemptDelivery(ctx, sender, claimed, endpoint);
      } catch (err) {
        logger.warn({ err, delivery: claimed._id }, 'webhook attempt not completed; retried when its lease ends');
      } finally {
        if (slot) await slots.release(slot);
        inFlight.delete(claimed._id);
        wake();
      }
    })();
    inFlight.set(claimed._id, work);
    return true;
  }

  async function pass(): Promise<number> {
    const due = await ctx.deliveries.find({ dueAt: { $lte: ctx.now() } }, { sort: { field: 'dueAt', direction: 'asc' }, limit: BATCH });
    const endpoints = new Map<string, Promise<EndpointRecord | undefined>>();
    const full = new Set<string>();
    let started = 0;
    for (const d of due) {
      if (state.stopped || inFlight.size >= MAX_IN_FLIGHT) break;
      if (inFlight.has(d._id) || full.has(d.endpointId)) continue;
      if (!endpoints.has(d.endpointId)) endpoints.set(d.endpointId, ctx.endpoints.get(d.endpointId));
      if (await start(d, await endpoints.get(d.endpointId))) started++;
      else full.add(d.endpointId);
    }
    return started;
  }

  function wake(): void {
    state.again = true;
    state.woken?.();
  }

  const loop = (async () => {
    while (!state.stopped) {
      state.again = false;
      await pass().catch((err: unknown) => logger.warn({ err }, 'webhook delivery pass failed; retried'));
      if (state.again || state.stopped) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        state.woken = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      state.woken = undefined;
    }
  })();

  return {
    pass,
    wake,
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight.values()]);
    },
    async stop() {
      state.stopped = true;
      state.woken?.();
      await loop;
      await Promise.allSettled([...inFlight.values()]);
      await sender.close();
    },
  };
}
