// Plans and the subscription through the Agents API: the catalogue listed in the caller's currency
// (query, billing country, the organization's currency, the trusted country header, else USD), the
// subscription of a new organization (the Professional trial) with its ETag, and the changes a
// subscription without payment cannot take (409 subscription-state), a stale If-Match (412), and a
// move to Starter that ends the trial at once, with the entitlements following.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
const call = restClient(() => api);
const sub = () => `/organizations/${owner.organizationId}/subscription`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ BILLING_COUNTRY_HEADER: 'CF-IPCountry' });
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('plans', () => {
  it('lists Starter and Professional in USD for a caller whose country is not known', async () => {
    const r = await call('/billing/plans', { token: owner.access_token });
    expect(r.status).toBe(200);
    expect(r.json.currency).toBe('USD');
    expect(r.json.next_page_token).toBeNull();
    expect(r.json.plans.map((p: { key: string }) => p.key)).toEqual(['starter', 'professional']);
    const pro = r.json.plans[1];
    expect(pro).toMatchObject({
      name: 'Professional',
      trial_days: 14,
      prices: { month: { currency: 'USD', unit_amount: 5900 }, year: { currency: 'USD', unit_amount: 59000 } },
    });
    expect(pro.entitlements).toEqual({
      entity_graph: true,
      webhook_events_per_month: 100000,
      max_memories: 2000000,
      max_members: null,
      api_requests_per_minute: 3000,
      runs_per_month: 10000,
    });
    expect(r.json.plans[0].entitlements).toMatchObject({ entity_graph: false, max_members: 10, max_memories: 100000 });
  });

  it('prices in EUR for a request from Germany (the trusted country header), a French billing country, or when asked', async () => {
    const fromGermany = await call('/billing/plans', { token: owner.access_token, headers: { 'cf-ipcountry': 'DE' } });
    expect(fromGermany.json.currency).toBe('EUR');
    expect(fromGermany.json.plans[1].prices.month).toEqual({ currency: 'EUR', unit_amount: 4900 });
    expect((await call('/billing/plans', { token: owner.access_token, headers: { 'cf-ipcountry': 'US' } })).json.currency).toBe('USD');
    expect((await call('/billing/plans?country=fr', { token: owner.access_token })).json.currency).toBe('EUR');
    expect(
      (await call('/billing/plans?currency=EUR', { token: owner.access_token, headers: { 'cf-ipcountry': 'US' } })).json.currency,
    ).toBe('EUR');
  });

  it('answers 422 for a currency or country it does not know', async () => {
    const r = await call('/billing/plans?currency=GBP', { token: owner.access_token });
    expect(r.status).toBe(422);
    expect(r.json.errors[0].loc).toEqual(['query', 'currency']);
    const zz = await call('/billing/plans?country=ZZ', { token: owner.access_token });
    expect(zz.status).toBe(422);
    expect(zz.json.errors[0].loc).toEqual(['query', 'country']);
    expect((await call('/billing/plans')).status).toBe(401);
  });
});

describe('the subscription', () => {
  it('shows a new organization on the 14-day Professional trial, with an ETag', async () => {
    const r = await call(sub(), { token: owner.access_token });
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).toMatch(/^"\d+"$/);
    expect(r.json).toMatchObject({
      organization_id: owner.organizationId,
      plan: 'professional',
      plan_name: 'Professional',
      status: 'trialing',
      interval: null,
      provider: null,
      cancel_at_period_end: false,
      payment_method_on_file: false,
      entitlements: { entity_graph: true },
    });
    const days = (Date.parse(r.json.trial_end) - Date.now()) / 86_400_000;
    expect(Math.round(days)).toBe(14);
    expect(r.json.current_period_end).toBe(r.json.trial_end);
  });

  it('refuses what needs a paid subscription: Professional without a checkout, cancel, resume', async () => {
    const change = await call(sub(), { method: 'PATCH', token: owner.access_token, body: { plan: 'professional', interval: 'month' } });
    expect(change.status).toBe(409);
    expect(change.json.type).toBe('tag:mindgate.dev,2026:problem/subscription-state');
    expect(change.json.detail).toContain('checkouts');
    for (const action of ['cancel', 'resume']) {
      const r = await call(`${sub()}/${action}`, { method: 'POST', token: owner.access_token });
      expect(r.status, action).toBe(409);
      expect(r.json.type).toBe('tag:mindgate.dev,2026:problem/subscription-state');
    }
    const missing = await call(sub(), { method: 'PATCH', token: owner.access_token, body: { plan: 'professional' } });
    expect(missing.status).toBe(422);
    expect(missing.json.errors[0].loc).toEqual(['body', 'interval']);
    const bad = await call(sub(), { method: 'PATCH', token: owner.access_token, body: { plan: 'enterprise' } });
    expect(bad.status).toBe(422);
    expect(bad.json.errors[0].loc).toEqual(['body', 'plan']);
  });

  it('moves to Starter under If-Match, ending the trial at once, and refuses a stale ETag', async () => {
    const before = await call(sub(), { token: owner.access_token });
    const etag = before.headers.get('etag')!;
    const r = await call(sub(), { method: 'PATCH', token: owner.access_token, body: { plan: 'starter' }, headers: { 'if-match': etag } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      plan: 'starter',
      status: 'active',
      trial_end: null,
      entitlements: { entity_graph: false, max_members: 10 },
    });
    expect(r.headers.get('etag')).not.toBe(etag);
    const stale = await call(sub(), {
      method: 'PATCH',
      token: owner.access_token,
      body: { plan: 'starter' },
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(412);
    expect(stale.json.type).toBe('tag:mindgate.dev,2026:problem/etag-mismatch');
    const usage = await call(`/organizations/${owner.organizationId}/usage`, { token: owner.access_token });
    expect(usage.json.plan).toBe('starter');
  });

  it('records each change in the audit log', async () => {
    const r = await call(`/organizations/${owner.organizationId}/audit-events?action=changeSubscription`, { token: owner.access_token });
    expect(r.json.events.map((e: { outcome: string }) => e.outcome)).toEqual(expect.arrayContaining(['success', 'failed']));
  });
});

describe('checkouts through the API', () => {
  it('replays a checkout created with the same Idempotency-Key, and offers no trial after one was used', async () => {
    const send = () =>
      call(`/organizations/${owner.organizationId}/checkouts`, {
        token: owner.access_token,
        headers: { 'idempotency-key': 'checkout-1', 'cf-ipcountry': 'CH' },
        body: { plan: 'professional', interval: 'year' },
      });
    const first = await send();
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ currency: 'EUR', entity: 'eu', country: 'CH', unit_amount: 49000, trial_days: 0, trial_end: null });
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.id).toBe(first.json.id);
    const other = await obtainAccessToken(platform, { resource: api });
    const foreign = await call(`/organizations/${other.organizationId}/checkouts/${first.json.id}`, { token: other.access_token });
    expect(foreign.status).toBe(404);
  });
});
