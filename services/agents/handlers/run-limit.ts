// The plan's `runs_per_month`, enforced where a run is queued (a new run or a retry): refused with
// RESOURCE_EXHAUSTED, reason plan-limit, naming the plan and the limit, once the organization has
// queued that many runs this calendar month (UTC). Runs are counted from the runs themselves (the
// index on organization and creation time), so every replica sees the same count. The plan is read
// through the entitlements cache (services/billing); when billing cannot answer, the run is queued
// (logged), as people may join when the member limit cannot be read.
import { Code } from '@connectrpc/connect';
import { createEntitlementsCache, type EntitlementsCache } from '../../billing/entitlements-cache.ts';
import type { Logger } from '../../common/log.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import type { RecordCollection } from '../../common/storage/records/interface.ts';
import type { ServiceDeps } from '../../modules.ts';
import type { RunRecord, RunsContext } from './runs.ts';

/** Resolves when the organization may queue one more run this month. */
export type RunLimit = (organizationId: string) => Promise<void>;

/** The first instant of the calendar month (UTC) that holds `at`. */
export function monthStart(at: number): number {
  const d = new Date(at);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** Runs the organization queued this calendar month (UTC): what runs_per_month counts. */
export function countRunsThisMonth(runs: RecordCollection<RunRecord>, organizationId: string, now: number): Promise<number> {
  return runs.count({ organizationId, createdAt: { $gte: monthStart(now) } });
}

export function createRunLimit(deps: {
  runs: RecordCollection<RunRecord>;
  entitlements: EntitlementsCache;
  logger: Logger;
  now: () => number;
}): RunLimit {
  return async (organizationId) => {
    let limit: number;
    let plan: string;
    try {
      const res = await deps.entitlements.get(organizationId);
      limit = Number(res.entitlements?.runsPerMonth ?? 0n);
      plan = res.planName || 'current';
    } catch (err) {
      deps.logger.warn({ err, organizationId }, 'plan unknown (billing did not answer): run queued without checking runs_per_month');
      return;
    }
    if (limit <= 0) return;
    const used = await countRunsThisMonth(deps.runs, organizationId, deps.now());
    if (used < limit) return;
    throw failure(
      `the ${plan} plan allows ${limit} runs a month and the organization has queued ${used} this month (UTC): ` +
        'wait for the next month or move to a plan with more',
      Code.ResourceExhausted,
      REASONS.planLimit,
    );
  };
}

/** The runs' context with the plan's run limit, when the module has billing to ask. */
export function withRunLimit(ctx: RunsContext, deps: Pick<ServiceDeps, 'now' | 'billing'> | undefined, logger: Logger): RunsContext {
  if (!deps) return ctx;
  const entitlements = createEntitlementsCache(deps);
  return { ...ctx, runLimit: createRunLimit({ runs: ctx.runs, entitlements, logger: logger.child({ service: 'agents' }), now: ctx.now }) };
}
