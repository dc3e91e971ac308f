// What every enforcer of a plan (the Agents API's rate limits, the brain's memory limit, the
// agents service's member limit) reads the plan in force through: the billing service's answer,
// remembered for at most ENTITLEMENTS_CACHE_MS (2 s) per process. A change of plan therefore takes
// effect on every replica within two seconds, while a burst of requests of one organization asks
// billing about once per two seconds. When billing does not answer, the last answer known is used,
// however old; with none, the call fails and the caller decides (the rate limiter counts Starter).
import type { Client } from '@connectrpc/connect';
import type { BillingService, GetEntitlementsResponse } from '../../gen/mindgate/billing/v1/billing_pb.js';

export const ENTITLEMENTS_CACHE_MS = 2_000;
const MAX_ENTRIES = 10_000;

export interface EntitlementsCache {
  get(organizationId: string): Promise<GetEntitlementsResponse>;
}

export interface EntitlementsCacheOptions {
  billing: () => Client<typeof BillingService>;
  now: () => number;
  ttlMs?: number;
}

export function createEntitlementsCache(options: EntitlementsCacheOptions): EntitlementsCache {
  const ttl = options.ttlMs ?? ENTITLEMENTS_CACHE_MS;
  const known = new Map<string, { value: GetEntitlementsResponse; until: number }>();
  const pending = new Map<string, Promise<GetEntitlementsResponse>>();

  async function ask(organizationId: string): Promise<GetEntitlementsResponse> {
    try {
      const value = await options.billing().getEntitlements({ organizationId });
      if (known.size >= MAX_ENTRIES && !known.has(organizationId)) known.delete(known.keys().next().value!);
      known.set(organizationId, { value, until: options.now() + ttl });
      return value;
    } catch (err) {
      const stale = known.get(organizationId);
      if (stale) return stale.value;
      throw err;
    } finally {
      pending.delete(organizationId);
    }
  }

  return {
    get(organizationId) {
      const cached = known.get(organizationId);
      if (cached && cached.until > options.now()) return Promise.resolve(cached.value);
      // Concurrent requests of one organization share one call.
      let call = pending.get(organizationId);
      if (!call) pending.set(organizationId, (call = ask(organizationId)));
      return call;
    },
  };
}
