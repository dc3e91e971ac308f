// Changing a run safely while several replicas and members act on it: every change is a
// compare-and-set on the run's `rev`, retried on a fresh read. A worker's change also names its
// lease: once the run was cancelled, finished or taken over by another replica, the change is
// refused (LeaseLost) and the worker stops. Claiming is the same compare-and-set, so exactly one
// replica wins a run at a time.
import { randomUUID } from 'node:crypto';
import type { SeedingContext } from './context.ts';
import { FINISHED, type SeedingRunDoc } from './records.ts';

export class LeaseLost extends Error {}

const ATTEMPTS = 20;

/**
 * Applies `change` to the current run and stores it (rev + 1). `change` returns false to leave
 * the run as it is. With `leaseId`, the run must still be held under it and not finished.
 */
export async function updateRun(
  ctx: SeedingContext,
  id: string,
  change: (run: SeedingRunDoc) => unknown,
  leaseId?: string,
): Promise<SeedingRunDoc | undefined> {
  for (let i = 0; i < ATTEMPTS; i++) {
    const run = await ctx.store.runs.get(id);
    if (!run) return undefined;
    if (leaseId !== undefined && (run.leaseId !== leaseId || FINISHED.has(run.status)))
      throw new LeaseLost(`lost the lease of ${run.runId}`);
    const before = run.rev;
    if (change(run) === false) return run;
    run.rev = before + 1;
    run.updatedAt = ctx.now();
    if (await ctx.store.runs.put(run, { expect: { rev: before } })) return run;
  }
  throw new Error(`seeding run ${id} kept changing: gave up after ${ATTEMPTS} attempts`);
}

/** Takes a due run for this replica: a new lease, or undefined when another replica won it. */
export async function claimRun(ctx: SeedingContext, run: SeedingRunDoc, holder: string): Promise<SeedingRunDoc | undefined> {
  const now = ctx.now();
  if (FINISHED.has(run.status) || run.dueAt === undefined || run.dueAt > now) return undefined;
  const claimed: SeedingRunDoc = {
    ...run,
    leaseId: randomUUID(),
    holder,
    attempt: run.attempt + 1,
    dueAt: now + ctx.config.leaseMs,
    rev: run.rev + 1,
    updatedAt: now,
  };
  return (await ctx.store.runs.put(claimed, { expect: { rev: run.rev } })) ? claimed : undefined;
}

/** Extends the lease; LeaseLost when the run is no longer this holder's. */
export function renewLease(ctx: SeedingContext, run: SeedingRunDoc): Promise<SeedingRunDoc | undefined> {
  return updateRun(
    ctx,
    run._id,
    (r) => {
      r.dueAt = ctx.now() + ctx.config.leaseMs;
    },
    run.leaseId,
  );
}
