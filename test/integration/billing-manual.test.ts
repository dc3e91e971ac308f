// The manual provider end to end, on a platform whose clock the test moves: a new organization on
// its trial checks out Professional from a German address on the platform's own checkout page
// (EUR, the European entity, the trial carried over), the trial ends into the paid plan with its
// first invoice, which an operator marks paid; a change to yearly is prorated; a cancellation ends
// the plan at the period's end. Another organization's trial ends without payment and falls back to
// Starter at once, with its entitlements. Reads after the clock moved use API keys (access tokens
// would have expired with the jump).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BillingInterval, Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { browse, CookieJar, obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';

const DAY = 86_400_000;
let offset = 0;
const now = () => Date.now() + offset;
let platform: TestPlatform;
let api: string;
let web: string;
let owner: ObtainedToken;
let lapsed: ObtainedToken;
const keys = new Map<string, string>();
const call = restClient(() => api);

async function adminKey(t: ObtainedToken): Promise<string> {
  const r = await call(`/organizations/${t.organizationId}/api-keys`, {
    token: t.access_token,
    body: { name: 'billing', scopes: ['admin'] },
  });
  expect(r.status).toBe(201);
  return r.json.secret;
}

beforeAll(async () => {
  platform = await startOAuthTestPlatform({}, { now });
  api = platform.ctx.config.publicUrls.api;
  web = platform.ctx.config.publicUrls.web;
  owner = await obtainAccessToken(platform, { resource: api });
  lapsed = await obtainAccessToken(platform, { resource: api });
  keys.set(owner.organizationId, await adminKey(owner));
  keys.set(lapsed.organizationId, await adminKey(lapsed));
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

const read = (t: ObtainedToken, path: string) => call(`/organizations/${t.organizationId}${path}`, { apiKey: keys.get(t.organizationId) });

describe('checkout with the manual provider', () => {
  let checkout: Record<string, any>;

  it('opens the platform’s own checkout page in EUR for a German billing address, with the rest of the trial', async () => {
    const r = await call(`/organizations/${owner.organizationId}/checkouts`, {
      token: owner.access_token,
      body: { plan: 'professional', interval: 'month', billing_address: { country: 'DE' } },
    });
    expect(r.status).toBe(201);
    checkout = r.json;
    expect(checkout).toMatchObject({
      plan: 'professional',
      interval: 'month',
      status: 'open',
      provider: 'manual',
      currency: 'EUR',
      entity: 'eu',
      entity_name: 'Mindgate Europe B.V.',
      country: 'DE',
      unit_amount: 4900,
      trial_days: 14,
    });
    expect(checkout.url).toBe(`${web}/checkout/${checkout.id}`);
    expect(r.headers.get('location')).toBe(`/organizations/${owner.organizationId}/checkouts/${checkout.id}`);
    const page = await browse(new CookieJar(), checkout.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.body).toContain('€49.00 per month, billed by Mindgate Europe B.V.');
    expect(page.body).toContain('14-day trial:');
    expect(page.body).toContain('<option value="DE" selected>Germany</option>');
  });

  it('completes from the page: the trial carries on as paid Professional, nothing invoiced yet', async () => {
    const done = await browse(new CookieJar(), checkout.url, { form: { billing_country: 'DE' } });
    expect(done.status).toBe(200);
    expect(done.body).toContain('the subscription is active');
    const again = await browse(new CookieJar(), checkout.url, { form: { billing_country: 'DE' } });
    expect(again.body).toContain('This checkout is complete');
    expect((await call(`/organizations/${owner.organizationId}/checkouts/${checkout.id}`, { token: owner.access_token })).json.status).toBe(
      'complete',
    );
    const sub = (await read(owner, '/subscription')).json;
    expect(sub).toMatchObject({
      plan: 'professional',
      status: 'trialing',
      interval: 'month',
      currency: 'EUR',
      entity: 'eu',
      country: 'DE',
      provider: 'manual',
      payment_method_on_file: true,
      unit_amount: 4900,
    });
    expect((await read(owner, '/invoices')).json.invoices).toEqual([]);
    const twice = await call(`/organizations/${owner.organizationId}/checkouts`, {
      token: owner.access_token,
      body: { plan: 'professional', interval: 'year', billing_address: { country: 'DE' } },
    });
    expect(twice.status).toBe(409);
  });

  it('refuses a checkout without a country to bill, and a country that is not one', async () => {
    const none = await call(`/organizations/${lapsed.organizationId}/checkouts`, {
      token: lapsed.access_token,
      body: { plan: 'professional', interval: 'month' },
    });
    expect(none.status).toBe(422);
    expect(none.json.errors[0].loc).toEqual(['body', 'billing_address', 'country']);
    const zz = await call(`/organizations/${lapsed.organizationId}/checkouts`, {
      token: lapsed.access_token,
      body: { plan: 'professional', interval: 'month', billing_address: { country: 'ZZ' } },
    });
    expect(zz.status).toBe(422);
    expect(zz.json.errors[0].loc).toEqual(['body', 'billing_address', 'country']);
    const free = await call(`/organizations/${lapsed.organizationId}/checkouts`, {
      token: lapsed.access_token,
      body: { plan: 'starter', interval: 'month' },
    });
    expect(free.status).toBe(422);
  });

  it('has no Stripe webhook endpoint without a signing secret: 404, the documented answer', async () => {
    const res = await call('/billing/webhooks/stripe', { rawBody: '{}', headers: { 'stripe-signature': 't=1,v1=00' } });
    expect(res.status).toBe(404);
    expect(res.json.detail).toMatch(/STRIPE_WEBHOOK_SECRET/);
  });

  it('at the trial’s end: paid Professional with its first invoice, which the operator marks paid; the unpaid trial falls to Starter', async () => {
    const trialEnd = Date.parse((await read(owner, '/subscription')).json.trial_end);
    offset += 15 * DAY;
    const sub = (await read(owner, '/subscription')).json;
    expect(sub).toMatchObject({ plan: 'professional', status: 'active', trial_end: null, entitlements: { entity_graph: true } });
    expect(Date.parse(sub.current_period_start)).toBe(trialEnd);
    const invoices = (await read(owner, '/invoices')).json.invoices;
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ status: 'open', currency: 'EUR', amount_due: 4900, entity: 'eu', provider: 'manual' });
    const { invoice } = await platform.ctx.clients.invoices.markInvoicePaid({
      organizationId: owner.organizationId,
      invoiceId: invoices[0].id,
    });
    expect(invoice?.amountPaid).toBe(4900n);
    expect((await read(owner, '/invoices')).json.invoices[0]).toMatchObject({ status: 'paid', amount_paid: 4900 });

    const fallen = (await read(lapsed, '/subscription')).json;
    expect(fallen).toMatchObject({
      plan: 'starter',
      status: 'active',
      trial_end: null,
      entitlements: { entity_graph: false, max_members: 10 },
    });
    expect((await read(lapsed, '/usage')).json.plan).toBe('starter');
    const { entitlements } = await platform.ctx.clients.billing.getEntitlements({ organizationId: lapsed.organizationId });
    expect(entitlements?.entityGraph).toBe(false);
    expect((await read(lapsed, '/subscription')).headers.get('ratelimit-policy')).toMatch(/^"api-starter";q=600;w=60$/);
  });

  it('prorates a change to yearly: a credit for the unused month, the yearly price from now', async () => {
    offset += 10 * DAY;
    await platform.ctx.clients.billing.changePlan({
      organizationId: owner.organizationId,
      plan: Plan.PROFESSIONAL,
      interval: BillingInterval.YEAR,
    });
    const [proration] = (await read(owner, '/invoices')).json.invoices;
    expect(proration.lines).toHaveLength(2);
    expect(proration.lines[0].amount).toBeLessThan(0);
    expect(proration.lines[0].amount).toBeGreaterThan(-4900);
    expect(proration.lines[1]).toEqual({ description: 'Professional, yearly', amount: 49000 });
    expect(proration.amount_due).toBe(49000 + proration.lines[0].amount);
    expect((await read(owner, '/subscription')).json).toMatchObject({ interval: 'year', unit_amount: 49000 });
  });

  it('cancels at the period’s end (resumable until then), then falls to Starter', async () => {
    await platform.ctx.clients.billing.cancelSubscription({ organizationId: owner.organizationId });
    await platform.ctx.clients.billing.resumeSubscription({ organizationId: owner.organizationId });
    await platform.ctx.clients.billing.cancelSubscription({ organizationId: owner.organizationId });
    const sub = (await read(owner, '/subscription')).json;
    expect(sub).toMatchObject({ plan: 'professional', cancel_at_period_end: true });
    offset = Date.parse(sub.current_period_end) - Date.now() + 1_000;
    expect((await read(owner, '/subscription')).json).toMatchObject({ plan: 'starter', interval: null, cancel_at_period_end: false });
  });
});
