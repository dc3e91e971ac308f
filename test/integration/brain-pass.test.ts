// The brain-pass over real HTTP, with the test payment method of the embedded default: an agent
// with no account is answered 402 with a Payment challenge (HMAC-bound id, RFC 8785 request,
// expiry, no-store) and nothing is created; altered, expired, malformed and unsupported credentials
// get the scheme's problems; a declined card uses up the challenge; twenty concurrent retries of
// one paid credential settle once; a renewal adds its day to the time left, and passes paid at once
// each add theirs; the paid retry gets a Payment-Receipt and a token that the MCP
// SDK client uses at once on the Brain; credentials never reach the logs; the route is in /api, the
// OpenAPI document and llms.txt, under its own rate-limit policy.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCredential, parseChallenges } from '../../edge/web/brain-pass-scheme.ts';
import type { PassTermRecord } from '../../services/billing/pass-term-record.ts';
import type { SettlementRecord } from '../../services/billing/settlement-record.ts';
import { obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
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

describe('a pass for a named organization', () => {
  // The pass bought above (its organization holds the memory pass/first), and an owner's
  // organization with an admin key and a read-only one.
  let first: Record<string, any>;
  let owned: { organizationId: string; admin: string; readOnly: string };
  const named = (organizationId: string, proof: Record<string, string>, authorization?: string) =>
    post(authorization, { body: { organization_id: organizationId }, headers: proof });
  const withToken = (token: string) => ({ 'brain-pass-token': token });
  const challengeFor = async (organizationId: string, proof: Record<string, string>) => {
    const res = await named(organizationId, proof);
    expect(res.status, await res.clone().text()).toBe(402);
    return parseChallenges([res.headers.get('www-authenticate')!])[0];
  };
  const countAll = async () => ({ settlements: await settlements(), organizations: await passOrganizations() });

  beforeAll(async () => {
    const bought = await post(pay(await challenge()), { body: { name: 'Renewing agent' } });
    expect(bought.status).toBe(200);
    first = (await bought.json()) as Record<string, any>;
    const owner = await obtainAccessToken(platform, { resource: platform.ctx.config.publicUrls.api });
    const key = async (scopes: string[]) => {
      const res = await fetch(`${platform.ctx.config.publicUrls.api}/organizations/${owner.organizationId}/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: scopes.join('-'), scopes }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { secret: string }).secret;
    };
    owned = { organizationId: owner.organizationId, admin: await key(['admin']), readOnly: await key(['read']) };
  });

  it('refuses without proof of access, alike whether or not the organization exists, and leaves nothing behind', async () => {
    const before = await countAll();
    const attempts: [string, Record<string, string>][] = [
      [first.organization_id, {}],
      ['org_doesnotexist0000', {}],
      [owned.organizationId, withToken(first.access_token)],
      ['org_doesnotexist0000', withToken(first.access_token)],
      [owned.organizationId, { 'x-api-key': owned.readOnly }],
      [first.organization_id, { 'x-api-key': owned.admin }],
      ['org_doesnotexist0000', { 'x-api-key': owned.admin }],
      [first.organization_id, { 'x-api-key': 'mg_not-a-key-at-all' }],
      [first.organization_id, withToken('not.a.token')],
      [first.organization_id, { ...withToken(first.access_token), 'x-api-key': owned.admin }],
    ];
    const answers = [];
    for (const [organizationId, proof] of attempts) {
      const res = await named(organizationId, proof);
      const headers = Object.fromEntries(
        [...res.headers].filter(([k]) => !['date', 'x-request-id'].includes(k) && !k.startsWith('ratelimit')),
      );
      answers.push({ status: res.status, headers, body: (await res.text()).replace(/"instance":"[^"]*"/, '') });
    }
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]!.status).toBe(403);
    expect(answers[0]!.headers['www-authenticate']).toBeUndefined();
    // A paid credential changes nothing: the proof is checked first.
    expect((await named(first.organization_id, {}, pay(await challenge()))).status).toBe(403);
    expect(await countAll()).toEqual(before);
  });

  it("renews with the organization's pass: bound challenge, settled once under twenty retries, no new organization", async () => {
    const before = await countAll();
    const c = await challengeFor(first.organization_id, withToken(first.access_token));
    expect(c.opaque).toMatch(new RegExp(`^[A-Za-z0-9_-]{16}:${first.organization_id}$`));
    const credential = pay(c);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => named(first.organization_id, withToken(first.access_token), credential)),
    );
    const ok = answers.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const r of answers.filter((a) => a.status !== 200)) {
      expect(r.status).toBe(402);
      expect(((await r.json()) as { type: string }).type).toBe(`${PROBLEMS}invalid-challenge`);
    }
    const renewed = (await ok[0]!.json()) as Record<string, any>;
    expect(renewed.organization_id).toBe(first.organization_id);
    expect(renewed.access_token).not.toBe(first.access_token);
    // Renewed while the first pass runs: its day is added to the time left.
    expect(Date.parse(renewed.expires_at)).toBe(Date.parse(first.expires_at) + 86_400_000);
    expect(ok[0]!.headers.get('payment-receipt')).toBeTruthy();
    expect(await countAll()).toEqual({ settlements: before.settlements + 1, organizations: before.organizations });

    // A completion retried after a crash that left the settlement paid (the term already extended)
    // gives the same end, and extends nothing again.
    const settlementsOf = platform.ctx.stores.records.collection<SettlementRecord>('brain_pass_settlements');
    const [settlement] = await settlementsOf.find({ organizationId: first.organization_id, passExpiresAt: Date.parse(renewed.expires_at) });
    await settlementsOf.put({
      ...settlement!,
      state: 'paid',
      organizationId: undefined,
      passExpiresAt: undefined,
      version: settlement!.version + 1,
    });
    const again = await platform.ctx.clients.brainPass.completePass({
      settlementId: settlement!._id,
      organizationId: first.organization_id,
    });
    expect(timestampMs(again.expireTime!)).toBe(Date.parse(renewed.expires_at));
    const term = await platform.ctx.stores.records.collection<PassTermRecord>('brain_pass_terms').get(first.organization_id);
    expect(term?.until).toBe(Date.parse(renewed.expires_at));

    // The MCP client, on the new credential, reaches the same Brain.
    const client = new Client({ name: 'renewed-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${platform.urls.gateway}/brain/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${renewed.access_token}` } },
      }),
    );
    try {
      await client.callTool({
        name: 'manage_memories',
        arguments: {
          action: 'create',
          namespace: 'knowledge',
          key: 'renewal/note',
          title: 'Renewed',
          content: 'Renewing keeps the memory.',
        },
      });
      const found = await client.callTool({
        name: 'search_memories',
        arguments: { query: 'renewing keeps memory', namespace: 'knowledge' },
      });
      expect(JSON.stringify(found.structuredContent)).toContain('renewal/note');
    } finally {
      await client.close();
    }
    const { memories } = await platform.ctx.clients.brain.getUsage({ organizationId: first.organization_id });
    expect(memories).toBe(1n);
  });

  it('binds each challenge to its organization: a payment for one serves no other, nor a new one', async () => {
    const before = await countAll();
    const forFirst = await challengeFor(first.organization_id, withToken(first.access_token));
    const adminKey = { 'x-api-key': owned.admin };
    const refused = [
      await named(owned.organizationId, adminKey, pay(forFirst)),
      await post(pay(forFirst)),
      await named(owned.organizationId, adminKey, pay(await challenge())),
    ];
    for (const res of refused) {
      expect(res.status).toBe(402);
      expect(((await res.json()) as { type: string }).type).toBe(`${PROBLEMS}invalid-challenge`);
    }
    expect(await countAll()).toEqual(before);
    // The challenge is still good for its own organization.
    expect((await named(first.organization_id, withToken(first.access_token), pay(forFirst))).status).toBe(200);
  });

  it('takes an admin API key as proof, and never lowers the plan in force', async () => {
    const { subscription: before } = await platform.ctx.clients.billing.getEntitlements({ organizationId: owned.organizationId });
    const c = await challengeFor(owned.organizationId, { 'x-api-key': owned.admin });
    const res = await named(owned.organizationId, { 'x-api-key': owned.admin }, pay(c));
    expect(res.status).toBe(200);
    const pass = (await res.json()) as Record<string, any>;
    expect(pass).toMatchObject({ organization_id: owned.organizationId, plan: 'professional' });
    const { subscription: after } = await platform.ctx.clients.billing.getEntitlements({ organizationId: owned.organizationId });
    expect(after?.plan).toBe(before?.plan);
    expect(after?.trialEndTime).toEqual(before?.trialEndTime);
  });

  it('takes a pass that ended less than 7 days ago, and not one older; passes bought after the last one ended run from the payment', async () => {
    // The organization's passes (the first, its renewal and the one paid in the binding test) run
    // about three days; four days on, all have ended.
    offset += 4 * 86_400_000;
    try {
      // Two passes paid at once: one runs a day from its payment, the other a day after that.
      const proof = withToken(first.access_token);
      const challenges = [await challengeFor(first.organization_id, proof), await challengeFor(first.organization_id, proof)];
      const answers = await Promise.all(challenges.map((c) => named(first.organization_id, proof, pay(c))));
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      const ends = (await Promise.all(answers.map(async (r) => ((await r.json()) as Record<string, any>).expires_at)))
        .map((at) => Date.parse(at))
        .sort((a, b) => a - b);
      expect(ends[0] - now()).toBeGreaterThan(86_400_000 - 60_000);
      expect(ends[0] - now()).toBeLessThanOrEqual(86_400_000);
      expect(ends[1] - ends[0]).toBe(86_400_000);
    } finally {
      offset -= 4 * 86_400_000;
    }
    offset += 3 * 86_400_000;
    try {
      expect((await named(first.organization_id, withToken(first.access_token))).status).toBe(402);
      // The pass lasted a day: 9 days on, it ended 8 days ago.
      offset += 6 * 86_400_000;
      expect((await named(first.organization_id, withToken(first.access_token))).status).toBe(403);
    } finally {
      offset -= 9 * 86_400_000;
    }
  });

  it('keeps the proofs out of the logs', () => {
    const all = logs.join('\n');
    expect(all).not.toContain(first.access_token);
    expect(all).not.toContain(owned.admin);
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
