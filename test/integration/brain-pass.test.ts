// The brain-pass over real HTTP, with the test payment method of the embedded default: an agent
// with no account is answered 402 with a Payment challenge (HMAC-bound id, RFC 8785 request,
// expiry, no-store) and nothing is created; altered, expired, malformed and unsupported credentials
// get the scheme's problems; a declined card uses up the challenge; twenty concurrent retries of
// one paid credential settle once; the paid retry gets a Payment-Receipt and a token that the MCP
// SDK client uses at once on the Brain; credentials never reach the logs; the route is in /api, the
// OpenAPI document and llms.txt, under its own rate-limit policy.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCredential, parseChallenges } from '../../edge/web/brain-pass-scheme.ts';
import { startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';

let offset = 0;
const now = () => Date.now() + offset;
const logs: string[] = [];
let platform: TestPlatform;
let web: string;
const PROBLEMS = 'https://paymentauth.org/problems/';
const PAYS = { card: '4242424242424242' };

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ BILLING_COUNTRY_HEADER: 'cf-ipcountry', BRAIN_PASS_RATE_LIMIT: '100' }, { logs, now });
  web = platform.ctx.config.publicUrls.web;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

function post(authorization?: string, init: { body?: unknown; headers?: Record<string, string>; path?: string } = {}) {
  const headers: Record<string, string> = { ...init.headers };
  if (authorization) headers.authorization = authorization;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${web}${init.path ?? '/api/v1/agent/brain-pass'}`, {
    method: 'POST',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

async function challenge(headers: Record<string, string> = {}): Promise<Record<string, string>> {
  const res = await post(undefined, { headers });
  expect(res.status).toBe(402);
  return parseChallenges([res.headers.get('www-authenticate')!])[0];
}

const pay = (c: Record<string, string>, payload: unknown = PAYS) => `Payment ${encodeCredential(c, payload)}`;
const settlements = () => platform.ctx.stores.records.collection('brain_pass_settlements').count({});
const passOrganizations = async () =>
  (await platform.ctx.stores.records.collection<{ _id: string; userId: string }>('memberships').find({})).filter((m) =>
    m.userId.startsWith('brain-pass:'),
  ).length;

describe('the 402 challenge', () => {
  it('answers a request without a credential with a problem and a bound Payment challenge, and creates nothing', async () => {
    const res = await post();
    expect(res.status).toBe(402);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toMatchObject({ type: `${PROBLEMS}payment-required`, status: 402, title: 'Payment Required' });
    const [c] = parseChallenges([res.headers.get('www-authenticate')!]);
    expect(c).toMatchObject({ realm: 'mindgate', method: 'test', intent: 'charge' });
    expect(c.opaque).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(c.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const request = JSON.parse(Buffer.from(c.request, 'base64url').toString('utf8'));
    expect(request).toEqual({ amount: '500', currency: 'usd', recipient: 'us' });
    expect(Buffer.from(c.request, 'base64url').toString('utf8')).toBe(canonicalize(request));
    const ahead = Date.parse(c.expires) - now();
    expect(ahead).toBeGreaterThan(4 * 60_000);
    expect(ahead).toBeLessThanOrEqual(5 * 60_000);
    expect(res.headers.get('ratelimit-policy')).toBe('"brain-pass";q=100;w=60');
    expect(await settlements()).toBe(0);
    expect(await passOrganizations()).toBe(0);
  });

  it('prices in EUR for the European entity when the request comes from the EU, and answers on the unversioned alias', async () => {
    const c = await challenge({ 'cf-ipcountry': 'DE' });
    expect(JSON.parse(Buffer.from(c.request, 'base64url').toString('utf8'))).toEqual({ amount: '500', currency: 'eur', recipient: 'eu' });
    expect((await post(undefined, { path: '/api/agent/brain-pass' })).status).toBe(402);
  });
});

describe('refused credentials', () => {
  const expectProblem = async (res: Response, status: number, type: string) => {
    expect(res.status).toBe(status);
    expect(((await res.json()) as { type: string }).type).toBe(`${PROBLEMS}${type}`);
    if (status === 402) expect(parseChallenges([res.headers.get('www-authenticate')!])).toHaveLength(1);
  };

  it('answers each failure with the problem of the scheme, and settles nothing', async () => {
    const c = await challenge();
    const cheaper = Buffer.from(canonicalize({ amount: '1', currency: 'usd', recipient: 'us' })!).toString('base64url');
    await expectProblem(await post(pay({ ...c, request: cheaper })), 402, 'invalid-challenge');
    await expectProblem(await post(pay({ ...c, expires: new Date(now() + 3_600_000).toISOString() })), 402, 'invalid-challenge');
    // One character changed where every bit counts (the last one of base64url carries padding bits).
    const forged = `${c.id.slice(0, 5)}${c.id[5] === 'A' ? 'B' : 'A'}${c.id.slice(6)}`;
    await expectProblem(await post(pay({ ...c, id: forged })), 402, 'invalid-challenge');
    await expectProblem(await post('Payment not-base64url!'), 402, 'malformed-credential');
    await expectProblem(await post(`Payment ${Buffer.from('{"payload":{}}').toString('base64url')}`), 402, 'malformed-credential');
    await expectProblem(await post(pay({ ...c, method: 'bitcoin' })), 400, 'method-unsupported');
    offset += 6 * 60_000;
    await expectProblem(await post(pay(c)), 402, 'payment-expired');
    offset -= 6 * 60_000;
    expect(await settlements()).toBe(0);
    expect(await passOrganizations()).toBe(0);
  });

  it('refuses a declined card, and the challenge is used up', async () => {
    const c = await challenge();
    await expectProblem(await post(pay(c, { card: '4000000000000002' })), 402, 'verification-failed');
    await expectProblem(await post(pay(c)), 402, 'invalid-challenge');
    expect(await passOrganizations()).toBe(0);
  });

  it('answers 400 for a body that is not {"name"}', async () => {
    const res = await post(undefined, { body: { name: 7 } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { 'invalid-params': { in: string }[] })['invalid-params'][0].in).toBe('body');
  });
});

describe('a paid pass', () => {
  let pass: Record<string, any>;
  let paidCredential: string;

  it('settles once under twenty concurrent retries of one credential, and hands out a receipt and a pass', async () => {
    const before = await passOrganizations();
    paidCredential = pay(await challenge());
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(paidCredential, { body: { name: 'Research agent' } })));
    const ok = answers.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const r of answers.filter((a) => a.status !== 200)) {
      expect(r.status).toBe(402);
      expect(((await r.json()) as { type: string }).type).toBe(`${PROBLEMS}invalid-challenge`);
    }
    expect(await passOrganizations()).toBe(before + 1);
    const receipt = JSON.parse(Buffer.from(ok[0].headers.get('payment-receipt')!, 'base64url').toString('utf8'));
    expect(receipt).toMatchObject({ status: 'success', method: 'test' });
    expect(receipt.reference).toMatch(/^test_[0-9a-f]{24}$/);
    expect(Number.isNaN(Date.parse(receipt.timestamp))).toBe(false);
    expect(ok[0].headers.get('cache-control')).toBe('private');
    pass = (await ok[0].json()) as Record<string, any>;
    expect(pass).toMatchObject({ token_type: 'Bearer', plan: 'starter', mcp_url: `${platform.ctx.config.publicUrls.gateway}/brain/mcp` });
    expect(pass.expires_in).toBeGreaterThan(23 * 3600);
    expect(pass.expires_in).toBeLessThanOrEqual(24 * 3600);
    const org = await platform.ctx.clients.organizations.getOrganization({ organizationId: pass.organization_id });
    expect(org.organization?.name).toBe('Research agent');
  });

  it('is usable at once by an MCP client on the Brain of its organization', async () => {
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${platform.urls.gateway}/brain/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${pass.access_token}` } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('manage_memories');
      const created = await client.callTool({
        name: 'manage_memories',
        arguments: {
          action: 'create',
          namespace: 'knowledge',
          key: 'pass/first',
          title: 'First',
          content: 'The pass works from the first call.',
        },
      });
      expect(created.isError).toBeFalsy();
      const found = await client.callTool({ name: 'search_memories', arguments: { query: 'does the pass work', namespace: 'knowledge' } });
      expect(JSON.stringify(found.structuredContent)).toContain('pass/first');
    } finally {
      await client.close();
    }
    const { memories } = await platform.ctx.clients.brain.getUsage({ organizationId: pass.organization_id });
    expect(memories).toBe(1n);
  });

  it('keeps credentials and the pass out of the logs', () => {
    const all = logs.join('\n');
    expect(all).not.toContain(pass.access_token);
    expect(all).not.toContain('4242424242424242');
    expect(logs.filter((l) => l.includes('"path":"/api/v1/agent/brain-pass"')).length).toBeGreaterThan(20);
    expect(all).not.toContain(paidCredential.slice('Payment '.length, 'Payment '.length + 40));
  });
});

describe('discovery', () => {
  it('lists the route in /api with its policy, in the OpenAPI document with the Payment scheme, and in llms.txt', async () => {
    const index = (await (await fetch(`${web}/api`)).json()) as {
      operations: { path: string; policy: string }[];
      policies: { name: string; quota: number }[];
    };
    expect(index.operations).toContainEqual(expect.objectContaining({ path: '/api/v1/agent/brain-pass', policy: 'brain-pass' }));
    expect(index.policies).toContainEqual(expect.objectContaining({ name: 'brain-pass', quota: 100 }));
    const doc = (await (await fetch(`${web}/openapi.json`)).json()) as Record<string, any>;
    const op = doc.paths['/api/v1/agent/brain-pass'].post;
    expect(op.operationId).toBe('buyBrainPass');
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '402', '400', '429']));
    expect(op.security).toEqual([{}, { Payment: [] }]);
    expect(doc.components.securitySchemes.Payment).toMatchObject({ type: 'http', scheme: 'Payment' });
    const llms = await (await fetch(`${web}/llms.txt`)).text();
    expect(llms).toContain(`[Brain pass](${web}/api/v1/agent/brain-pass)`);
  });
});
