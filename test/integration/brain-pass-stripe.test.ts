// The brain-pass's Stripe payment method against Stripe's official mock server: with both methods
// enabled the 402 carries a challenge for each; a credential for the Stripe challenge carrying a
// card token is settled by one Stripe charge of exactly the challenge's amount and currency, and
// the receipt names the charge; a payload without a token is refused with verification-failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCredential, parseChallenges } from '../../edge/web/brain-pass-scheme.ts';
import { startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { findStripeMock, startStripeMock, type StripeMock } from '../support/stripe-mock.ts';

const binary = findStripeMock();
let mock: StripeMock;
let platform: TestPlatform;

beforeAll(async () => {
  if (!binary) return;
  mock = await startStripeMock(binary);
  platform = await startOAuthTestPlatform({
    BRAIN_PASS_METHODS: 'stripe,test',
    STRIPE_SECRET_KEY: 'sk_test_123',
    STRIPE_API_URL: mock.url,
  });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await mock?.stop();
});

const url = () => `${platform.ctx.config.publicUrls.web}/api/v1/agent/brain-pass`;

async function stripeChallenge(): Promise<Record<string, string>> {
  const res = await fetch(url(), { method: 'POST' });
  expect(res.status).toBe(402);
  const challenges = parseChallenges([res.headers.get('www-authenticate')!]);
  expect(challenges.map((c) => c.method).sort()).toEqual(['stripe', 'test']);
  return challenges.find((c) => c.method === 'stripe')!;
}

describe.skipIf(!binary)('the Stripe payment method (stripe-mock)', () => {
  it('settles a card token with one charge of the challenge amount, and the receipt names it', async () => {
    const c = await stripeChallenge();
    const res = await fetch(url(), {
      method: 'POST',
      headers: { authorization: `Payment ${encodeCredential(c, { source: 'tok_visa' })}` },
    });
    expect(res.status).toBe(200);
    const receipt = JSON.parse(Buffer.from(res.headers.get('payment-receipt')!, 'base64url').toString('utf8'));
    expect(receipt).toMatchObject({ status: 'success', method: 'stripe' });
    expect(receipt.reference).toMatch(/^ch_/);
    const charges = mock.log.filter((l) => l.startsWith('Request data = ') && l.includes('source:tok_visa'));
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatch(/amount:500/);
    expect(charges[0]).toMatch(/currency:usd/);
    const body = (await res.json()) as { access_token: string };
    const mcp = await fetch(`${platform.urls.gateway}/brain/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${body.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(mcp.status).toBe(200);
  });

  it('refuses a Stripe credential without a card token, charging nothing', async () => {
    const before = mock.log.filter((l) => l.includes('POST /v1/charges')).length;
    const c = await stripeChallenge();
    const res = await fetch(url(), {
      method: 'POST',
      headers: { authorization: `Payment ${encodeCredential(c, { card: '4242424242424242' })}` },
    });
    expect(res.status).toBe(402);
    expect(((await res.json()) as { type: string }).type).toBe('https://paymentauth.org/problems/verification-failed');
    expect(mock.log.filter((l) => l.includes('POST /v1/charges')).length).toBe(before);
  });
});
