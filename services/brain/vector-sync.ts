// Keeps every memory's vector consistent with its record, whatever fails in between.
//
// The records store and the vector store cannot commit together, so the record carries the
// obligation: every write of a memory (and every deletion's tombstone) sets `vectorDue` in the
// same record write, a little in the future. The writer then writes (or deletes) the vector
// itself. Nothing clears the field on that hot path, so a write costs no second record write;
// the reconciler below clears it once the vector is verified.
//
// The reconciler runs in every replica, at start and then continuously. Each pass reads the
// records whose `vectorDue` has passed, oldest first, and for each one:
// - a live memory whose vector holds the fingerprint of its text (`text` in the payload): the
//   common case, the writer's own vector landed. The marker is cleared, nothing else.
// - otherwise the replica claims the record before working on it: a compare-and-set on
//   (rev, vectorDue) that moves `vectorDue` a lease ahead. Exactly one of several replicas wins
//   a claim, and while the lease runs no other replica picks the record up. The winner embeds
//   and upserts the vector (or deletes it, for a tombstone), then clears the marker with a
//   compare-and-set on its claim. A replica that dies mid-item leaves the lease to expire and
//   another one takes over.
// - A write of the memory in between changes `rev`, so a claim or a clearing based on an older
//   version fails and the record stays due: a vector written from an older text is verified
//   again and replaced. None of these writes change `rev`, so they never make a writer's
//   compare-and-set fail.
// When the vector store fails, the record is postponed by RETRY_MS and the pass stops: the next
// passes retry until the store answers again, with no operator action.
import type { Logger } from '../common/log.ts';
import type { BrainContext } from './context.ts';
import { memoryPoint, memoryPointId, memoryText, vectorTextHash, type MemoryRecord } from './memory-record.ts';

/** How long the writer's own vector write has before the reconciler looks at the record. */
export const VECTOR_GRACE_MS = 5_000;
/** How long a claim keeps other replicas off a record (one embedding and one vector write). */
const LEASE_MS = 30_000;
/** Delay before a record whose vector write failed is tried again. */
const RETRY_MS = 2_000;
/** Records read per query; a pass continues while full pages come back. */
const BATCH = 64;
/** Pause between passes when the backlog is empty. */
const INTERVAL_MS = 1_000;

export interface ReconcileStats {
  /** Vectors found in place; the marker was cleared. */
  verified: number;
  /** Vectors embedded and written by this replica. */
  repaired: number;
  /** Vectors of deleted memories removed by this replica. */
  removed: number;
  /** Records another replica (or a new write) took first. */
  skipped: number;
  /** Records whose vector could not be written; tried again later. */
  failed: number;
}

type Outcome = 'verified' | 'repaired' | 'removed' | 'skipped';

/** Without `vectorDue`, and with `vectorDue` compared to `due` when clearing. */
function cleared(record: MemoryRecord): MemoryRecord {
  const { vectorDue: _due, ...rest } = record;
  return rest as MemoryRecord;
}

/** Compare-and-set on the version this replica read and the marker it saw. */
function sameAs(record: MemoryRecord) {
  return { expect: { rev: record.rev, vectorDue: record.vectorDue ?? null } };
}

async function claim(ctx: BrainContext, record: MemoryRecord, until: number): Promise<MemoryRecord | undefined> {
  const claimed = { ...record, vectorDue: until };
  return (await ctx.memories.put(claimed, sameAs(record))) ? claimed : undefined;
}

/** Whether the organization's vector of this memory was made from its current text. */
export async function hasCurrentVector(ctx: BrainContext, record: MemoryRecord): Promise<boolean> {
  const [stored] = await ctx.stores.vectors.retrieve(record.organizationId, [memoryPointId(record.namespace, record.key)]);
  return stored !== undefined && stored.payload.text === vectorTextHash(record);
}

/** Embeds the memory's text and writes its vector. */
export async function writeVector(ctx: BrainContext, record: MemoryRecord, vector?: Float32Array): Promise<void> {
  const [embedded] = vector ? [vector] : await ctx.stores.embedder.embed([memoryText(record)]);
  await ctx.stores.vectors.upsert([memoryPoint(record, embedded!)]);
}

async function reconcileRecord(ctx: BrainContext, record: MemoryRecord): Promise<Outcome> {
  if (!record.deleted && (await hasCurrentVector(ctx, record))) {
    return (await ctx.memories.put(cleared(record), sameAs(record))) ? 'verified' : 'skipped';
  }
  const claimed = await claim(ctx, record, ctx.now() + LEASE_MS);
  if (!claimed) return 'skipped';
  try {
    if (claimed.deleted) await ctx.stores.vectors.delete(claimed.organizationId, [memoryPointId(claimed.namespace, claimed.key)]);
    else await writeVector(ctx, claimed);
  } catch (error) {
    // Shorten the lease to the retry delay; a failure here only means waiting for the lease.
    await ctx.memories.put({ ...claimed, vectorDue: ctx.now() + RETRY_MS }, sameAs(claimed)).catch(() => false);
    throw error;
  }
  await ctx.memories.put(cleared(claimed), sameAs(claimed));
  return claimed.deleted ? 'removed' : 'repaired';
}

/**
 * One pass over the records whose vectors are due. Stops at the first vector-store failure
 * (counted in `failed`), since the next records would fail the same way.
 */
export async function reconcileVectors(ctx: BrainContext): Promise<ReconcileStats> {
  const stats: ReconcileStats = { verified: 0, repaired: 0, removed: 0, skipped: 0, failed: 0 };
  for (;;) {
    const due = await ctx.memories.find(
      { vectorDue: { $lte: ctx.now() } },
      { sort: { field: 'vectorDue', direction: 'asc' }, limit: BATCH },
    );
    let skipped = 0;
    for (const record of due) {
      try {
        const outcome = await reconcileRecord(ctx, record);
        stats[outcome] += 1;
        if (outcome === 'skipped') skipped += 1;
      } catch (error) {
        stats.failed += 1;
        ctx.logger.warn({ err: error, memory: record._id }, 'vector sync: the vector store failed; retrying');
        return stats;
      }
    }
    // A page of records that other replicas all took would come back again: stop there too.
    if (due.length < BATCH || skipped === due.length) return stats;
  }
}

export interface VectorSync {
  /** Stops after the pass in progress. */
  stop(): Promise<void>;
}

function logPass(logger: Logger, stats: ReconcileStats): void {
  if (stats.repaired || stats.removed) {
    // The figure operators watch: vectors this replica had to write after the fact.
    logger.info({ vectorSync: stats }, `vector sync: ${stats.repaired} vectors written, ${stats.removed} removed`);
  }
}

/** Runs passes at start and then every INTERVAL_MS until stopped. */
export function startVectorSync(ctx: BrainContext, intervalMs = INTERVAL_MS): VectorSync {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = async () => {
    try {
      logPass(ctx.logger, await reconcileVectors(ctx));
    } catch (error) {
      // The records store failed (or closed under us): the next pass tries again.
      if (!stopped) ctx.logger.warn({ err: error }, 'vector sync: the records store failed; retrying');
    }
    if (!stopped) {
      timer = setTimeout(() => (running = pass()), intervalMs);
      timer.unref();
    }
  };
  running = pass();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
