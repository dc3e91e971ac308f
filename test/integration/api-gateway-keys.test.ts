// The operator's gateway keys through the REST API: only signed-in owners and admins of the
// operator's organization manage them; a secret is shown once and stored as a hash; the gateway
// accepts it at once, keeps a rotated secret through the overlap, drops a revoked key, still takes
// GATEWAY_KEYS, and never logs a key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpBackend, type McpBackend } from '../support/gateway-backends.ts';
import { joinAs } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';

const ENV_KEY = 'configured-operator-key-0123456789';
let platform: TestPlatform;
let api: string;
let gateway: string;
let operator: ObtainedToken;
let outsider: ObtainedToken;
let org: string;
let backend: McpBackend;
const logs: string[] = [];
const call = restClient(() => api);
const keys = (p = '') => `/organizations/${org}/gateway-keys${p}`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform(
    { GATEWAY_REGISTRY_POLL_MS: '100', GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true', GATEWAY_KEYS: ENV_KEY },
    { logs },
  );
  api = platform.ctx.config.publicUrls.api;
  gateway = platform.ctx.config.publicUrls.gateway;
  operator = await obtainAccessToken(platform, { resource: api });
  outsider = await obtainAccessToken(platform, { resource: api });
  org = operator.organizationId;
  // The operator names its organization once it exists (OPERATOR_ORGANIZATION_ID).
  platform.ctx.config.api.operatorOrganizationId = org;
  backend = await startMcpBackend({ mode: 'json', name: 'ops' });
  const shared = await call(`/organizations/${org}/mcp-servers`, {
    token: operator.access_token,
    body: { name: 'ops-tools', url: backend.url, shared: true },
  });
  expect(shared.status).toBe(201);
}, 240_000);

afterAll(async () => {
  await backend?.close();
  await platform?.stop();
});

async function withKey(key: string): Promise<number> {
  const res = await fetch(`${gateway}/ops-tools/raw/echo`, { headers: { 'x-gateway-key': key } });
  await res.arrayBuffer();
  return res.status;
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe('gateway keys', () => {
  it('creates a key shown once, which the gateway accepts and strips, and lists it without its secret', async () => {
    const created = await call(keys(), { token: operator.access_token, body: { name: 'deploy pipeline' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { secret, gateway_key: key } = created.json;
    expect(secret).toMatch(/^mgk_gk/);
    expect(key).toMatchObject({ name: 'deploy pipeline', prefix: secret.slice(0, 14), rotated_at: null });
    const listed = await call(keys(), { token: operator.access_token });
    expect(listed.json.gateway_keys.map((k: { id: string }) => k.id)).toContain(key.id);
    expect(listed.text).not.toContain(secret.slice(14));
    expect(await eventually(async () => (await withKey(secret)) === 200)).toBe(true);
    const seen = backend.seen.at(-1)!;
    expect(seen.headers['x-gateway-authenticated']).toBe('key');
    expect(seen.headers['x-gateway-key']).toBeUndefined();
    expect(await withKey(`${secret}x`)).toBe(401);
    expect(await withKey(ENV_KEY)).toBe(200);
    expect(logs.join('\n')).not.toContain(secret.slice(14));
    expect(logs.join('\n')).not.toContain(ENV_KEY);
  });

  it('keeps the old secret through the rotation overlap, and drops it when the overlap is 0', async () => {
    const first = (await call(keys(), { token: operator.access_token, body: { name: 'rotating' } })).json;
    expect(await eventually(async () => (await withKey(first.secret)) === 200)).toBe(true);
    const second = await call(keys(`/${first.gateway_key.id}/rotate`), { token: operator.access_token, body: { overlap_seconds: 600 } });
    expect(second.status).toBe(200);
    expect(Date.parse(second.json.gateway_key.previous_secret_expires_at)).toBeGreaterThan(Date.now() + 590_000);
    expect(await eventually(async () => (await withKey(second.json.secret)) === 200)).toBe(true);
    expect(await withKey(first.secret)).toBe(200);
    // A bare POST rotates with the default overlap (an hour).
    const third = await call(keys(`/${first.gateway_key.id}/rotate`), { token: operator.access_token, method: 'POST' });
    expect(Date.parse(third.json.gateway_key.previous_secret_expires_at)).toBeGreaterThan(Date.now() + 3_500_000);
    const fourth = await call(keys(`/${first.gateway_key.id}/rotate`), { token: operator.access_token, body: { overlap_seconds: 0 } });
    expect(fourth.json.gateway_key.previous_secret_expires_at).toBeNull();
    // Once the gateway has the fourth secret, it has dropped every earlier one (no overlap).
    expect(await eventually(async () => (await withKey(fourth.json.secret)) === 200)).toBe(true);
    expect(await withKey(third.json.secret)).toBe(401);
    expect(await withKey(first.secret)).toBe(401);

    expect((await call(keys(`/${first.gateway_key.id}`), { token: operator.access_token, method: 'DELETE' })).status).toBe(204);
    expect(await eventually(async () => (await withKey(fourth.json.secret)) === 401)).toBe(true);
    expect((await call(keys(`/${first.gateway_key.id}`), { token: operator.access_token, method: 'DELETE' })).status).toBe(404);
  });

  it('lets only signed-in owners and admins of the operator organization manage keys', async () => {
    const admin = await joinAs(platform, org, 'admin');
    const member = await joinAs(platform, org, 'member');
    const adminKey = (
      await call(`/organizations/${org}/api-keys`, { token: operator.access_token, body: { name: 'x', scopes: ['admin'] } })
    ).json.secret;
    expect((await call(keys(), { token: admin.access_token, body: { name: 'by admin' } })).status).toBe(201);
    expect((await call(keys(), { token: member.access_token })).status).toBe(403);
    expect((await call(keys(), { token: member.access_token, body: { name: 'by member' } })).status).toBe(403);
    expect((await call(keys(), { apiKey: adminKey })).status).toBe(403);
    const foreign = await call(`/organizations/${outsider.organizationId}/gateway-keys`, { token: outsider.access_token });
    expect(foreign.status).toBe(403);
    expect(foreign.json.detail).toContain('OPERATOR_ORGANIZATION_ID');
    const audit = await call(`/organizations/${org}/audit-events?action=createGatewayKey`, { token: operator.access_token });
    expect(audit.json.events.filter((e: { outcome: string }) => e.outcome === 'success').length).toBeGreaterThanOrEqual(3);
    expect(audit.json.events.some((e: { outcome: string }) => e.outcome === 'denied')).toBe(true);
  });

  it('answers malformed requests with their problem', async () => {
    const t = operator.access_token;
    expect((await call(keys(), { token: t, body: { name: '' } })).status).toBe(422);
    expect((await call(keys(), { token: t, body: { name: 'x', extra: 1 } })).status).toBe(422);
    expect((await call(keys('/gk0000000000000000/rotate'), { token: t, body: {} })).status).toBe(404);
    expect((await call(keys('/nope/rotate'), { token: t, body: {} })).status).toBe(422);
    const created = (await call(keys(), { token: t, body: { name: 'bounds' } })).json;
    const tooLong = await call(keys(`/${created.gateway_key.id}/rotate`), { token: t, body: { overlap_seconds: 604_801 } });
    expect(tooLong.status).toBe(422);
    expect(tooLong.json.errors[0].loc).toEqual(['body', 'overlap_seconds']);
  });
});
