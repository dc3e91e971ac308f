// The seeding worker, in every replica of the Brain: it looks for due runs (queued, with approved
// items, or held under a lease that expired because its holder died), claims one with a
// compare-and-set, extracts it, writes its items in source order and finishes it, renewing the
// lease between items. A run is worked by one replica at a time; a replica told to stop lets go
// of its run so another takes it at once.
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { SeedingContext } from './context.ts';
import { decide } from './control.ts';
import { SourceError } from './extract/index.ts';
import { extractRun } from './extract-run.ts';
import { claimRun, LeaseLost, renewLease, updateRun } from './lease.ts';
import { countItems, type SeedingRunDoc } from './records.ts';
import { PlanLimitReached, writeItems as writeBatch } from './write-item.ts';

const BATCH = 10;

export interface SeedingWorker {
  wake(): void;
  stop(): Promise<void>;
}

async function writeItems(ctx: SeedingContext, held: SeedingRunDoc, stopping: () => boolean): Promise<SeedingRunDoc | undefined> {
  let run = held;
  for (;;) {
    run = (await renewLease(ctx, run))!;
    const due = [
      ...(await ctx.store.items.find(
        { runKey: run._id, outcome: 'pending' },
        { sort: { field: 'index', direction: 'asc' }, limit: BATCH },
      )),
      ...(await ctx.store.items.find(
        { runKey: run._id, outcome: 'approved' },
        { sort: { field: 'index', direction: 'asc' }, limit: BATCH },
      )),
    ];
    if (due.length === 0) return run;
    await writeBatch(ctx, run, due, stopping);
    if (stopping()) return undefined;
  }
}

/** Lets go of the run: finished when nothing is open, waiting for review, or due again. Compare-and-set on what was counted. */
async function settle(ctx: SeedingContext, run: SeedingRunDoc): Promise<boolean> {
  const current = await ctx.store.runs.get(run._id);
  if (!current || current.leaseId !== run.leaseId) throw new LeaseLost(`lost the lease of ${run.runId}`);
  const counts = await countItems(ctx.store, run._id);
  if (counts.pending + counts.approved > 0) return false;
  const now = ctx.now();
  const waiting = counts.awaiting_review > 0;
  const next: SeedingRunDoc = { ...current, leaseId: '', holder: current.holder, dueAt: undefined, rev: current.rev + 1, updatedAt: now };
  if (waiting) next.status = 'awaiting_review';
  else Object.assign(next, { status: 'succeeded', finishedAt: now });
  // A review or cancel in between changed rev: look again.
  return ctx.store.runs.put(next, { expect: { rev: current.rev } });
}

async function fail(ctx: SeedingContext, run: SeedingRunDoc, stopReason: string, error: string) {
  await updateRun(
    ctx,
    run._id,
    (r) => void Object.assign(r, { status: 'failed', stopReason, error, leaseId: '', dueAt: undefined, finishedAt: ctx.now() }),
    run.leaseId,
  );
  const open = [
    ...(await ctx.store.items.find({ runKey: run._id, outcome: 'pending' })),
    ...(await ctx.store.items.find({ runKey: run._id, outcome: 'approved' })),
    ...(await ctx.store.items.find({ runKey: run._id, outcome: 'awaiting_review' })),
  ];
  await decide(ctx, run._id, open, 'skipped', `not written: ${error}`);
}

/** Works one claimed run until it is finished, waits for review, is lost, or the replica stops. */
async function work(ctx: SeedingContext, claimed: SeedingRunDoc, stopping: () => boolean): Promise<void> {
  let run = claimed;
  try {
    if (run.status === 'queued' || run.status === 'extracting') run = await extractRun(ctx, run);
    for (;;) {
      const written = await writeItems(ctx, run, stopping);
      if (!written) {
        await updateRun(ctx, run._id, (r) => void Object.assign(r, { leaseId: '', dueAt: ctx.now() }), run.leaseId);
        return;
      }
      if (await settle(ctx, written)) return;
      run = written;
    }
  } catch (err) {
    if (err instanceof LeaseLost) return;
    if (err instanceof SourceError) return fail(ctx, run, 'source', `the source cannot be read: ${err.message}`);
    if (err instanceof PlanLimitReached) return fail(ctx, run, 'plan-limit', `stopped at the plan's memory limit: ${err.message}`);
    throw err;
  }
}

export function startSeedingWorker(ctx: SeedingContext): SeedingWorker {
  const holder = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const logger = ctx.brain.logger.child({ component: 'seeding' });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;

  async function pass(): Promise<void> {
    const due = await ctx.store.runs.find({ dueAt: { $lte: ctx.now() } }, { sort: { field: 'dueAt', direction: 'asc' }, limit: 5 });
    for (const candidate of due) {
      if (stopped) return;
      const claimed = await claimRun(ctx, candidate, holder);
      if (!claimed) continue;
      logger.info({ runId: claimed.runId, organizationId: claimed.organizationId, attempt: claimed.attempt }, 'seeding run taken');
      await work(ctx, claimed, () => stopped);
    }
  }

  function tick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    running = pass()
      .catch((err) => logger.warn({ err }, 'seeding pass failed; retried at the next poll'))
      .finally(() => {
        running = undefined;
        if (stopped) return;
        if (again) {
          again = false;
          setImmediate(tick);
        } else timer = setTimeout(tick, ctx.config.pollMs);
      });
  }
  timer = setTimeout(tick, 0);

  return {
    wake: () => tick(),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
