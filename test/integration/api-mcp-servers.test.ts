// MCP servers managed through the REST API and served by the gateway without a restart: created,
// read, patched (enable/disable, tool policy, OAuth settings with a write-only secret sealed at
// rest) and deleted; validated as the servers file is; usable only by their organization (an API
// key of another one gets a 403 at the proxy), shared ones by every organization. The MCP SDK
// client talks to SDK backends through the gateway.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemType } from '../../edge/api/problems.ts';
import { startMcpBackend, type McpBackend } from '../support/gateway-backends.ts';
import { joinAs, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let gateway: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let viewer: TestMember;
let org: string;
let ownKey: string;
let otherKey: string;
let backend: McpBackend;
const call = restClient(() => api);
const servers = (p = '') => `/organizations/${org}/mcp-servers${p}`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ GATEWAY_REGISTRY_POLL_MS: '100', GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true' });
  api = platform.ctx.config.publicUrls.api;
  gateway = platform.ctx.config.publicUrls.gateway;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  viewer = await joinAs(platform, org, 'viewer');
  ownKey = (await call(`/organizations/${org}/api-keys`, { token: owner.access_token, body: { name: 'agent' } })).json.secret;
  otherKey = (await call(`/organizations/${other.organizationId}/api-keys`, { token: other.access_token, body: { name: 'agent' } })).json
    .secret;
  backend = await startMcpBackend({ mode: 'sse', name: 'tools' });
}, 240_000);

afterAll(async () => {
  await backend?.close();
  await platform?.stop();
});

/** Polls until `check` passes: the gateway applies a change within a poll interval (100 ms here). */
async function eventually<T>(work: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await work();
    if (check(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function connect(name: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'registry-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway}/${name}/mcp`), { requestInit: { headers } }));
  return client;
}

const mcpPost = (name: string, headers: Record<string, string> = {}) =>
  fetch(`${gateway}/${name}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    }),
  });

describe('MCP servers through the API', () => {
  it('registers a server that agents use through the gateway at once, then disables, enables and removes it', async () => {
    const t = owner.access_token;
    const created = await call(servers(), { token: t, body: { name: 'crm-tools', url: backend.url, description: 'CRM' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('etag')).toBe('"1"');
    expect(created.json).toMatchObject({
      name: 'crm-tools',
      organization_id: org,
      shared: false,
      enabled: true,
      mcp_path: 'mcp',
      authorization_server: null,
      oauth: null,
      gateway_url: `${gateway}/crm-tools/mcp`,
      tool_policy: { allow: [], deny: [] },
    });
    const id = created.json.id;
    expect((await call(servers(`/${id}`), { token: viewer.access_token })).json.name).toBe('crm-tools');
    expect((await call(servers(), { token: viewer.access_token })).json.mcp_servers.map((s: Json) => s.id)).toContain(id);

    const client = await eventually(
      () => connect('crm-tools', { 'x-api-key': ownKey }).catch(() => undefined),
      (c) => c !== undefined,
    );
    expect((await client!.listTools()).tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'whoami', 'count']));
    const echoed = await client!.callTool({ name: 'echo', arguments: { text: 'through the registry' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'through the registry' }]);
    await client!.close();
    // The backend heard the organization from the gateway, and never the platform's API key.
    const forwarded = backend.seen.filter((r) => r.url === '/mcp');
    expect(forwarded.at(-1)!.headers['x-gateway-organization']).toBe(org);
    expect(forwarded.every((r) => r.headers['x-api-key'] === undefined)).toBe(true);

    const disabled = await call(servers(`/${id}`), { token: t, method: 'PATCH', body: { enabled: false }, headers: { 'if-match': '"1"' } });
    expect(disabled.status).toBe(200);
    expect(disabled.json.enabled).toBe(false);
    const refused = await eventually(
      () => mcpPost('crm-tools', { 'x-api-key': ownKey }),
      (r) => r.status === 503,
    );
    expect(await refused.json()).toMatchObject({ error: 'server_disabled' });
    const stale = await call(servers(`/${id}`), { token: t, method: 'PATCH', body: { enabled: true }, headers: { 'if-match': '"1"' } });
    expect(stale.status).toBe(412);
    expect(stale.json.type).toBe(problemType(412, 'etag-mismatch'));
    expect((await call(servers(`/${id}`), { token: t, method: 'PATCH', body: { enabled: true } })).json.enabled).toBe(true);
    expect(
      (
        await eventually(
          () => mcpPost('crm-tools', { 'x-api-key': ownKey }),
          (r) => r.status === 200,
        )
      ).status,
    ).toBe(200);

    expect((await call(servers(`/${id}`), { token: t, method: 'DELETE' })).status).toBe(204);
    const gone = await eventually(
      () => mcpPost('crm-tools', { 'x-api-key': ownKey }),
      (r) => r.status === 404,
    );
    expect(await gone.json()).toMatchObject({ error: 'unknown_server' });
    expect((await call(servers(`/${id}`), { token: t })).status).toBe(404);
  });

  it('keeps an organization’s server to that organization at the proxy', async () => {
    await call(servers(), { token: owner.access_token, body: { name: 'private-tools', url: backend.url } });
    const own = await eventually(
      () => mcpPost('private-tools', { 'x-api-key': ownKey }),
      (r) => r.status === 200,
    );
    expect(own.status).toBe(200);
    const foreign = await mcpPost('private-tools', { 'x-api-key': otherKey });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ error: 'forbidden_organization' });
    const none = await mcpPost('private-tools');
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: 'organization_required' });
    const bad = await mcpPost('private-tools', { 'x-api-key': 'mg_k0000000000000000_not-a-real-key-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ error: 'invalid_api_key' });
    // Another organization cannot see, change or remove it either.
    const list = await call(`/organizations/${other.organizationId}/mcp-servers`, { token: other.access_token });
    expect(list.json.mcp_servers.map((s: Json) => s.name)).not.toContain('private-tools');
    expect((await call(servers(), { token: other.access_token })).status).toBe(403);
  });

  it('admits to a server authorized by the platform only tokens issued for it that name its organization', async () => {
    const auth = platform.ctx.config.publicUrls.auth;
    const resource = `${gateway}/org-platform/mcp`;
    const verifying = await startMcpBackend({
      mode: 'json',
      name: 'org-platform',
      issuer: auth,
      jwksUri: `${auth}/jwks`,
      audience: resource,
    });
    try {
      const created = await call(servers(), {
        token: owner.access_token,
        body: { name: 'org-platform', url: verifying.url, authorization_server: 'platform' },
      });
      expect(created.json.authorization_server).toBe('platform');
      const metadata = await eventually(
        () => fetch(`${gateway}/.well-known/oauth-protected-resource/org-platform/mcp`),
        (r) => r.status === 200,
      );
      expect(await metadata.json()).toMatchObject({ resource, authorization_servers: [auth] });
      const challenge = await mcpPost('org-platform');
      expect(challenge.status).toBe(401);
      expect(challenge.headers.get('www-authenticate')).toContain('/.well-known/oauth-protected-resource/org-platform/mcp');

      // A member of the organization, who also has an organization of their own, signs in twice:
      // picking the server's organization, then their own.
      const member = await joinAs(platform, org, 'member');
      const forOrg = await obtainAccessToken(platform, {
        resource,
        user: member.user,
        mode: 'sign-in',
        organizationId: org,
        client: member.client,
      });
      const own = await obtainAccessToken(platform, { resource, user: member.user, mode: 'sign-in', client: member.client });
      expect(own.organizationId).not.toBe(org);
      const client = await connect('org-platform', { authorization: `Bearer ${forOrg.access_token}` });
      const who = await client.callTool({ name: 'whoami', arguments: {} });
      expect(JSON.parse((who.content as { text: string }[])[0].text)).toMatchObject({ aud: resource });
      await client.close();
      const foreign = await mcpPost('org-platform', { authorization: `Bearer ${own.access_token}` });
      expect(foreign.status).toBe(403);
      expect(await foreign.json()).toMatchObject({ error: 'forbidden_organization' });
      // A token of the platform for another resource (the REST API) is not one for this server.
      const wrongAudience = await mcpPost('org-platform', { authorization: `Bearer ${owner.access_token}` });
      expect(wrongAudience.status).toBe(401);
      expect(wrongAudience.headers.get('www-authenticate')).toContain('error="invalid_token"');
      // The authorization server issues tokens only for servers it authorizes.
      await call(servers(), { token: owner.access_token, body: { name: 'not-platform', url: verifying.url } });
      await expect(
        obtainAccessToken(platform, { resource: `${gateway}/not-platform/mcp`, user: member.user, mode: 'sign-in', client: member.client }),
      ).rejects.toThrow();
    } finally {
      await verifying.close();
    }
  });

  it('keeps the upstream client secret write-only and sealed at rest', async () => {
    const secret = 'upstream-client-secret-that-must-never-show';
    const oauth = { issuer: 'https://idp.example.com', client_id: 'gw', client_secret: secret, scopes: ['openid', 'repo'] };
    const created = await call(servers(), { token: owner.access_token, body: { name: 'with-oauth', url: backend.url, oauth } });
    expect(created.status).toBe(201);
    expect(created.text).not.toContain(secret);
    expect(created.json.oauth).toMatchObject({
      client_id: 'gw',
      client_secret_set: true,
      token_endpoint_auth_method: 'client_secret_basic',
      scopes: ['openid', 'repo'],
    });
    const setAt = created.json.oauth.client_secret_set_at;
    expect(Date.parse(setAt)).toBeGreaterThan(0);
    const stored = await platform.ctx.stores.records.collection('mcp_servers').get(created.json.id);
    expect(JSON.stringify(stored)).not.toContain(secret);
    expect(JSON.stringify(stored)).toContain('kek1.');

    // A patch that leaves the secret out keeps it; null removes it (and then the method must be none).
    const renamed = await call(servers(`/${created.json.id}`), {
      token: owner.access_token,
      method: 'PATCH',
      body: { oauth: { client_id: 'gw2' } },
    });
    expect(renamed.json.oauth).toMatchObject({ client_id: 'gw2', client_secret_set: true, client_secret_set_at: setAt });
    const dropped = await call(servers(`/${created.json.id}`), {
      token: owner.access_token,
      method: 'PATCH',
      body: { oauth: { client_secret: null } },
    });
    expect(dropped.status).toBe(422);
    expect(dropped.json.errors).toEqual([expect.objectContaining({ loc: ['body', 'oauth', 'client_secret'] })]);
    const publicClient = await call(servers(`/${created.json.id}`), {
      token: owner.access_token,
      method: 'PATCH',
      body: { oauth: { client_secret: null, token_endpoint_auth_method: 'none' } },
    });
    expect(publicClient.json.oauth).toMatchObject({ client_secret_set: false, client_secret_set_at: null });
    // The gateway serves its facade metadata once it has the server.
    const metadata = await eventually(
      () => fetch(`${gateway}/.well-known/oauth-protected-resource/with-oauth/mcp`),
      (r) => r.status === 200,
    );
    expect(await metadata.json()).toMatchObject({ authorization_servers: [`${gateway}/with-oauth`], scopes_supported: ['openid', 'repo'] });
  });

  it('validates a server as the servers file does, and answers each mistake with its problem', async () => {
    const t = owner.access_token;
    const cases: [Json, (string | number)[]][] = [
      [{ name: 'health', url: backend.url }, ['body', 'name']],
      [{ name: 'a/b', url: backend.url }, ['body', 'name']],
      [{ name: 'ok-name', url: 'ftp://example.com' }, ['body', 'url']],
      [{ name: 'ok-name', url: 'https://user:pw@example.com' }, ['body', 'url']],
      [{ name: 'ok-name', url: backend.url, mcp_path: '../admin' }, ['body', 'mcp_path']],
      [{ name: 'ok-name', url: backend.url, oauth: { client_id: 'x' } }, ['body', 'oauth']],
      [
        { name: 'ok-name', url: backend.url, oauth: { issuer: 'https://idp.example', client_id: 'x', client_secret_env: 'X' } },
        ['body', 'oauth'],
      ],
      [
        { name: 'ok-name', url: backend.url, authorization_server: 'platform', oauth: { issuer: 'https://i.example', client_id: 'x' } },
        ['body'],
      ],
      [{ name: 'ok-name', url: backend.url, tool_policy: { allow: ['not a tool'] } }, ['body', 'tool_policy', 'allow', 0]],
      [{ name: 'ok-name', url: backend.url, local: true }, ['body']],
      [{ url: backend.url }, ['body', 'name']],
    ];
    for (const [body, loc] of cases) {
      const r = await call(servers(), { token: t, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.type).toBe(problemType(422));
      expect(
        r.json.errors.map((e: Json) => e.loc),
        JSON.stringify(body),
      ).toContainEqual(loc);
    }
    // `brain` is the servers file's (here the default registry's): the name is taken.
    const clash = await call(servers(), { token: t, body: { name: 'brain', url: backend.url } });
    expect(clash.status).toBe(409);
    await call(servers(), { token: t, body: { name: 'taken', url: backend.url } });
    expect(
      (
        await call(`/organizations/${other.organizationId}/mcp-servers`, {
          token: other.access_token,
          body: { name: 'taken', url: backend.url },
        })
      ).status,
    ).toBe(409);
    const created = await call(servers(), { token: t, body: { name: 'fixed-name', url: backend.url } });
    const rename = await call(servers(`/${created.json.id}`), { token: t, method: 'PATCH', body: { name: 'other-name' } });
    expect(rename.status).toBe(422);
    expect(rename.json.errors[0].loc).toEqual(['body', 'name']);
    expect((await call(servers(), { token: t, body: { name: 'shared-one', url: backend.url, shared: true } })).status).toBe(403);
    expect((await call(servers(), { token: viewer.access_token, body: { name: 'by-viewer', url: backend.url } })).status).toBe(403);
    expect((await call(servers('/mcs_nothing'), { token: t })).status).toBe(404);
    expect((await call(servers('/not-an-id'), { token: t })).status).toBe(422);
  });

  it('refuses backends on private addresses unless the operator allows them, when saved and when connecting', async () => {
    const config = platform.ctx.config.gateway;
    config.allowPrivateBackends = false;
    try {
      const r = await call(servers(), { token: owner.access_token, body: { name: 'internal', url: 'http://localhost:50053/' } });
      expect(r.status).toBe(422);
      expect(r.json.errors[0]).toMatchObject({ loc: ['body', 'url'] });
      expect(r.json.errors[0].msg).toMatch(/private address.*GATEWAY_ALLOW_PRIVATE_BACKENDS/);
      // A name that resolves to a private address only later (as with DNS rebinding) is refused
      // when the gateway connects: stored here directly, as the API would have accepted it then.
      await platform.ctx.clients.mcpServers.createMcpServer({
        organizationId: org,
        server: { name: 'rebound', url: backend.url.replace('127.0.0.1', 'localhost'), auth: { kind: 1 }, enabled: true },
      });
      const proxied = await eventually(
        () => mcpPost('rebound', { 'x-api-key': ownKey }),
        (res) => res.status !== 404,
      );
      expect(proxied.status).toBe(502);
    } finally {
      config.allowPrivateBackends = true;
    }
  });

  it('follows the API conventions: pages oldest first, replays a retried create once, audits each change', async () => {
    const t = owner.access_token;
    const retry = { 'idempotency-key': 'create-paged-0' };
    const first = await call(servers(), { token: t, body: { name: 'paged-0', url: backend.url }, headers: retry });
    const again = await call(servers(), { token: t, body: { name: 'paged-0', url: backend.url }, headers: retry });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.id).toBe(first.json.id);
    for (const n of [1, 2]) expect((await call(servers(), { token: t, body: { name: `paged-${n}`, url: backend.url } })).status).toBe(201);

    const seen: string[] = [];
    let token = '';
    do {
      const page = await call(servers(`?page_size=2${token ? `&page_token=${token}` : ''}`), { token: t });
      expect(page.status).toBe(200);
      expect(page.json.mcp_servers.length).toBeLessThanOrEqual(2);
      seen.push(...page.json.mcp_servers.map((s: Json) => s.name));
      token = page.json.next_page_token ?? '';
    } while (token);
    const paged = seen.filter((n) => n.startsWith('paged-'));
    expect(paged).toEqual(['paged-0', 'paged-1', 'paged-2']);
    expect(new Set(seen).size).toBe(seen.length);

    await call(servers(`/${first.json.id}`), { token: t, method: 'PATCH', body: { enabled: false } });
    await call(servers(`/${first.json.id}`), { token: t, method: 'DELETE' });
    for (const action of ['createMcpServer', 'updateMcpServer', 'deleteMcpServer']) {
      const events = await call(`/organizations/${org}/audit-events?action=${action}`, { token: t });
      const targets = events.json.events.filter((e: Json) => e.outcome === 'success').map((e: Json) => e.target);
      expect(targets.some((target: string) => target.includes(action === 'createMcpServer' ? 'mcp-servers' : first.json.id))).toBe(true);
    }
  });

  it('stops serving a deleted organization’s servers at once and frees their names', async () => {
    const doomed = await obtainAccessToken(platform, { resource: api });
    const doomedOrg = doomed.organizationId;
    const doomedKey = (await call(`/organizations/${doomedOrg}/api-keys`, { token: doomed.access_token, body: { name: 'agent' } })).json
      .secret;
    const made = await call(`/organizations/${doomedOrg}/mcp-servers`, {
      token: doomed.access_token,
      body: { name: 'doomed', url: backend.url },
    });
    expect(made.status).toBe(201);
    expect(
      (
        await eventually(
          () => mcpPost('doomed', { 'x-api-key': doomedKey }),
          (r) => r.status === 200,
        )
      ).status,
    ).toBe(200);

    const slug = (await call(`/organizations/${doomedOrg}`, { token: doomed.access_token })).json.slug;
    expect((await call(`/organizations/${doomedOrg}?confirm=${slug}`, { token: doomed.access_token, method: 'DELETE' })).status).toBe(202);
    // The gateway forgets the server within a poll (until then, no credential of a deleted organization works: 401).
    expect(
      (
        await eventually(
          () => mcpPost('doomed'),
          (r) => r.status === 404,
        )
      ).status,
    ).toBe(404);
    const reused = await call(servers(), { token: owner.access_token, body: { name: 'doomed', url: backend.url } });
    expect(reused.status).toBe(201);
  });
});
