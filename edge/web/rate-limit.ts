// The Web API's rate-limit policies (SERVICE-SPEC §8) and how a request is counted: per client
// IP (per /64 for IPv6) and per policy, in the shared records store.
import type { AppContext } from '../context.ts';
import { createClientIpResolver, rateLimitKey, type ClientIpResolver } from '../http/client-ip.ts';
import { createRateLimiter, enforceRateLimit, type RateLimitPolicy, type RateLimiter } from '../http/rate-limit.ts';
import type { RouteContext } from '../http/router.ts';

export const WEB_POLICIES = {
  'public-read': { name: 'public-read', quota: 60, windowSeconds: 60 },
  'blog-search': { name: 'blog-search', quota: 30, windowSeconds: 60 },
  // The quota is BRAIN_PASS_RATE_LIMIT's (webPolicies); this is its default.
  'brain-pass': { name: 'brain-pass', quota: 10, windowSeconds: 60 },
} as const satisfies Record<string, RateLimitPolicy>;

export type WebPolicyName = keyof typeof WEB_POLICIES;

/** The policies with their configured quotas. */
export function webPolicies(ctx: AppContext): Record<WebPolicyName, RateLimitPolicy> {
  return { ...WEB_POLICIES, 'brain-pass': { ...WEB_POLICIES['brain-pass'], quota: ctx.config.billingEdge.passRateLimit } };
}

export interface WebRateLimits {
  clientIp: ClientIpResolver;
  limiter: RateLimiter;
  /** Counts the request under `policy`; answers 429 and returns false when it is over. */
  check(ctx: RouteContext, policy: WebPolicyName): Promise<boolean>;
}

export function createWebRateLimits(ctx: AppContext): WebRateLimits {
  const clientIp = createClientIpResolver(ctx.config.web.trustedProxies);
  const limiter = createRateLimiter({
    records: ctx.stores.records,
    now: () => ctx.now(),
    logger: ctx.logger.child({ component: 'web-rate-limit' }),
    collection: 'web_rate_limits',
  });
  const policies = webPolicies(ctx);
  return {
    clientIp,
    limiter,
    async check(route, policy) {
      const decision = await limiter.consume(policies[policy], rateLimitKey(clientIp(route.req)));
      return enforceRateLimit(route.res, decision, route.path);
    },
  };
}
