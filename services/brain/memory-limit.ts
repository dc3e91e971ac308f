// The plan's `max_memories`, enforced where memories are written: a write that would add a memory
// to a brain already holding the plan's maximum is refused with RESOURCE_EXHAUSTED (reason
// plan-limit), naming the plan and the limit, before anything is stored, so a refused write leaves
// nothing behind and an accepted one is never taken back. Updates of an existing memory never
// count. The plan is read through the entitlements cache (two seconds at most behind a change).
//
// Counting is what costs: an organization's live memories are counted from the indexes (all its
// records less its tombstones): under a millisecond at 10,000 memories and about 20 ms at 100,000
// on SQLite on a loaded 2-core machine, where a filter on `deleted` reads every document and takes
// 280 ms (test/bench/memory-limit.bench.ts). So the count is exact for every write within NEAR
// memories of the limit; further away, a count up to REFRESH_MS old plus this replica's writes
// since is used: only other replicas adding NEAR memories within REFRESH_MS (200 a second) could
// carry an organization past its limit that way. Writers racing at
// the limit may each pass the count: the brain can end up one memory per concurrent writer over it,
// never more. When billing cannot answer, writes are accepted (and logged): losing an
// organization's memory would cost more than a few memories over a limit.
import { Code } from '@connectrpc/connect';
import type { EntitlementsCache } from '../billing/entitlements-cache.ts';
import type { Logger } from '../common/log.ts';
import { failure, REASONS } from '../common/rpc/reasons.ts';
import type { RecordCollection, RecordStore } from '../common/storage/records/interface.ts';
import type { MemoryRecord } from './memory-record.ts';

/** Writes within this many memories of the limit count exactly. */
export const NEAR = 1_000;
/** How long a count far from the limit is reused (per organization, per replica). */
export const REFRESH_MS = 5_000;
const MAX_KNOWN = 10_000;

/** Resolves when the organization may add one more memory; throws RESOURCE_EXHAUSTED otherwise. */
export type MemoryLimit = (organizationId: string) => Promise<void>;

/** The collection of memories with the index the count below needs (indexes are only ever added). */
export function memoriesForCounting(records: RecordStore): RecordCollection<MemoryRecord> {
  return records.collection<MemoryRecord>('memories', { indexes: [{ fields: ['organizationId', 'deleted'] }] });
}

/**
 * The organization's live memories: all its records (an index-only count) less its tombstones
 * (an index seek on organizationId and deleted: there are few). Filtering on `deleted != true`
 * instead reads every document of the organization (the benchmark shows both).
 */
export async function countLiveMemories(memories: RecordCollection<MemoryRecord>, organizationId: string): Promise<number> {
  const [all, tombstones] = await Promise.all([memories.count({ organizationId }), memories.count({ organizationId, deleted: true })]);
  return all - tombstones;
}

export interface MemoryLimitOptions {
  memories: RecordCollection<MemoryRecord>;
  entitlements: EntitlementsCache;
  logger: Logger;
  now: () => number;
}

export function createMemoryLimit(options: MemoryLimitOptions): MemoryLimit {
  const { memories, entitlements, logger, now } = options;
  /** Per organization: a count, when it was taken, and this replica's new memories since. */
  const known = new Map<string, { count: number; at: number; since: number }>();

  async function held(organizationId: string, limit: number): Promise<number> {
    const seen = known.get(organizationId);
    if (seen && now() - seen.at < REFRESH_MS && seen.count + seen.since < limit - NEAR) return seen.count + seen.since++;
    const count = await countLiveMemories(memories, organizationId);
    if (known.size >= MAX_KNOWN && !known.has(organizationId)) known.delete(known.keys().next().value!);
    known.set(organizationId, { count, at: now(), since: 1 });
    return count;
  }

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
    const count = await held(organizationId, limit);
    if (count < limit) return;
    throw failure(
      `the organization's brain holds ${count} memories, the most the ${plan} plan allows (max_memories ${limit}): ` +
        'delete memories it no longer needs, or move to a plan with more, then write again',
      Code.ResourceExhausted,
      REASONS.planLimit,
    );
  };
}
