// Integrations end to end: a user lists the catalog, installs a server behind an upstream identity
// provider (an oidc-provider IdP), tests the connection through the gateway (the authorization
// error in plain words, then the tools once it has a token obtained through the gateway's OAuth
// facade), restricts its tools, and an agent (the MCP SDK client) uses it with the
// organization's API key beside the upstream token. Failures of the test read as such.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpBackend, type McpBackend } from '../support/gateway-backends.ts';
import { obtainTokens } from '../support/gateway-flow.ts';
import { startTestIdp, type TestIdp } from '../support/gateway-idp.ts';
import { joinAs } from '../support/members.ts';
import { obtainAccessToken, reservePorts, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let gateway: string;
let idp: TestIdp;
let crm: McpBackend;
let plain: McpBackend;
let owner: ObtainedToken;
let org: string;
let key: string;
const call = restClient(() => platform.ctx.config.publicUrls.api);
const path = (p: string) => `/organizations/${org}${p}`;

beforeAll(async () => {
  const [gatewayPort] = await reservePorts(1);
  gateway = `http://127.0.0.1:${gatewayPort}`;
  idp = await startTestIdp({
    clients: [
      { clientId: 'gw-crm', clientSecret: 'crm-secret', redirectUris: [`${gateway}/crm/oauth/callback`], defaultResource: 'urn:test:crm' },
    ],
  });
  crm = await startMcpBackend({ mode: 'sse', name: 'crm', issuer: idp.issuer, jwksUri: idp.jwksUri, audience: 'urn:test:crm' });
  plain = await startMcpBackend({ mode: 'json', name: 'plain' });
  platform = await startOAuthTestPlatform({
    GATEWAY_PORT: String(gatewayPort),
    PUBLIC_GATEWAY_URL: gateway,
    GATEWAY_REGISTRY_POLL_MS: '100',
    GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true',
  });
  owner = await obtainAccessToken(platform, { resource: platform.ctx.config.publicUrls.api });
  org = owner.organizationId;
  key = (await call(path('/api-keys'), { token: owner.access_token, body: { name: 'agent' } })).json.secret;
}, 240_000);

afterAll(async () => {
  await platform?.stop();
  await crm?.close();
  await plain?.close();
  await idp?.close();
});

const t = () => owner.access_token;

describe('integrations', () => {
  it('lists the catalog a page at a time', async () => {
    const all = await call(path('/integrations'), { token: t() });
    expect(all.status).toBe(200);
    const names = all.json.integrations.map((i: Json) => i.name);
    expect(names).toEqual(expect.arrayContaining(['github', 'linear', 'sentry', 'oidc', 'platform-tokens', 'plain']));
    const github = all.json.integrations.find((i: Json) => i.name === 'github');
    expect(github).toMatchObject({ authorization: 'upstream_oauth', scopes: ['repo', 'read:org', 'read:user'] });
    expect(github.inputs.map((i: Json) => i.name)).toEqual(['client_id', 'client_secret']);
    const first = await call(path('/integrations?page_size=4'), { token: t() });
    const second = await call(path(`/integrations?page_size=4&page_token=${first.json.next_page_token}`), { token: t() });
    expect([...first.json.integrations, ...second.json.integrations].map((i: Json) => i.name)).toEqual(names);
    expect(second.json.next_page_token).toBeNull();
    const bad = await call(path('/integrations?page_token=bm9wZQ'), { token: t() });
    expect(bad.status).toBe(422);
    expect(bad.json.errors[0].loc).toEqual(['query', 'page_token']);
    const viewer = await joinAs(platform, org, 'viewer');
    expect((await call(path('/integrations'), { token: viewer.access_token })).status).toBe(200);
  });

  it('installs a server behind an identity provider, tests it, restricts its tools, and an agent uses it', async () => {
    const installed = await call(path('/integrations/oidc/install'), {
      token: t(),
      body: {
        name: 'crm',
        inputs: { url: crm.url, issuer: idp.issuer, client_id: 'gw-crm', client_secret: 'crm-secret', resource: 'urn:test:crm' },
      },
    });
    expect(installed.status).toBe(201);
    expect(installed.text).not.toContain('crm-secret');
    expect(installed.json).toMatchObject({ name: 'crm', integration: 'oidc', oauth: { issuer: idp.issuer, client_secret_set: true } });
    const id = installed.json.id;

    // Without a token: the authorization error, in plain words.
    const refused = await call(path(`/mcp-servers/${id}/test`), { token: t(), method: 'POST' });
    expect(refused.status).toBe(200);
    expect(refused.json).toMatchObject({ ok: false, stage: 'initialize', status: 401, tools: [] });
    expect(refused.json.error).toMatch(/^The server asks for authorization.*access_token/);

    // With a token obtained through the gateway's facade in front of the IdP.
    const tokens = await obtainTokens(gateway, 'crm');
    const passed = await call(path(`/mcp-servers/${id}/test`), { token: t(), body: { access_token: tokens.access_token } });
    expect(passed.json).toMatchObject({ ok: true, stage: null, status: null, error: null, server_info: { name: 'test-crm' } });
    expect(passed.json.tools.map((x: Json) => x.name).sort()).toEqual(['count', 'echo', 'whoami']);
    expect(passed.json.latency_ms.initialize).toBeGreaterThan(0);
    expect(passed.json.latency_ms.tools_list).toBeGreaterThan(0);

    await call(path(`/mcp-servers/${id}`), { token: t(), method: 'PATCH', body: { tool_policy: { allow: ['echo', 'whoami'] } } });
    const until = Date.now() + 5_000;
    let restricted = await call(path(`/mcp-servers/${id}/test`), { token: t(), body: { access_token: tokens.access_token } });
    while (restricted.json.tools.length !== 2 && Date.now() < until) {
      restricted = await call(path(`/mcp-servers/${id}/test`), { token: t(), body: { access_token: tokens.access_token } });
    }
    expect(restricted.json.tools.map((x: Json) => x.name).sort()).toEqual(['echo', 'whoami']);

    const agent = new Client({ name: 'agent', version: '1.0.0' });
    const headers = { authorization: `Bearer ${tokens.access_token}`, 'x-api-key': key };
    await agent.connect(new StreamableHTTPClientTransport(new URL(`${gateway}/crm/mcp`), { requestInit: { headers } }));
    const who = await agent.callTool({ name: 'whoami', arguments: {} });
    expect(JSON.parse((who.content as { text: string }[])[0].text)).toMatchObject({ backend: 'crm', aud: 'urn:test:crm' });
    await expect(agent.callTool({ name: 'count', arguments: { n: 1 } })).rejects.toThrow(/tool policy of server crm/);
    await agent.close();
  });

  it('reports a disabled server, an unreachable backend and a server that is not MCP in plain words', async () => {
    const server = (
      await call(path('/integrations/plain/install'), { token: t(), body: { name: 'plain-one', inputs: { url: plain.url } } })
    ).json;
    const ok = await call(path(`/mcp-servers/${server.id}/test`), { token: t(), method: 'POST' });
    expect(ok.json).toMatchObject({ ok: true, server_info: { name: 'test-plain' } });

    await call(path(`/mcp-servers/${server.id}`), { token: t(), method: 'PATCH', body: { enabled: false } });
    const until = Date.now() + 5_000;
    let disabled = await call(path(`/mcp-servers/${server.id}/test`), { token: t(), method: 'POST' });
    while (disabled.json.ok && Date.now() < until)
      disabled = await call(path(`/mcp-servers/${server.id}/test`), { token: t(), method: 'POST' });
    expect(disabled.json).toMatchObject({ ok: false, status: 503, error: 'The server is disabled: enable it first.' });

    const [closed] = await reservePorts(1);
    const down = (
      await call(path('/integrations/plain/install'), {
        token: t(),
        body: { name: 'plain-down', inputs: { url: `http://127.0.0.1:${closed}` } },
      })
    ).json;
    const unreachable = await call(path(`/mcp-servers/${down.id}/test`), { token: t(), method: 'POST' });
    expect(unreachable.json).toMatchObject({ ok: false, stage: 'initialize', status: 502 });
    expect(unreachable.json.error).toContain(`could not reach the server at http://127.0.0.1:${closed}`);

    const notMcp = (
      await call(path('/integrations/plain/install'), { token: t(), body: { name: 'not-mcp', inputs: { url: `${plain.url}/elsewhere` } } })
    ).json;
    const wrong = await call(path(`/mcp-servers/${notMcp.id}/test`), { token: t(), method: 'POST' });
    expect(wrong.json).toMatchObject({ ok: false, status: 404, error: `The server has no MCP endpoint at ${gateway}/not-mcp/mcp (404).` });
  });

  it('answers bad installs with their problem', async () => {
    const missing = await call(path('/integrations/oidc/install'), { token: t(), body: { inputs: { url: plain.url } } });
    expect(missing.status).toBe(422);
    expect(missing.json.errors.map((e: Json) => e.loc)).toEqual(
      expect.arrayContaining([
        ['body', 'inputs', 'issuer'],
        ['body', 'inputs', 'client_id'],
        ['body', 'inputs', 'client_secret'],
      ]),
    );
    const unexpected = await call(path('/integrations/plain/install'), {
      token: t(),
      body: { inputs: { url: plain.url, issuer: idp.issuer } },
    });
    expect(unexpected.json.errors[0].loc).toEqual(['body', 'inputs', 'issuer']);
    const badUrl = await call(path('/integrations/plain/install'), { token: t(), body: { inputs: { url: 'ftp://x' } } });
    expect(badUrl.json.errors[0].loc).toEqual(['body', 'inputs', 'url']);
    expect((await call(path('/integrations/nothing/install'), { token: t(), body: {} })).status).toBe(404);
    expect((await call(path('/integrations/Bad_Name/install'), { token: t(), body: {} })).status).toBe(422);
    const member = await joinAs(platform, org, 'member');
    expect(
      (await call(path('/integrations/plain/install'), { token: member.access_token, body: { inputs: { url: plain.url } } })).status,
    ).toBe(403);
    expect((await call(path('/mcp-servers/mcs_nothing/test'), { token: member.access_token, method: 'POST' })).status).toBe(404);
    const badTest = await call(path('/mcp-servers/mcs_nothing/test'), { token: t(), body: { access_token: '' } });
    expect(badTest.status).toBe(422);
  });
});
