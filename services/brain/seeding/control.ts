// A member's say over a run: cancel it, or (review mode) approve or reject the items it
// extracted. Items keep what they were; approved ones are written by whichever replica works
// the run, which is woken at once.
import { create } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import {
  CancelSeedingRunResponseSchema,
  ReviewSeedingItemsResponseSchema,
  type CancelSeedingRunRequest,
  type ReviewSeedingItemsRequest,
} from '../../../gen/mindgate/brain/v1/seeding_pb.js';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireText } from '../../common/rpc/validate.ts';
import type { SeedingContext } from './context.ts';
import { updateRun } from './lease.ts';
import { FINISHED, itemId, OPEN_OUTCOMES, type OutcomeName, type SeedingItemDoc, type SeedingRunDoc } from './records.ts';
import { requireRun, runWithProgress } from './read.ts';

const finished = (run: SeedingRunDoc) =>
  failure(`seeding run ${run.runId} has already finished (${run.status})`, Code.FailedPrecondition, REASONS.runFinished);

/** Gives `items` their outcome, each with the next number of the run's sequence; returns how many changed. */
export async function decide(
  ctx: SeedingContext,
  key: string,
  items: SeedingItemDoc[],
  outcome: OutcomeName,
  reason: string,
): Promise<number> {
  if (items.length === 0) return 0;
  const { seq: last } = await ctx.store.sequences.increment(key, 'seq', items.length, {});
  let changed = 0;
  for (const [i, item] of items.entries()) {
    const next = { ...item, outcome, reason, seq: last - items.length + 1 + i };
    if (await ctx.store.items.put(next, { expect: { outcome: item.outcome } })) changed++;
  }
  return changed;
}

/** Every item of the run still open (pending, waiting or approved), in source order. */
async function openItems(ctx: SeedingContext, key: string, outcomes: OutcomeName[] = OPEN_OUTCOMES): Promise<SeedingItemDoc[]> {
  const out: SeedingItemDoc[] = [];
  for (const outcome of outcomes)
    out.push(...(await ctx.store.items.find({ runKey: key, outcome }, { sort: { field: 'index', direction: 'asc' } })));
  return out.sort((a, b) => a.index - b.index);
}

export async function cancelSeedingRun(ctx: SeedingContext, req: CancelSeedingRunRequest) {
  const doc = await requireRun(ctx, req.organizationId, req.runId);
  const reason = requireText('reason', req.reason, 1_000);
  let already: SeedingRunDoc | undefined;
  const run = await updateRun(ctx, doc._id, (r) => {
    if (FINISHED.has(r.status)) {
      already = r;
      return false;
    }
    r.status = 'cancelled';
    r.stopReason = 'cancelled';
    r.error = reason || 'cancelled';
    r.leaseId = '';
    r.dueAt = undefined;
    r.finishedAt = ctx.now();
  });
  if (already) throw finished(already);
  await decide(ctx, doc._id, await openItems(ctx, doc._id), 'skipped', 'the run was cancelled');
  return create(CancelSeedingRunResponseSchema, { run: await runWithProgress(ctx, run!) });
}

export async function reviewSeedingItems(ctx: SeedingContext, req: ReviewSeedingItemsRequest) {
  const doc = await requireRun(ctx, req.organizationId, req.runId);
  if (!doc.review) invalid('run_id', 'this run writes without review: there is nothing to approve');
  if (FINISHED.has(doc.status)) throw finished(doc);
  const reason = requireText('reason', req.reason, 1_000);
  if (req.all === req.indexes.length > 0) invalid('indexes', 'name the items, or set all (not both)');
  if (req.indexes.length > 100) invalid('indexes', `must have at most 100 items, got ${req.indexes.length}`);
  let waiting: SeedingItemDoc[];
  if (req.all) waiting = await openItems(ctx, doc._id, ['awaiting_review']);
  else {
    const found = await ctx.store.items.getMany([...new Set(req.indexes)].map((i) => itemId(doc._id, i)));
    waiting = found.filter((i) => i.outcome === 'awaiting_review');
  }
  const decided = await decide(
    ctx,
    doc._id,
    waiting,
    req.approve ? 'approved' : 'rejected',
    req.approve ? '' : reason || 'rejected in review',
  );
  // Approved items are work: the run is due now, unless a replica holds it (it looks again before letting go).
  const run = await updateRun(ctx, doc._id, (r) => {
    if (FINISHED.has(r.status)) return false;
    if (r.leaseId === '' || (r.dueAt ?? 0) <= ctx.now()) r.dueAt = ctx.now();
  });
  ctx.wake();
  return create(ReviewSeedingItemsResponseSchema, { run: await runWithProgress(ctx, run!), decided });
}
