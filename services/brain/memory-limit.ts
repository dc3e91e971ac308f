// The plan's `max_memories`, enforced where memories are written: a write that would add a memory
// to a brain already holding the plan's maximum is refused with RESOURCE_EXHAUSTED (reason
// plan-limit), naming the plan and the limit, before anything is stored, so a refused write leaves
// nothing behind and an accepted one is never taken back. Updates of an existing memory never
// count. The plan is read through the entitlements cache (two seconds at most behind a change of
// plan). Writers racing at the limit may each pass the count: the brain can end up one memory per
// concurrent writer over it, never more. When billing cannot answer, writes are accepted (and
// logged): losing the organization's memory would cost more than a few memories over a limit.
import { Code } from '@connectrpc/connect';
import type { EntitlementsCache } from '../billing/entitlements-cache.ts';
import type { Logger } from '../common/log.ts';
import { failure, REASONS } from '../common/rpc/reasons.ts';
import type { RecordCollection } from '../common/storage/records/interface.ts';
import type { MemoryRecord } from './memory-record.ts';

/** Resolves when the organization may add one more memory; throws RESOURCE_EXHAUSTED otherwise. */
export type MemoryLimit = (organizationId: string) => Promise<void>;

export function createMemoryLimit(memories: RecordCollection<MemoryRecord>, entitlements: EntitlementsCache, logger: Logger): MemoryLimit {
  return async (organizationId) => {
    let limit: number;
    let plan: string;
    try {
      const res = await entitlements.get(organizationId);
      limit = Number(res.entitlements?.maxMemories ?? 0n);
      plan = res.planName || 'current';
    } catch (err) {
      logger.warn({ err, organizationId }, 'plan unknown (billing did not answer): memory accepted without checking max_memories');
      return;
    }
    if (limit <= 0) return;
    const held = await memories.count({ organizationId, deleted: { $ne: true } });
    if (held < limit) return;
    throw failure(
      `the organization's brain holds ${held} memories, the most the ${plan} plan allows (max_memories ${limit}): ` +
        'delete memories it no longer needs, or move to a plan with more, then write again',
      Code.ResourceExhausted,
      REASONS.planLimit,
    );
  };
}
