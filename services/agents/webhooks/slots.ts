// Each endpoint's concurrency slots: WEBHOOK_ENDPOINT_CONCURRENCY records per endpoint, each held
// by one attempt at a time (a compare-and-set on its owner and lease end), so the cap holds across
// replicas. A replica that dies holding one leaves the lease to end.
import { randomUUID } from 'node:crypto';
import type { WebhooksContext } from './context.ts';
import type { SlotRecord } from './records.ts';

export interface Slots {
  /** A free slot of the endpoint, now held for `leaseMs`; undefined when all are held. */
  acquire(endpointId: string): Promise<SlotRecord | undefined>;
  release(slot: SlotRecord): Promise<void>;
}

export function createSlots(ctx: WebhooksContext, replica: string, leaseMs: number): Slots {
  return {
    async acquire(endpointId) {
      const now = ctx.now();
      const ids = Array.from({ length: ctx.config.endpointConcurrency }, (_, k) => `${endpointId}#${k}`);
      const held = new Map((await ctx.slots.getMany(ids)).map((s) => [s._id, s]));
      for (const id of ids) {
        const current = held.get(id);
        if (current && current.until > now) continue;
        const slot: SlotRecord = {
          _id: id,
          owner: `${replica}/${randomUUID()}`,
          until: now + leaseMs,
          expiresAt: now + leaseMs + 86_400_000,
        };
        if (await ctx.slots.put(slot, { expect: current ? { owner: current.owner, until: current.until } : null })) return slot;
      }
      return undefined;
    },
    async release(slot) {
      await ctx.slots.put({ ...slot, until: 0 }, { expect: { owner: slot.owner } }).catch(() => false);
    },
  };
}
