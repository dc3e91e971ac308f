// Discovery metadata and the stateless OAuth facade over real HTTP, against an oidc-provider
// upstream: every form of metadata, registration and its redirect-URI policy, the consent page,
// browser binding, state and code handling, the token endpoint, and malformed input everywhere.
import { discoverAuthorizationServerMetadata, discoverOAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewaySurface } from '../../edge/gateway/index.ts';
import { createFacadeCrypto } from '../../edge/gateway/oauth/tokens.ts';
import { startListener, type Listener } from '../../edge/http/listener.ts';
import { createBrowser, parseConsentPage, signIn } from '../support/gateway-browser.ts';
import { SCOPES, STATE_SECRET, startGatewayEnv, type GatewayEnv } from '../support/gateway-env.ts';
import { authorizeUrl, pkce, postForm, rawRequest, register, signInTo } from '../support/gateway-flow.ts';

let env: GatewayEnv;
let base: string;
const crypto = createFacadeCrypto([STATE_SECRET]);
const REDIRECT = 'http://127.0.0.1:45888/callback';

beforeAll(async () => {
  env = await startGatewayEnv();
  base = env.base;
}, 120_000);

afterAll(async () => {
  await env?.stop();
});

async function getJson(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, any>; headers: Headers }> {
  const res = await fetch(`${base}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), headers: res.headers };
}

function noEmptyArrays(doc: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(doc)) {
    if (Array.isArray(v)) expect(v.length, k).toBeGreaterThan(0);
  }
}

describe('discovery', () => {
  it('publishes protected-resource metadata whose resource is the URL the client used', async () => {
    const cases: [string, string][] = [
      ['/.well-known/oauth-protected-resource', `${base}/alpha/mcp`], // root: the default server
      ['/.well-known/oauth-protected-resource/alpha/mcp', `${base}/alpha/mcp`],
      ['/.well-known/oauth-protected-resource/alpha', `${base}/alpha`],
      ['/.well-known/oauth-protected-resource/beta/mcp', `${base}/beta/mcp`],
      ['/alpha/.well-known/oauth-protected-resource', `${base}/alpha`],
    ];
    for (const [path, resource] of cases) {
      const { status, body, headers } = await getJson(path);
      expect(status, path).toBe(200);
      expect(headers.get('content-type')).toBe('application/json');
      const server = new URL(resource).pathname.split('/')[1];
      expect(body, path).toEqual({
        resource,
        authorization_servers: [`${base}/${server}`],
        bearer_methods_supported: ['header'],
        resource_name: server,
        scopes_supported: SCOPES,
      });
    }
  });

  it('keeps a trailing slash of the resource path, as the client wrote it', async () => {
    const { body } = await getJson('/.well-known/oauth-protected-resource/alpha/mcp/');
    expect(body.resource).toBe(`${base}/alpha/mcp/`);
  });

  it('publishes RFC 8414 metadata with a per-server issuer and the gateway endpoints', async () => {
    for (const path of [
      '/alpha/.well-known/oauth-authorization-server',
      '/.well-known/oauth-authorization-server/alpha',
      '/.well-known/oauth-authorization-server/alpha/mcp', // rule 1: everything after the server is stripped
    ]) {
      const { status, body } = await getJson(path);
      expect(status, path).toBe(200);
      expect(body).toMatchObject({
        issuer: `${base}/alpha`,
        authorization_endpoint: `${base}/alpha/oauth/authorize`,
        token_endpoint: `${base}/alpha/oauth/token`,
        registration_endpoint: `${base}/alpha/oauth/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['none'],
        code_challenge_methods_supported: ['S256'],
        scopes_supported: SCOPES,
        authorization_response_iss_parameter_supported: true,
      });
      noEmptyArrays(body);
    }
  });

  it('publishes the OpenID discovery alias in both forms, naming the upstream keys', async () => {
    for (const path of [
      '/alpha/.well-known/openid-configuration',
      '/.well-known/openid-configuration/alpha',
      '/.well-known/openid-configuration/alpha/mcp',
    ]) {
      const { status, body } = await getJson(path);
      expect(status, path).toBe(200);
      expect(body.issuer).toBe(`${base}/alpha`);
      expect(body.jwks_uri).toBe(env.idp.jwksUri);
      expect(body.subject_types_supported).toEqual(['public']);
      expect(body.code_challenge_methods_supported).toEqual(['S256']);
      noEmptyArrays(body);
    }
  });

  it('publishes root forms for the default server, with root endpoints and issuer', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const { status, body } = await getJson(path);
      expect(status).toBe(200);
      expect(body).toMatchObject({
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        registration_endpoint: `${base}/register`,
      });
    }
  });

  it('satisfies the MCP SDK discovery (issuer equals the URL it derived, resource accepted)', async () => {
    const prm = await discoverOAuthProtectedResourceMetadata(`${base}/alpha/mcp`);
    expect(prm.resource).toBe(`${base}/alpha/mcp`);
    const derived = prm.authorization_servers![0];
    const as = await discoverAuthorizationServerMetadata(derived);
    expect(as?.issuer).toBe(derived);
    const root = await discoverAuthorizationServerMetadata(base);
    expect(root?.issuer).toBe(base);
  });

  it('builds every URL from the configured public URL, never from Host or X-Forwarded-Host', async () => {
    const res = await rawRequest(base, 'GET', '/.well-known/oauth-authorization-server/alpha', {
      host: 'evil.example',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
    });
    const body = JSON.parse(res.body);
    expect(body.issuer).toBe(`${base}/alpha`);
    expect(JSON.stringify(body)).not.toContain('evil.example');
    const prm = JSON.parse(
      (await rawRequest(base, 'GET', '/.well-known/oauth-protected-resource/alpha/mcp', { host: 'evil.example' })).body,
    );
    expect(prm.resource).toBe(`${base}/alpha/mcp`);
  });

  it('answers unknown well-known paths, servers and servers without OAuth with a JSON 404', async () => {
    for (const path of [
      '/.well-known/nothing-here',
      '/.well-known/oauth-protected-resource/nosuch/mcp',
      '/.well-known/oauth-authorization-server/nosuch',
      '/nosuch/.well-known/openid-configuration',
      '/alpha/.well-known/unknown',
      '/open/.well-known/oauth-protected-resource',
      '/.well-known/oauth-authorization-server/open',
    ]) {
      const { status, body, headers } = await getJson(path);
      expect(status, path).toBe(404);
      expect(headers.get('content-type')).toBe('application/json');
      expect(typeof body.error).toBe('string');
    }
  });

  it('answers a malformed server name or path with a 422', async () => {
    for (const path of [
      '/bad%20name/.well-known/oauth-protected-resource',
      '/bad%24/.well-known/oauth-authorization-server',
      '/x%2Fy/.well-known/openid-configuration',
      '/.well-known/oauth-protected-resource/bad%20name/mcp',
      '/.well-known/oauth-authorization-server/b%3Cad',
      '/.well-known/openid-configuration/%20',
      '/.well-known/oauth-protected-resource/alpha/%2e%2e/x',
      '/.well-known/oauth-protected-resource/alpha/a%20b',
      '/.well-known/oauth-protected-resource/',
    ]) {
      const res = await rawRequest(base, 'GET', path);
      expect(res.status, path).toBe(422);
      const body = JSON.parse(res.body);
      expect(body.detail[0].loc[0], path).toBe('path');
    }
  });

  it('allows browser clients to read the metadata', async () => {
    const { headers } = await getJson('/.well-known/oauth-protected-resource/alpha/mcp', { origin: 'http://localhost:6274' });
    expect(headers.get('access-control-allow-origin')).toBe('*');
    const preflight = await fetch(`${base}/.well-known/oauth-authorization-server/alpha`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:6274',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('mcp-protocol-version');
  });
});

describe('registration', () => {
  const post = (path: string, body: string, type = 'application/json') =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': type }, body });

  it("answers the server's upstream client_id, public, with refresh_token, and stores nothing", async () => {
    const res = await post(
      '/alpha/oauth/register',
      JSON.stringify({
        redirect_uris: [REDIRECT],
        client_name: 'Claude',
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
        software_id: 'claude-desktop',
        software_version: '1.0',
      }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      client_id: 'gw-alpha',
      client_id_issued_at: expect.any(Number),
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      client_name: 'Claude',
      software_id: 'claude-desktop',
    });
    expect(JSON.stringify(body)).not.toContain('secret');
    const again = (await (
      await post('/beta/oauth/register', JSON.stringify({ redirect_uris: ['https://claude.ai/api/mcp/auth_callback'] }))
    ).json()) as Record<string, unknown>;
    expect(again.client_id).toBe('gw-beta');
    expect(again.application_type).toBe('web');
    expect(again).not.toHaveProperty('client_secret');
  });

  it.each([
    'https://claude.ai/api/mcp/auth_callback',
    'https://claude.com/api/mcp/auth_callback',
    'http://127.0.0.1/',
    'http://127.0.0.1:33418/',
    'https://vscode.dev/redirect',
    'http://localhost:51234/callback',
    'http://[::1]:8000/cb',
    'cursor://anysphere.cursor-mcp/oauth/callback',
    'com.example.app:/oauth2redirect',
    'http://localhost:6274/oauth/callback',
    'https://app.example.com/cb?tenant=1',
  ])('accepts the redirect URI %s', async (uri) => {
    const res = await post('/alpha/oauth/register', JSON.stringify({ redirect_uris: [uri] }));
    expect(res.status).toBe(200);
  });

  it.each([
    'javascript:alert(1)',
    'JavaScript://%0aalert(1)',
    'data:text/html,<script>alert(1)</script>',
    'file:///etc/passwd',
    'vbscript:msgbox',
    'intent://callback#Intent;scheme=app;end',
    'ws://127.0.0.1:9000/cb',
    'chrome-extension://abcdefghijklmnop/cb.html',
    'safari-web-extension://ABCDEF-1234/cb.html',
    'ms-browser-extension://abc/cb.html',
    'extension://abcdefghijklmnop/cb.html',
    'edge://settings',
    'opera://settings',
    'android-app://com.example.app/https/example.com/cb',
    'market://details?id=com.example.app',
    'vscode://vscode.github-authentication/did-authenticate',
    'myapp://callback',
    'http://example.com/callback',
    'http://127.0.0.1.evil.com/cb',
    'https://user:pass@client.example/cb',
    'https://client.example@evil.example/cb',
    'https://client.example/cb#fragment',
    'https://client.example\\@evil.example/',
    'not a uri',
    '/relative/callback',
    '',
  ])('refuses the redirect URI %j with invalid_redirect_uri', async (uri) => {
    const res = await post('/alpha/oauth/register', JSON.stringify({ redirect_uris: ['https://ok.example/cb', uri] }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.error).toBe('invalid_redirect_uri');
    expect(typeof body.error_description).toBe('string');
  });

  it("refuses the gateway's own callback and origin as a redirect URI", async () => {
    for (const uri of [
      `${base}/alpha/oauth/callback`,
      `${base}/beta/oauth/callback`,
      `${base}/anything`,
      `http://localhost:${new URL(base).port}/alpha/oauth/callback`,
      // The same host spelt fully qualified (a trailing dot) is still the gateway.
      `http://localhost.:${new URL(base).port}/alpha/oauth/callback`,
    ]) {
      const res = await post('/alpha/oauth/register', JSON.stringify({ redirect_uris: [uri] }));
      expect(res.status, uri).toBe(400);
      expect(((await res.json()) as Record<string, unknown>).error).toBe('invalid_redirect_uri');
    }
  });

  it('answers malformed bodies with FastAPI-shaped 422s', async () => {
    const detail = async (body: string, type?: string) => {
      const res = await post('/alpha/oauth/register', body, type);
      expect(res.status).toBe(422);
      return ((await res.json()) as { detail: unknown[] }).detail;
    };
    expect(await detail('')).toEqual([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
    expect(await detail('{"redirect_uris": [')).toEqual([
      { type: 'json_invalid', loc: ['body', 19], msg: 'JSON decode error', input: {}, ctx: { error: 'Expecting value' } },
    ]);
    expect(await detail('[1]')).toEqual([
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: [1],
      },
    ]);
    expect(await detail('{}')).toEqual([{ type: 'missing', loc: ['body', 'redirect_uris'], msg: 'Field required', input: {} }]);
    expect(await detail('{"redirect_uris": []}')).toEqual([
      {
        type: 'too_short',
        loc: ['body', 'redirect_uris'],
        msg: 'List should have at least 1 item after validation, not 0',
        input: [],
        ctx: { field_type: 'List', min_length: 1, actual_length: 0 },
      },
    ]);
    expect(await detail('{"redirect_uris": "https://a.example/cb"}')).toEqual([
      { type: 'list_type', loc: ['body', 'redirect_uris'], msg: 'Input should be a valid list', input: 'https://a.example/cb' },
    ]);
    expect(await detail('{"redirect_uris": [1, "https://a.example/cb"], "client_name": 5, "grant_types": "code"}')).toEqual([
      { type: 'string_type', loc: ['body', 'redirect_uris', 0], msg: 'Input should be a valid string', input: 1 },
      { type: 'string_type', loc: ['body', 'client_name'], msg: 'Input should be a valid string', input: 5 },
      { type: 'list_type', loc: ['body', 'grant_types'], msg: 'Input should be a valid list', input: 'code' },
    ]);
    expect(await detail('redirect_uris=x', 'application/x-www-form-urlencoded')).toMatchObject([{ type: 'json_invalid' }]);
  });

  it('accepts nulls for the optional fields, and ignores unknown ones', async () => {
    const res = await post(
      '/alpha/oauth/register',
      JSON.stringify({
        redirect_uris: [REDIRECT],
        client_name: null,
        scope: null,
        grant_types: null,
        logo_uri: 'https://x.example/logo.png',
      }),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty('client_name');
    expect(body).not.toHaveProperty('logo_uri');
  });

  it('answers unknown servers, servers without the facade, and malformed names', async () => {
    const body = JSON.stringify({ redirect_uris: [REDIRECT] });
    expect((await post('/nosuch/oauth/register', body)).status).toBe(404);
    const open = await post('/open/oauth/register', body);
    expect(open.status).toBe(404);
    expect(await open.json()).toMatchObject({ error: 'no_oauth_facade' });
    // The Brain, authorized by the platform, has the facade too (test/e2e/brain-facade.test.ts).
    const brain = await post('/brain/oauth/register', body);
    expect(brain.status).toBe(200);
    expect(await brain.json()).toMatchObject({ client_id: 'mindgate-gateway-brain', token_endpoint_auth_method: 'none' });
    // With a client_name, the Brain's facade signs it into the client_id (it is carried to {auth_url}).
    const named = (await (
      await post('/brain/oauth/register', JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'Claude' }))
    ).json()) as {
      client_id: string;
    };
    expect(named.client_id).toMatch(/^mindgate-gateway-brain\.[\w-]+\.[\w-]+\.[\w-]+$/);
    const bad = await post('/bad%20name/oauth/register', body);
    expect(bad.status).toBe(422);
    expect((await post('/alpha/oauth/register', 'x'.repeat(70_000))).status).toBe(413);
    const get = await fetch(`${base}/alpha/oauth/register`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });
});

describe('authorize and consent', () => {
  const p = pkce();
  const url = (overrides: Record<string, string | undefined> = {}, server = 'alpha') => {
    const u = new URL(
      authorizeUrl(`${base}/${server}/oauth/authorize`, {
        clientId: 'gw-alpha',
        redirectUri: REDIRECT,
        challenge: p.challenge,
        state: 'xyz',
      }),
    );
    for (const [k, v] of Object.entries(overrides)) {
      if (v === undefined) u.searchParams.delete(k);
      else u.searchParams.set(k, v);
    }
    return u.href;
  };

  it('shows a consent page naming the client and the redirect host, protected against framing', async () => {
    const browser = createBrowser();
    const page = await browser.get(url({ redirect_uri: 'https://claude.ai/api/mcp/auth_callback' }));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('claude.ai');
    expect(page.text).toContain('gw-alpha');
    expect(page.text).toContain('<strong>alpha</strong>');
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
    const cookie = page.headers.getSetCookie()[0];
    expect(cookie).toMatch(/^__Host-mindgate-gw-binding=[A-Za-z0-9_-]+; /);
    for (const attr of ['Path=/', 'Secure', 'HttpOnly', 'SameSite=Lax']) expect(cookie).toContain(attr);
    expect(cookie).not.toMatch(/Domain=/i);
  });

  it('escapes what it shows', async () => {
    const page = await createBrowser().get(url({ redirect_uri: 'https://a.example/cb?x=<script>alert(1)</script>' }));
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<script>alert(1)');
  });

  it.each([
    [{ client_id: 'someone-else' }, 'invalid_client'],
    [{ client_id: 'gw-beta' }, 'invalid_client'],
    [{ redirect_uri: 'javascript:alert(1)' }, 'invalid_request'],
    [{ redirect_uri: 'http://evil.example/cb' }, 'invalid_request'],
    [{ redirect_uri: '<base>/alpha/oauth/callback' }, 'invalid_request'],
    [{ redirect_uri: 'safari-web-extension://ABCDEF-1234/cb.html' }, 'invalid_request'],
    [{ redirect_uri: 'market://details?id=com.example.app' }, 'invalid_request'],
    // The gateway's own host spelt fully qualified.
    [{ redirect_uri: '<fqdn-base>/alpha/oauth/callback' }, 'invalid_request'],
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ code_challenge_method: undefined }, 'invalid_request'],
    [{ code_challenge: 'short' }, 'invalid_request'],
  ])('refuses %j with a 400 page and never redirects', async (overrides, error) => {
    const resolved = Object.fromEntries(
      Object.entries(overrides).map(([k, v]) => [
        k,
        v?.replace('<fqdn-base>', base.replace('127.0.0.1', 'localhost.')).replace('<base>', base),
      ]),
    );
    const res = await fetch(url(resolved), { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain(error);
  });

  it('answers missing parameters with a 422 listing each one', async () => {
    const res = await fetch(`${base}/alpha/oauth/authorize?response_type=code`);
    expect(res.status).toBe(422);
    expect(((await res.json()) as { detail: unknown[] }).detail).toEqual([
      { type: 'missing', loc: ['query', 'client_id'], msg: 'Field required', input: null },
      { type: 'missing', loc: ['query', 'redirect_uri'], msg: 'Field required', input: null },
      { type: 'missing', loc: ['query', 'code_challenge'], msg: 'Field required', input: null },
    ]);
    const noChallenge = await fetch(url({ code_challenge: undefined }));
    expect(noChallenge.status).toBe(422);
    expect((await fetch(`${base}/nosuch/oauth/authorize`)).status).toBe(404);
    expect((await fetch(`${base}/bad%20x/oauth/authorize`)).status).toBe(422);
    expect((await fetch(`${base}/open/oauth/authorize`)).status).toBe(404);
  });

  it('sends an approved request upstream with the gateway client, callback, PKCE and state', async () => {
    const browser = createBrowser();
    const page = await browser.get(url({ resource: `${base}/beta/mcp` }, 'beta').replace('gw-alpha', 'gw-beta'));
    const { ticket, action } = parseConsentPage(page.text);
    expect(action).toBe(`${base}/beta/oauth/authorize`);
    const answer = await browser.postForm(action, { ticket, decision: 'approve' });
    expect(answer.status).toBe(302);
    const upstream = new URL(answer.location!);
    expect(`${upstream.origin}${upstream.pathname}`).toBe(`${env.idp.issuer}/auth`);
    expect(upstream.searchParams.get('client_id')).toBe('gw-beta');
    expect(upstream.searchParams.get('redirect_uri')).toBe(`${base}/beta/oauth/callback`);
    expect(upstream.searchParams.get('code_challenge_method')).toBe('S256');
    expect(upstream.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(upstream.searchParams.get('code_challenge')).not.toBe(p.challenge);
    expect(upstream.searchParams.get('scope')).toBe('openid offline_access mcp');
    // The client's resource names the gateway; it is not forwarded upstream.
    expect(upstream.searchParams.has('resource')).toBe(false);
    const state = upstream.searchParams.get('state')!;
    expect(state).not.toContain('xyz');
  });

  it('limits the upstream scopes to the ones the server offers', async () => {
    const browser = createBrowser();
    const page = await browser.get(url({ scope: 'mcp admin:all openid' }));
    const { ticket, action } = parseConsentPage(page.text);
    const answer = await browser.postForm(action, { ticket, decision: 'approve' });
    expect(new URL(answer.location!).searchParams.get('scope')).toBe('mcp openid');
  });

  it('redirects a denial to the client with access_denied, its state and the issuer', async () => {
    const browser = createBrowser();
    const page = await browser.get(url());
    const { ticket, action } = parseConsentPage(page.text);
    const answer = await browser.postForm(action, { ticket, decision: 'deny' });
    expect(answer.status).toBe(302);
    const back = new URL(answer.location!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The user denied the request.',
      state: 'xyz',
      iss: `${base}/alpha`,
    });
  });

  it('refuses a consent posted without the browser cookie (cross-site) or from another browser', async () => {
    const browser = createBrowser();
    const page = await browser.get(url());
    const { ticket, action } = parseConsentPage(page.text);
    const bare = await fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ticket, decision: 'approve' }),
      redirect: 'manual',
    });
    expect(bare.status).toBe(400);
    expect(bare.headers.get('location')).toBeNull();
    const other = createBrowser();
    await other.get(url());
    const stolen = await other.postForm(action, { ticket, decision: 'approve' });
    expect(stolen.status).toBe(400);
    expect(stolen.location).toBeUndefined();
  });

  it('refuses a tampered, expired or misplaced consent ticket', async () => {
    const browser = createBrowser();
    const page = await browser.get(url());
    const { ticket, action } = parseConsentPage(page.text);
    const [kid, payload, sig] = ticket.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${kid}.${Buffer.from(JSON.stringify({ ...claims, r: 'https://evil.example/cb' })).toString('base64url')}.${sig}`;
    expect((await browser.postForm(action, { ticket: forged, decision: 'approve' })).status).toBe(400);
    const expired = crypto.sign('consent', { ...claims, exp: Date.now() - 1000 });
    expect((await browser.postForm(action, { ticket: expired, decision: 'approve' })).status).toBe(400);
    // A ticket of alpha presented to beta.
    expect((await browser.postForm(`${base}/beta/oauth/authorize`, { ticket, decision: 'approve' })).status).toBe(400);
    const malformed = await browser.postForm(action, { decision: 'maybe' });
    expect(malformed.status).toBe(422);
    expect(JSON.parse(malformed.text).detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'ticket'],
      ['body', 'decision'],
    ]);
  });
});

describe('callback', () => {
  /** Runs a flow up to the gateway callback URL (not yet opened). */
  async function upToCallback(server = 'alpha', browser = createBrowser()) {
    const p = pkce();
    const page = await browser.get(
      authorizeUrl(`${base}/${server}/oauth/authorize`, {
        clientId: `gw-${server}`,
        redirectUri: REDIRECT,
        challenge: p.challenge,
        state: 'cb-state',
      }),
    );
    const { ticket, action } = parseConsentPage(page.text);
    const answer = await browser.postForm(action, { ticket, decision: 'approve' });
    const { stoppedAt } = await browser.follow(answer.location!, `${base}/${server}/oauth/callback`);
    return { browser, callback: stoppedAt!, p };
  }

  it("returns a gateway code to the client's redirect URI with its state and the issuer", async () => {
    const { browser, callback } = await upToCallback();
    const res = await browser.get(callback);
    expect(res.status).toBe(302);
    const back = new URL(res.location!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('cb-state');
    expect(back.searchParams.get('iss')).toBe(`${base}/alpha`);
    expect(back.searchParams.get('code')).toMatch(/^mgc1\./);
    // The upstream code never reaches the client.
    expect(back.searchParams.get('code')).not.toBe(new URL(callback).searchParams.get('code'));
  });

  it('refuses a replayed state with 400 and no redirect', async () => {
    const { browser, callback } = await upToCallback();
    expect((await browser.get(callback)).status).toBe(302);
    const replay = await browser.get(callback);
    expect(replay.status).toBe(400);
    expect(replay.location).toBeUndefined();
  });

  it('refuses a state opened in another browser', async () => {
    const { callback } = await upToCallback();
    const res = await createBrowser().get(callback);
    expect(res.status).toBe(400);
    expect(res.location).toBeUndefined();
    expect(res.text).toContain('another browser');
  });

  it('refuses tampered, expired and foreign states with 400 and no redirect', async () => {
    const { browser, callback } = await upToCallback();
    const u = new URL(callback);
    const state = u.searchParams.get('state')!;
    const [kid, payload, sig] = state.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const variants = [
      `${kid}.${Buffer.from(JSON.stringify({ ...claims, r: 'https://evil.example/cb' })).toString('base64url')}.${sig}`,
      `${state}x`,
      'garbage',
      crypto.sign('state', { ...claims, exp: Date.now() - 1 }),
      crypto.sign('consent', claims),
    ];
    for (const v of variants) {
      u.searchParams.set('state', v);
      const res = await browser.get(u.href);
      expect(res.status).toBe(400);
      expect(res.location).toBeUndefined();
    }
    // The state of alpha at beta's callback.
    const atBeta = new URL(callback.replace('/alpha/', '/beta/'));
    expect((await browser.get(atBeta.href)).status).toBe(400);
  });

  it('answers a callback without state with a 422', async () => {
    const res = await fetch(`${base}/alpha/oauth/callback?code=abc`);
    expect(res.status).toBe(422);
    expect(((await res.json()) as { detail: unknown[] }).detail).toEqual([
      { type: 'missing', loc: ['query', 'state'], msg: 'Field required', input: null },
    ]);
  });

  it("sends an upstream refusal to the client's validated redirect URI as an OAuth error", async () => {
    env.idp.denyNext = true;
    const browser = createBrowser();
    const p = pkce();
    const back = await signIn(
      browser,
      authorizeUrl(`${base}/alpha/oauth/authorize`, { clientId: 'gw-alpha', redirectUri: REDIRECT, challenge: p.challenge, state: 'd1' }),
      REDIRECT,
    );
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('d1');
    expect(back.searchParams.get('iss')).toBe(`${base}/alpha`);
    expect(back.searchParams.has('code')).toBe(false);
  });

  it('works for clients that send no state', async () => {
    const browser = createBrowser();
    const p = pkce();
    const u = new URL(
      authorizeUrl(`${base}/alpha/oauth/authorize`, { clientId: 'gw-alpha', redirectUri: REDIRECT, challenge: p.challenge }),
    );
    const back = await signIn(browser, u.href, REDIRECT);
    expect(back.searchParams.has('state')).toBe(false);
    expect(back.searchParams.get('code')).toBeTruthy();
  });
});

describe('token', () => {
  const tokenUrl = (server = 'alpha') => `${base}/${server}/oauth/token`;

  it('redeems a code once: the second use is invalid_grant', async () => {
    const s = await signInTo(base, 'alpha');
    const form = {
      grant_type: 'authorization_code',
      code: s.code,
      redirect_uri: s.redirectUri,
      code_verifier: s.pkce.verifier,
      client_id: s.clientId,
    };
    const first = await postForm(tokenUrl(), form);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body).toMatchObject({
      token_type: 'Bearer',
      access_token: expect.any(String),
      refresh_token: expect.stringMatching(/^mgr1\./),
    });
    expect(first.body.expires_in).toBeGreaterThan(0);
    const second = await postForm(tokenUrl(), form);
    expect(second.status).toBe(400);
    expect(second.body).toEqual({ error: 'invalid_grant', error_description: 'The authorization code was already used.' });
  });

  it('checks PKCE, redirect_uri, client_id and the server of the code', async () => {
    const s = await signInTo(base, 'alpha');
    const form = {
      grant_type: 'authorization_code',
      code: s.code,
      redirect_uri: s.redirectUri,
      code_verifier: s.pkce.verifier,
      client_id: s.clientId,
    };
    const attempt = (overrides: Record<string, string | undefined>, url = tokenUrl()) => {
      const f: Record<string, string> = {};
      for (const [k, v] of Object.entries({ ...form, ...overrides })) if (v !== undefined) f[k] = v;
      return postForm(url, f);
    };
    expect(await attempt({ code_verifier: pkce().verifier })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await attempt({ code_verifier: 'short' })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await attempt({ code_verifier: undefined })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(await attempt({ redirect_uri: 'http://127.0.0.1:45888/other' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect(await attempt({ redirect_uri: undefined })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(await attempt({ client_id: 'gw-beta' })).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(await attempt({ client_id: undefined })).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    // A code of alpha redeemed at beta (beta's client_id, so that only the server differs).
    expect(await attempt({ client_id: 'gw-beta' }, tokenUrl('beta'))).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // None of these consumed the code.
    expect((await attempt({})).status).toBe(200);
  });

  it('refuses a code minted for another server sharing the same upstream client', async () => {
    const s = await signInTo(base, 'gamma');
    const form = {
      grant_type: 'authorization_code',
      code: s.code,
      redirect_uri: s.redirectUri,
      code_verifier: s.pkce.verifier,
      client_id: 'gw-shared',
    };
    const res = await postForm(tokenUrl('delta'), form);
    expect(res).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'The authorization code was issued for another server.' },
    });
  });

  it('refuses expired, forged and foreign codes', async () => {
    const claims = {
      typ: 'code',
      jti: 'j1',
      s: 'alpha',
      c: 'gw-alpha',
      r: REDIRECT,
      cc: pkce().challenge,
      exp: Date.now() - 1,
      tok: { access_token: 'x', token_type: 'Bearer' },
    };
    for (const code of [
      crypto.seal('code', claims),
      createFacadeCrypto(['another-secret-0123456789abcdef0123']).seal('code', { ...claims, exp: Date.now() + 60_000 }),
      'mgc1.AAAA',
      'plain',
      crypto.seal('refresh', claims),
    ]) {
      const res = await postForm(tokenUrl(), {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: pkce().verifier,
        client_id: 'gw-alpha',
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
    }
  });

  it('relays refresh to the upstream, passes the answer through and rotates', async () => {
    const s = await signInTo(base, 'alpha');
    const tokens = (
      await postForm(tokenUrl(), {
        grant_type: 'authorization_code',
        code: s.code,
        redirect_uri: s.redirectUri,
        code_verifier: s.pkce.verifier,
        client_id: s.clientId,
      })
    ).body;
    const refreshed = await postForm(tokenUrl(), {
      grant_type: 'refresh_token',
      refresh_token: String(tokens.refresh_token),
      client_id: 'gw-alpha',
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).toEqual(expect.any(String));
    expect(refreshed.body.access_token).not.toBe(tokens.access_token);
    expect(refreshed.body.refresh_token).toMatch(/^mgr1\./);
    // HTTP Basic with the public client id works as well as the form.
    const basic = await postForm(
      tokenUrl(),
      { grant_type: 'refresh_token', refresh_token: String(refreshed.body.refresh_token) },
      {
        authorization: `Basic ${Buffer.from('gw-alpha:').toString('base64')}`,
      },
    );
    expect(basic.status).toBe(200);
    // The rotated (old) refresh token is refused by the upstream: its invalid_grant passes through
    // (and, RFC 9700, the upstream revokes the family).
    const reused = await postForm(tokenUrl(), {
      grant_type: 'refresh_token',
      refresh_token: String(tokens.refresh_token),
      client_id: 'gw-alpha',
    });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    const family = await postForm(tokenUrl(), {
      grant_type: 'refresh_token',
      refresh_token: String(basic.body.refresh_token),
      client_id: 'gw-alpha',
    });
    expect(family.body.error).toBe('invalid_grant');
  });

  it('refuses a refresh token minted for another server, even with the same upstream client', async () => {
    const s = await signInTo(base, 'gamma');
    const tokens = (
      await postForm(tokenUrl('gamma'), {
        grant_type: 'authorization_code',
        code: s.code,
        redirect_uri: s.redirectUri,
        code_verifier: s.pkce.verifier,
        client_id: 'gw-shared',
      })
    ).body;
    const res = await postForm(tokenUrl('delta'), {
      grant_type: 'refresh_token',
      refresh_token: String(tokens.refresh_token),
      client_id: 'gw-shared',
    });
    expect(res).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const raw = await postForm(tokenUrl(), { grant_type: 'refresh_token', refresh_token: 'an-upstream-token', client_id: 'gw-alpha' });
    expect(raw).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await postForm(tokenUrl(), { grant_type: 'refresh_token', client_id: 'gw-alpha' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_request' },
    });
  });

  it('is form-encoded only: other bodies and missing fields are 422, bad grants 400', async () => {
    const json = await fetch(tokenUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code' }),
    });
    expect(json.status).toBe(422);
    expect(((await json.json()) as { detail: unknown[] }).detail).toEqual([
      { type: 'missing', loc: ['body', 'grant_type'], msg: 'Field required', input: {} },
    ]);
    const fd = new FormData();
    fd.set('grant_type', 'authorization_code');
    expect((await fetch(tokenUrl(), { method: 'POST', body: fd })).status).toBe(422);
    expect((await postForm(tokenUrl(), { client_id: 'gw-alpha' })).status).toBe(422);
    expect(await postForm(tokenUrl(), { grant_type: 'password', client_id: 'gw-alpha' })).toMatchObject({
      status: 400,
      body: { error: 'unsupported_grant_type' },
    });
    const repeated = await fetch(tokenUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&grant_type=authorization_code&client_id=gw-alpha',
    });
    expect(repeated.status).toBe(400);
    expect(((await repeated.json()) as Record<string, unknown>).error).toBe('invalid_request');
    expect((await postForm(`${base}/nosuch/oauth/token`, { grant_type: 'x' })).status).toBe(404);
    expect((await postForm(`${base}/bad%20x/oauth/token`, { grant_type: 'x' })).status).toBe(422);
    expect((await postForm(`${base}/open/oauth/token`, { grant_type: 'x' })).status).toBe(404);
    expect((await fetch(tokenUrl(), { method: 'GET' })).status).toBe(405);
  });
});

describe('root aliases for the default server', () => {
  it('registers, authorizes and redeems at /register, /authorize and /token with issuer <base>', async () => {
    const reg = await register(base, 'alpha', REDIRECT);
    const rootReg = await fetch(`${base}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    });
    expect(((await rootReg.json()) as Record<string, unknown>).client_id).toBe(reg.client_id);
    const s = await signInTo(base, 'alpha', { endpoint: `${base}/authorize` });
    expect(s.redirect.searchParams.get('iss')).toBe(base);
    const res = await postForm(`${base}/token`, {
      grant_type: 'authorization_code',
      code: s.code,
      redirect_uri: s.redirectUri,
      code_verifier: s.pkce.verifier,
      client_id: s.clientId,
    });
    expect(res.status).toBe(200);
  });
});

describe('replicas', () => {
  let replica: Listener;

  beforeAll(async () => {
    // A second gateway on the same records store and secret, as a second replica would be.
    replica = await startListener(createGatewaySurface(env.platform.ctx), { host: '127.0.0.1', port: 0, logger: env.platform.ctx.logger });
  });

  afterAll(async () => {
    await replica?.close(0);
  });

  it('shares single use of codes: a code redeemed on one replica is refused on the other', async () => {
    const s = await signInTo(base, 'alpha');
    const form = {
      grant_type: 'authorization_code',
      code: s.code,
      redirect_uri: s.redirectUri,
      code_verifier: s.pkce.verifier,
      client_id: s.clientId,
    };
    expect((await postForm(`${replica.url}/alpha/oauth/token`, form)).status).toBe(200);
    expect(await postForm(`${base}/alpha/oauth/token`, form)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('shares single use of states, and finishes a flow started on the other replica', async () => {
    const browser = createBrowser();
    const p = pkce();
    const page = await browser.get(
      authorizeUrl(`${base}/alpha/oauth/authorize`, { clientId: 'gw-alpha', redirectUri: REDIRECT, challenge: p.challenge, state: 'r' }),
    );
    const { ticket, action } = parseConsentPage(page.text);
    const answer = await browser.postForm(action, { ticket, decision: 'approve' });
    const { stoppedAt } = await browser.follow(answer.location!, `${base}/alpha/oauth/callback`);
    // The same browser (its cookie) reaches the callback on the replica first.
    const onReplica = stoppedAt!.replace(base, replica.url);
    const cookie = browser.cookieHeader(stoppedAt!)!;
    const first = await fetch(onReplica, { headers: { cookie }, redirect: 'manual' });
    expect(first.status).toBe(302);
    expect(new URL(first.headers.get('location')!).searchParams.get('code')).toBeTruthy();
    const second = await browser.get(stoppedAt!);
    expect(second.status).toBe(400);
  });
});
