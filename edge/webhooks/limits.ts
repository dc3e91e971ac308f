// Each organization's monthly webhook events, from its plan (billing's entitlements), remembered a
// minute per replica like the API's rate limits. Billing not answering is not a reason to drop
// anyone's events: the relay then leaves them in the outbox and tries again.
import type { AppContext } from '../context.ts';

const CACHE_MS = 60_000;
const CACHE_SIZE = 10_000;

export type MonthlyLimits = (organizationIds: string[]) => Promise<Record<string, bigint>>;

export function createMonthlyLimits(ctx: AppContext): MonthlyLimits {
  const cache = new Map<string, { limit: bigint; until: number }>();
  async function limitOf(organizationId: string): Promise<bigint> {
    const cached = cache.get(organizationId);
    if (cached && cached.until > ctx.now()) return cached.limit;
    const res = await ctx.clients.billing.getEntitlements({ organizationId });
    const limit = res.entitlements?.webhookEventsPerMonth ?? 0n;
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(organizationId, { limit, until: ctx.now() + CACHE_MS });
    return limit;
  }
  return async (organizationIds) => {
    const limits: Record<string, bigint> = {};
    for (const id of new Set(organizationIds)) limits[id] = await limitOf(id);
    return limits;
  };
}
