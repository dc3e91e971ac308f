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
// A page's missing vectors are embedded in one call and written in one upsert. When the vector
// store (or the embedder) fails, the page's claimed records are postponed by RETRY_MS and the pass
// stops: the next passes retry until the store answers again, with no operator action.
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
  /** Records whose vector could not be written (or embedded); tried again later. */
  failed: number;
}

/** The record with its marker cleared. */
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
  return (await withCurrentVectors(ctx, [record])).has(record._id);
}

/** Embeds the memory's text and writes its vector. */
export async function writeVector(ctx: BrainContext, record: MemoryRecord, vector?: Float32Array): Promise<void> {
  const [embedded] = vector ? [vector] : await ctx.stores.embedder.embed([memoryText(record)]);
  await ctx.stores.vectors.upsert([memoryPoint(record, embedded!)]);
}

/** The ids of the records whose vector was made from their current text: one lookup per organization. */
async function withCurrentVectors(ctx: BrainContext, records: MemoryRecord[]): Promise<Set<string>> {
  const current = new Set<string>();
  for (const [organizationId, group] of Map.groupBy(records, (r) => r.organizationId)) {
    const ids = group.map((r) => memoryPointId(r.namespace, r.key));
    const stored = new Map((await ctx.stores.vectors.retrieve(organizationId, ids)).map((p) => [p.id, p.payload.text]));
    for (const r of group) if (stored.get(memoryPointId(r.namespace, r.key)) === vectorTextHash(r)) current.add(r._id);
  }
  return current;
}

/** Writes the vectors of the claimed live records (one embedding call) and removes the deleted ones'. */
async function work(ctx: BrainContext, claimed: MemoryRecord[]): Promise<void> {
  for (const [organizationId, group] of Map.groupBy(
    claimed.filter((r) => r.deleted),
    (r) => r.organizationId,
  )) {
    await ctx.stores.vectors.delete(
      organizationId,
      group.map((r) => memoryPointId(r.namespace, r.key)),
    );
  }
  const live = claimed.filter((r) => !r.deleted);
  if (live.length === 0) return;
  const vectors = await ctx.stores.embedder.embed(live.map(memoryText));
  await ctx.stores.vectors.upsert(live.map((r, i) => memoryPoint(r, vectors[i]!)));
}

/** Verifies, claims and works one page of due records; returns how many others took first. */
async function reconcilePage(ctx: BrainContext, due: MemoryRecord[], stats: ReconcileStats): Promise<number> {
  const current = await withCurrentVectors(
    ctx,
    due.filter((r) => !r.deleted),
  );
  const claimed: MemoryRecord[] = [];
  let skipped = 0;
  for (const record of due) {
    if (current.has(record._id)) {
      if (await ctx.memories.put(cleared(record), sameAs(record))) stats.verified += 1;
      else skipped += 1;
      continue;
    }
    const mine = await claim(ctx, record, ctx.now() + LEASE_MS);
    if (mine) claimed.push(mine);
    else skipped += 1;
  }
  try {
    await work(ctx, claimed);
  } catch (error) {
    // Shorten the leases to the retry delay; a failure here only means waiting for the lease.
    for (const c of claimed) await ctx.memories.put({ ...c, vectorDue: ctx.now() + RETRY_MS }, sameAs(c)).catch(() => false);
    stats.failed += claimed.length;
    throw error;
  }
  for (const c of claimed) {
    await ctx.memories.put(cleared(c), sameAs(c));
    stats[c.deleted ? 'removed' : 'repaired'] += 1;
  }
  stats.skipped += skipped;
  return skipped;
}

/**
 * One pass over the records whose vectors are due, a page at a time. Stops at the first
 * vector-store or embedder failure (the page's claimed records count as `failed`), since the
 * next records would fail the same way.
 */
export async function reconcileVectors(ctx: BrainContext): Promise<ReconcileStats> {
  const stats: ReconcileStats = { verified: 0, repaired: 0, removed: 0, skipped: 0, failed: 0 };
  for (;;) {
    const due = await ctx.memories.find(
      { vectorDue: { $lte: ctx.now() } },
      { sort: { field: 'vectorDue', direction: 'asc' }, limit: BATCH },
    );
    let skipped: number;
    try {
      skipped = await reconcilePage(ctx, due, stats);
    } catch (error) {
      ctx.logger.warn({ err: error, failed: stats.failed }, 'vector sync: the vector store failed; retrying');
      return stats;
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

export interface VectorSyncOptions {
  intervalMs?: number;
  /** Called with each pass's figures (the Brain's metrics count them). */
  onPass?: (stats: ReconcileStats) => void;
}

/** Runs passes at start and then every INTERVAL_MS until stopped. */
export function startVectorSync(ctx: BrainContext, options: VectorSyncOptions = {}): VectorSync {
  const intervalMs = options.intervalMs ?? INTERVAL_MS;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = async () => {
    try {
      const stats = await reconcileVectors(ctx);
      logPass(ctx.logger, stats);
      options.onPass?.(stats);
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
