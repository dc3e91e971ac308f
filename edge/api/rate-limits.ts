// Per-plan rate limits of the Agents API (SERVICE-SPEC §8: "Agents API limits depend on the plan
// and are enforced per organization"): one fixed window a minute per organization, its quota the
// plan in force's `api_requests_per_minute` entitlement (or API_RATE_LIMIT_STARTER,
// API_RATE_LIMIT_PROFESSIONAL when set), counted in the records store so every replica shares it
// (edge/http/rate-limit.ts). The plan is read through the entitlements cache
// (services/billing/entitlements-cache.ts), so a change of plan applies within two seconds on every
// replica; when billing does not answer and nothing is known, the organization counts as Starter.
// Each call is also counted for the month's usage (usage.ts).
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import type { EntitlementsCache } from '../../services/billing/entitlements-cache.ts';
import type { AppContext } from '../context.ts';
import type { AnyApiRouteContext } from '../http/api-route.ts';
import type { ApiCallCounter } from './usage.ts';
import { createRateLimiter, enforceRateLimit, type RateLimitPolicy } from '../http/rate-limit.ts';

/** Starter's quota when billing cannot say which plan an organization is on. */
const FALLBACK_QUOTA = 600;

/** Counts the request against its organization's plan; false once it has answered 429. */
export type RateLimitCheck = (c: AnyApiRouteContext, organizationId: string) => Promise<boolean>;

export function createApiRateLimits(ctx: AppContext, calls: ApiCallCounter, entitlements: EntitlementsCache): RateLimitCheck {
  const overrides = ctx.config.api.rateLimits;
  const limiter = createRateLimiter({
    records: ctx.stores.records,
    now: () => ctx.now(),
    logger: ctx.logger.child({ component: 'api-rate-limit' }),
    collection: 'api_rate_limits',
  });

  async function policyOf(organizationId: string): Promise<RateLimitPolicy> {
    try {
      const res = await entitlements.get(organizationId);
      const plan = res.effectivePlan === Plan.PROFESSIONAL ? 'professional' : 'starter';
      const quota = overrides[plan] ?? Number(res.entitlements?.apiRequestsPerMinute ?? BigInt(FALLBACK_QUOTA));
      return { name: `api-${plan}`, quota, windowSeconds: 60 };
    } catch (err) {
      ctx.logger.warn({ err, organizationId }, 'plan unknown (billing did not answer): counting as Starter');
      return { name: 'api-starter', quota: overrides.starter ?? FALLBACK_QUOTA, windowSeconds: 60 };
    }
  }

  return async (c, organizationId) => {
    calls.count(organizationId);
    const decision = await limiter.consume(await policyOf(organizationId), organizationId);
    return enforceRateLimit(c.res, decision, c.path);
  };
}
