// Per-plan rate limits of the Agents API (SERVICE-SPEC §8: "Agents API limits depend on the plan
// and are enforced per organization"): one fixed window a minute per organization, its quota
// the plan in force's (API_RATE_LIMIT_STARTER, API_RATE_LIMIT_PROFESSIONAL), counted in the
// records store so every replica shares it (edge/http/rate-limit.ts). The plan is asked of the
// billing service and remembered for a minute per replica; when billing does not answer, the
// organization is counted as Starter. Each call is also counted for the month's usage (usage.ts).
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import type { AppContext } from '../context.ts';
import type { AnyApiRouteContext } from '../http/api-route.ts';
import type { ApiCallCounter } from './usage.ts';
import { createRateLimiter, enforceRateLimit, type RateLimitPolicy } from '../http/rate-limit.ts';

const PLAN_CACHE_MS = 60_000;
const PLAN_CACHE_SIZE = 10_000;

/** Counts the request against its organization's plan; false once it has answered 429. */
export type RateLimitCheck = (c: AnyApiRouteContext, organizationId: string) => Promise<boolean>;

export function apiPolicies(ctx: AppContext): Record<'starter' | 'professional', RateLimitPolicy> {
  const { starter, professional } = ctx.config.api.rateLimits;
  return {
    starter: { name: 'api-starter', quota: starter, windowSeconds: 60 },
    professional: { name: 'api-professional', quota: professional, windowSeconds: 60 },
  };
}

export function createApiRateLimits(ctx: AppContext, calls: ApiCallCounter): RateLimitCheck {
  const policies = apiPolicies(ctx);
  const limiter = createRateLimiter({
    records: ctx.stores.records,
    now: () => ctx.now(),
    logger: ctx.logger.child({ component: 'api-rate-limit' }),
    collection: 'api_rate_limits',
  });
  const plans = new Map<string, { plan: 'starter' | 'professional'; until: number }>();

  async function planOf(organizationId: string): Promise<'starter' | 'professional'> {
    const now = ctx.now();
    const cached = plans.get(organizationId);
    if (cached && cached.until > now) return cached.plan;
    let plan: 'starter' | 'professional' = 'starter';
    try {
      const res = await ctx.clients.billing.getEntitlements({ organizationId });
      if (res.effectivePlan === Plan.PROFESSIONAL) plan = 'professional';
    } catch (err) {
      ctx.logger.warn({ err, organizationId }, 'plan unknown (billing did not answer): counting as Starter');
      return cached?.plan ?? plan;
    }
    if (plans.size >= PLAN_CACHE_SIZE) plans.clear();
    plans.set(organizationId, { plan, until: now + PLAN_CACHE_MS });
    return plan;
  }

  return async (c, organizationId) => {
    calls.count(organizationId);
    const decision = await limiter.consume(policies[await planOf(organizationId)], organizationId);
    return enforceRateLimit(c.res, decision, c.path);
  };
}
