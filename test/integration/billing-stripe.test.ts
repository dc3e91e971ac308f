// Stripe as the payment provider, against Stripe's official mock server: organizations on their
// trial check out Professional in EUR from a German billing address and in USD from a US request
// (the trusted country header), through real Stripe Checkout Sessions; completion arrives as signed
// webhooks in Stripe's scheme (a bad or stale signature changes nothing, a redelivery is applied
// once); cancel, resume and a plan change go to Stripe's subscription; Stripe's invoices and
// subscription updates are mirrored; the deletion of the Stripe subscription falls back to Starter.
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';
import { findStripeMock, startStripeMock, type StripeMock } from '../support/stripe-mock.ts';

const WEBHOOK_SECRET = 'whsec_test_secret_of_the_endpoint';
const stripe = new Stripe('sk_test_123');
const binary = findStripeMock();
let mock: StripeMock | undefined;
let platform: TestPlatform;
let api: string;
let german: ObtainedToken;
let american: ObtainedToken;
const call = restClient(() => api);

beforeAll(async () => {
  if (!binary) return;
  mock = await startStripeMock(binary);
  platform = await startOAuthTestPlatform({
    BILLING_PROVIDER: 'stripe',
    STRIPE_SECRET_KEY: 'sk_test_123',
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_URL: mock.url,
    BILLING_COUNTRY_HEADER: 'cf-ipcountry',
  });
  api = platform.ctx.config.publicUrls.api;
  german = await obtainAccessToken(platform, { resource: api });
  american = await obtainAccessToken(platform, { resource: api });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await mock?.stop();
});

let eventCount = 0;
function event(type: string, object: Record<string, unknown>) {
  return {
    id: `evt_test_${++eventCount}_${Date.now()}`,
    object: 'event',
    type,
    api_version: '2025-01-01',
    created: Math.floor(Date.now() / 1000),
    data: { object },
  };
}

async function deliver(payload: unknown, signature?: string) {
  const body = JSON.stringify(payload);
  const header = signature ?? stripe.webhooks.generateTestHeaderString({ payload: body, secret: WEBHOOK_SECRET });
  return call('/billing/webhooks/stripe', { rawBody: body, headers: { 'stripe-signature': header } });
}

const subscriptionOf = (t: ObtainedToken) => call(`/organizations/${t.organizationId}/subscription`, { token: t.access_token });

describe.skipIf(!binary)('checkout through Stripe (stripe-mock)', () => {
  let germanCheckout: Record<string, any>;
  let americanCheckout: Record<string, any>;

  it('opens a Stripe Checkout Session in EUR for a German billing address, carrying the trial', async () => {
    const r = await call(`/organizations/${german.organizationId}/checkouts`, {
      token: german.access_token,
      body: {
        plan: 'professional',
        interval: 'month',
        billing_address: { country: 'DE' },
        success_url: 'https://app.example.com/billing/done',
      },
    });
    expect(r.status).toBe(201);
    germanCheckout = r.json;
    expect(germanCheckout).toMatchObject({
      provider: 'stripe',
      currency: 'EUR',
      entity: 'eu',
      country: 'DE',
      unit_amount: 4900,
      trial_days: 14,
    });
    expect(germanCheckout.url).toMatch(/^https:\/\/checkout\.stripe\.com\//);
    const sent = mock!.log.filter((l) => l.startsWith('Request data = ')).join('\n');
    expect(sent).toMatch(/currency:eur/);
    expect(sent).toMatch(/unit_amount:4900/);
    expect(sent).toMatch(/trial_end:\d{10}/);
    expect(sent).toMatch(/client_reference_id:org_/);
  });

  it('opens one in USD for a request from the United States, without a billing address', async () => {
    const r = await call(`/organizations/${american.organizationId}/checkouts`, {
      token: american.access_token,
      headers: { 'cf-ipcountry': 'US' },
      body: { plan: 'professional', interval: 'year' },
    });
    expect(r.status).toBe(201);
    americanCheckout = r.json;
    expect(americanCheckout).toMatchObject({ provider: 'stripe', currency: 'USD', entity: 'us', country: 'US', unit_amount: 59000 });
  });

  it('refuses webhooks whose signature does not verify, or is too old, and changes nothing', async () => {
    const payload = event('checkout.session.completed', {
      id: 'cs_test_x',
      object: 'checkout.session',
      metadata: { checkout_id: germanCheckout.id },
    });
    const forged = await deliver(
      payload,
      stripe.webhooks.generateTestHeaderString({ payload: JSON.stringify(payload), secret: 'whsec_someone_else' }),
    );
    expect(forged.status).toBe(400);
    expect(forged.json.detail).toContain('Stripe-Signature');
    const old = Math.floor(Date.now() / 1000) - 3_600;
    const stale = await deliver(
      payload,
      stripe.webhooks.generateTestHeaderString({ payload: JSON.stringify(payload), secret: WEBHOOK_SECRET, timestamp: old }),
    );
    expect(stale.status).toBe(400);
    expect((await call('/billing/webhooks/stripe', { rawBody: 'not json', headers: { 'stripe-signature': 't=1,v1=00' } })).status).toBe(
      400,
    );
    expect((await call('/billing/webhooks/paypal', { rawBody: '{}' })).status).toBe(422);
    expect((await subscriptionOf(german)).json.payment_method_on_file).toBe(false);
  });

  it('activates each subscription from its signed checkout.session.completed, once', async () => {
    const completed = (checkout: Record<string, any>, country: string, sub: string) =>
      event('checkout.session.completed', {
        id: `cs_test_${checkout.id}`,
        object: 'checkout.session',
        client_reference_id: checkout.organization_id,
        customer: `cus_${country}`,
        subscription: sub,
        currency: checkout.currency.toLowerCase(),
        customer_details: { address: { country } },
        metadata: { checkout_id: checkout.id, organization_id: checkout.organization_id },
      });
    const first = completed(germanCheckout, 'DE', 'sub_german');
    const r = await deliver(first);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ received: true, event_type: 'checkout.session.completed', applied: true });
    expect((await deliver(first)).json.applied).toBe(false);
    expect((await deliver(completed(americanCheckout, 'US', 'sub_american'))).json.applied).toBe(true);

    expect((await subscriptionOf(german)).json).toMatchObject({
      plan: 'professional',
      status: 'trialing',
      provider: 'stripe',
      currency: 'EUR',
      entity: 'eu',
      country: 'DE',
      interval: 'month',
      payment_method_on_file: true,
    });
    expect((await subscriptionOf(american)).json).toMatchObject({
      provider: 'stripe',
      currency: 'USD',
      entity: 'us',
      country: 'US',
      interval: 'year',
    });
    const got = await call(`/organizations/${german.organizationId}/checkouts/${germanCheckout.id}`, { token: german.access_token });
    expect(got.json.status).toBe('complete');
  });

  it("cancels, resumes and changes the plan on Stripe's subscription", async () => {
    const path = `/organizations/${german.organizationId}/subscription`;
    const cancelled = await call(`${path}/cancel`, { method: 'POST', token: german.access_token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.cancel_at_period_end).toBe(true);
    expect(mock!.log.join('\n')).toMatch(/POST \/v1\/subscriptions\/sub_german/);
    const resumed = await call(`${path}/resume`, { method: 'POST', token: german.access_token });
    expect(resumed.json.cancel_at_period_end).toBe(false);
    const yearly = await call(path, { method: 'PATCH', token: german.access_token, body: { plan: 'professional', interval: 'year' } });
    expect(yearly.status).toBe(200);
    expect(yearly.json).toMatchObject({ interval: 'year', unit_amount: 49000 });
    expect(mock!.log.filter((l) => l.startsWith('Request data = ')).join('\n')).toMatch(/proration_behavior:create_prorations/);
  });

  it("mirrors Stripe's subscription updates and invoices, and falls back to Starter when the subscription is deleted", async () => {
    const periodEnd = Math.floor(Date.now() / 1000) + 30 * 86_400;
    const subscription = {
      id: 'sub_american',
      object: 'subscription',
      status: 'active',
      cancel_at_period_end: true,
      metadata: { organization_id: american.organizationId, plan: 'professional', interval: 'year' },
      items: {
        object: 'list',
        data: [
          {
            id: 'si_1',
            object: 'subscription_item',
            current_period_start: periodEnd - 86_400,
            current_period_end: periodEnd,
            price: { unit_amount: 59000, recurring: { interval: 'year' } },
          },
        ],
      },
    };
    expect((await deliver(event('customer.subscription.updated', subscription))).json.applied).toBe(true);
    const synced = (await subscriptionOf(american)).json;
    expect(synced).toMatchObject({ status: 'active', cancel_at_period_end: true });
    expect(Date.parse(synced.current_period_end)).toBe(periodEnd * 1000);

    const invoice = {
      id: 'in_test_american_1',
      object: 'invoice',
      status: 'paid',
      currency: 'usd',
      amount_due: 59000,
      amount_paid: 59000,
      created: Math.floor(Date.now() / 1000),
      period_start: periodEnd - 86_400,
      period_end: periodEnd,
      hosted_invoice_url: 'https://invoice.stripe.com/i/test',
      parent: { subscription_details: { subscription: 'sub_american', metadata: { organization_id: american.organizationId } } },
      lines: { object: 'list', data: [{ description: 'Professional', amount: 59000 }] },
      status_transitions: { paid_at: Math.floor(Date.now() / 1000) },
    };
    expect((await deliver(event('invoice.paid', invoice))).json.applied).toBe(true);
    const invoices = await call(`/organizations/${american.organizationId}/invoices`, { token: american.access_token });
    expect(invoices.json.invoices).toEqual([
      expect.objectContaining({
        id: 'in_test_american_1',
        status: 'paid',
        currency: 'USD',
        amount_paid: 59000,
        provider: 'stripe',
        hosted_url: 'https://invoice.stripe.com/i/test',
      }),
    ]);

    expect((await deliver(event('customer.subscription.deleted', { ...subscription, status: 'canceled' }))).json.applied).toBe(true);
    expect((await subscriptionOf(american)).json).toMatchObject({ plan: 'starter', interval: null, entitlements: { entity_graph: false } });
  });
});
