// The authorization server over real HTTP: discovery, dynamic registration with the redirect-URI
// policy, the MCP SDK client completing the code flow with PKCE (consent answered over HTTP),
// resource-bound JWTs carrying the organization, refresh rotation with reuse detection,
// revocation and introspection, the organization picker, and malformed input.
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient as sdkRegisterClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import fs from 'node:fs';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorize,
  browse,
  CookieJar,
  driveAuthorization,
  formAction,
  formField,
  newTestUser,
  obtainAccessToken,
  organizationOptions,
  pkcePair,
  registerClient,
  startOAuthTestPlatform,
  tokenRequest,
} from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';

let platform: TestPlatform;
let auth: string;
let api: string;
let brain: string;

type Json = Record<string, any>;

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  auth = platform.ctx.config.publicUrls.auth;
  api = platform.ctx.config.publicUrls.api;
  brain = `${platform.ctx.config.publicUrls.gateway}/brain/mcp`;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

async function form(path: string, body: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${auth}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(body).toString(),
  });
  const text = await res.text();
  let json: Json = {};
  try {
    json = JSON.parse(text) as Json;
  } catch {}
  return { status: res.status, json, text, headers: res.headers };
}

describe('discovery', () => {
  it('publishes RFC 8414 and OpenID metadata with the issuer {auth_url}', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const res = await fetch(`${auth}${path}`);
      expect(res.status, path).toBe(200);
      const meta = (await res.json()) as Json;
      expect(meta).toMatchObject({
        issuer: auth,
        authorization_endpoint: `${auth}/authorize`,
        token_endpoint: `${auth}/token`,
        registration_endpoint: `${auth}/register`,
        revocation_endpoint: `${auth}/revoke`,
        introspection_endpoint: `${auth}/introspect`,
        jwks_uri: `${auth}/jwks`,
        code_challenge_methods_supported: ['S256'],
        response_types_supported: ['code'],
      });
      expect(meta.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'offline_access']));
      expect(meta.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']));
      expect(meta.grant_types_supported).not.toContain('implicit');
    }
    // The same document for the web surface's mirror.
    expect(await platform.ctx.authMetadata()).toMatchObject({ issuer: auth, registration_endpoint: `${auth}/register` });
  });

  it('publishes the public signing keys only', async () => {
    const jwks = (await (await fetch(`${auth}/jwks`)).json()) as { keys: Json[] };
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const key of jwks.keys) {
      expect(key.kid).toBeTruthy();
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key[member]).toBeUndefined();
    }
  });
});

describe('the MCP SDK client', () => {
  it('registers dynamically, completes the code flow with PKCE for the Brain, and refreshes', async () => {
    const metadata = await discoverAuthorizationServerMetadata(auth);
    expect(metadata?.issuer).toBe(auth);
    const redirectUrl = 'http://127.0.0.1:33418/callback';
    const clientInformation = await sdkRegisterClient(auth, {
      metadata,
      clientMetadata: {
        client_name: 'SDK client',
        redirect_uris: [redirectUrl],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
    });
    expect(clientInformation.client_id).toBeTruthy();
    expect(clientInformation.client_secret).toBeUndefined();

    const { authorizationUrl, codeVerifier } = await startAuthorization(auth, {
      metadata,
      clientInformation,
      redirectUrl,
      scope: 'openid profile email offline_access',
      resource: new URL(brain),
    });
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    const user = newTestUser('sdk');
    const result = await driveAuthorization(auth, authorizationUrl.href, redirectUrl, { user });
    expect(result.callback.searchParams.get('iss')).toBe(auth);

    const tokens = await exchangeAuthorization(auth, {
      metadata,
      clientInformation,
      authorizationCode: result.code,
      codeVerifier,
      redirectUri: redirectUrl,
      resource: new URL(brain),
    });
    expect(tokens.token_type).toMatch(/^bearer$/i);
    expect(tokens.refresh_token).toBeTruthy();
    expect(tokens.expires_in).toBe(900);
    const claims = await platform.ctx.tokens.verify(tokens.access_token, brain);
    expect(claims).toMatchObject({ organizationId: result.organizationId, clientId: clientInformation.client_id, audience: brain });
    expect(claims.scopes).toEqual(expect.arrayContaining(['openid', 'offline_access']));
    // A token for the Brain is refused by the REST API (audience check).
    await expect(platform.ctx.tokens.verify(tokens.access_token, api)).rejects.toThrow(/not issued for this resource/);
    const idToken = decodeJwt((tokens as Json).id_token);
    expect(idToken).toMatchObject({ email: user.email, aud: clientInformation.client_id });

    const refreshed = await refreshAuthorization(auth, {
      metadata,
      clientInformation,
      refreshToken: tokens.refresh_token!,
      resource: new URL(brain),
    });
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const again = await platform.ctx.tokens.verify(refreshed.access_token, brain);
    expect(again.organizationId).toBe(result.organizationId);
  });
});

describe('dynamic registration', () => {
  it('registers public clients and states refresh_token even when only authorization_code was asked', async () => {
    const res = await fetch(`${auth}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://claude.ai/api/mcp/auth_callback'], grant_types: ['authorization_code'] }),
    });
    expect(res.status).toBe(201);
    const client = (await res.json()) as Json;
    expect(client).toMatchObject({
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    expect(client.client_secret).toBeUndefined();
    expect(client.client_id_issued_at).toEqual(expect.any(Number));
  });

  it('accepts the redirect URIs of known MCP clients', async () => {
    for (const uri of [
      'https://claude.ai/api/mcp/auth_callback',
      'http://127.0.0.1/',
      'https://vscode.dev/redirect',
      'http://localhost:6274/oauth/callback',
      'cursor://anysphere.cursor-mcp/oauth/callback',
      'http://[::1]:8123/cb',
    ]) {
      const res = await fetch(`${auth}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [uri], token_endpoint_auth_method: 'none' }),
      });
      expect(res.status, `${uri}: ${await res.clone().text()}`).toBe(201);
    }
  });

  it('refuses dangerous redirect URIs with invalid_redirect_uri', async () => {
    for (const uri of [
      'javascript:alert(1)',
      'data:text/html,hi',
      'file:///etc/passwd',
      'vbscript:msgbox',
      'https://user:pw@example.com/cb',
      'https://example.com/cb#frag',
      'http://example.com/cb',
      `${platform.ctx.config.publicUrls.gateway}/github/oauth/callback`,
      `${auth}/anything`,
      'not a uri',
    ]) {
      const res = await fetch(`${auth}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [uri], token_endpoint_auth_method: 'none' }),
      });
      expect(res.status, uri).toBe(400);
      const body = (await res.json()) as Json;
      expect(body.error, uri).toBe('invalid_redirect_uri');
    }
  });

  it('refuses malformed registrations with RFC 7591 errors, never 500', async () => {
    const cases: [string, string][] = [
      ['{', 'application/json'],
      ['[]', 'application/json'],
      ['{}', 'application/json'],
      ['{"redirect_uris":[]}', 'application/json'],
      ['{"redirect_uris":"https://a.example/cb"}', 'application/json'],
      ['{"redirect_uris":["https://a.example/cb"],"grant_types":["client_credentials"]}', 'application/json'],
      ['{"redirect_uris":["https://a.example/cb"],"grant_types":["implicit"],"response_types":["token"]}', 'application/json'],
      ['{"redirect_uris":["https://a.example/cb"],"organization_id":"org_x"}', 'application/json'],
      ['redirect_uris=https://a.example/cb', 'application/x-www-form-urlencoded'],
    ];
    for (const [body, type] of cases) {
      const res = await fetch(`${auth}/register`, { method: 'POST', headers: { 'content-type': type }, body });
      expect(res.status, body).toBeGreaterThanOrEqual(400);
      expect(res.status, body).toBeLessThan(500);
      const json = (await res.json()) as Json;
      expect(typeof json.error, body).toBe('string');
    }
  });
});

describe('authorization code with PKCE', () => {
  it('refuses a request without a code challenge, or with the plain method, without redirecting anywhere unsafe', async () => {
    const client = await registerClient(auth);
    const base = { response_type: 'code', client_id: client.client_id, redirect_uri: client.redirect_uris[0], scope: 'openid', state: 's' };
    const missing = await fetch(`${auth}/authorize?${new URLSearchParams(base)}`, { redirect: 'manual' });
    const location = new URL(missing.headers.get('location')!);
    expect(location.href.startsWith(client.redirect_uris[0])).toBe(true);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    const plain = await fetch(
      `${auth}/authorize?${new URLSearchParams({ ...base, code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' })}`,
      { redirect: 'manual' },
    );
    expect(new URL(plain.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
    const implicit = await fetch(`${auth}/authorize?${new URLSearchParams({ ...base, response_type: 'token' })}`, { redirect: 'manual' });
    // An implicit request is refused; the error goes in the fragment, as that response type asks.
    const loc = implicit.headers.get('location');
    const error = loc ? new URLSearchParams(new URL(loc).hash.slice(1)).get('error') : String(implicit.status);
    expect(error).toMatch(/^(unsupported_response_type|400)$/);
    expect(implicit.headers.get('location') ?? '').not.toContain('access_token');
  });

  it('answers an unregistered redirect_uri directly, never redirecting to it', async () => {
    const client = await registerClient(auth);
    const res = await fetch(
      `${auth}/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: 'https://evil.example/cb', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
  });

  it('matches loopback redirect URIs on any port (RFC 8252)', async () => {
    const client = await registerClient(auth, { redirect_uris: ['http://127.0.0.1/callback'] });
    const res = await fetch(
      `${auth}/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: 'http://127.0.0.1:55123/callback', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', scope: 'openid' })}`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(303);
    expect(new URL(res.headers.get('location')!, auth).pathname).toMatch(/^\/interaction\//);
  });

  it('redeems a code once, only with the right verifier and redirect_uri', async () => {
    const client = await registerClient(auth);
    const flow = await authorize(auth, { client, user: newTestUser(), resource: api });
    const base = { grant_type: 'authorization_code', code: flow.code, client_id: client.client_id, redirect_uri: flow.redirectUri };
    const wrongVerifier = await form('/token', { ...base, code_verifier: 'y'.repeat(43) });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.json.error).toBe('invalid_grant');
    // The failed attempt consumed nothing? oidc-provider consumes only on success; a new flow checks the rest.
    const flow2 = await authorize(auth, { client, user: newTestUser(), resource: api });
    const noVerifier = await form('/token', { ...base, code: flow2.code });
    expect(noVerifier.json.error).toMatch(/invalid_grant|invalid_request/);
    const flow3 = await authorize(auth, { client, user: newTestUser(), resource: api });
    const wrongRedirect = await form('/token', {
      ...base,
      code: flow3.code,
      code_verifier: flow3.verifier,
      redirect_uri: 'http://127.0.0.1:9/other',
    });
    expect(wrongRedirect.json.error).toBe('invalid_grant');
    const flow4 = await authorize(auth, { client, user: newTestUser(), resource: api });
    const ok = await form('/token', { ...base, code: flow4.code, code_verifier: flow4.verifier });
    expect(ok.status).toBe(200);
    const reused = await form('/token', { ...base, code: flow4.code, code_verifier: flow4.verifier });
    expect(reused.status).toBe(400);
    expect(reused.json.error).toBe('invalid_grant');
    // Reusing a code revokes what it issued.
    await expect(platform.ctx.tokens.verify(ok.json.access_token, api)).rejects.toThrow(/revoked/);
  });

  it('issues no refresh token without offline_access', async () => {
    const t = await obtainAccessToken(platform, { resource: api, scope: 'openid email' });
    expect(t.refresh_token).toBeUndefined();
  });

  it('refuses a resource it does not serve', async () => {
    const client = await registerClient(auth);
    const res = await fetch(
      `${auth}/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: client.redirect_uris[0], code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', scope: 'openid', resource: 'https://elsewhere.example/' })}`,
      { redirect: 'manual' },
    );
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');
  });
});

describe('refresh tokens', () => {
  it('rotates on use; reusing a rotated token revokes the whole family', async () => {
    const t = await obtainAccessToken(platform, { resource: api });
    const first = await form('/token', { grant_type: 'refresh_token', refresh_token: t.refresh_token!, client_id: t.clientId });
    expect(first.status).toBe(200);
    expect(first.json.refresh_token).not.toBe(t.refresh_token);
    const reuse = await form('/token', { grant_type: 'refresh_token', refresh_token: t.refresh_token!, client_id: t.clientId });
    expect(reuse.status).toBe(400);
    expect(reuse.json.error).toBe('invalid_grant');
    const successor = await form('/token', { grant_type: 'refresh_token', refresh_token: first.json.refresh_token, client_id: t.clientId });
    expect(successor.json.error).toBe('invalid_grant');
    await expect(platform.ctx.tokens.verify(first.json.access_token, api)).rejects.toThrow(/revoked/);
    await expect(platform.ctx.tokens.verify(t.access_token, api)).rejects.toThrow(/revoked/);
  });

  it('binds refresh tokens to their client', async () => {
    const t = await obtainAccessToken(platform, { resource: api });
    const other = await registerClient(auth);
    const stolen = await form('/token', { grant_type: 'refresh_token', refresh_token: t.refresh_token!, client_id: other.client_id });
    expect(stolen.status).toBe(400);
    expect(stolen.json.error).toBe('invalid_grant');
  });
});

describe('revocation and introspection', () => {
  it('introspects and revokes a JWT access token; the REST API then refuses it', async () => {
    const t = await obtainAccessToken(platform, { resource: api });
    const active = await form('/introspect', { token: t.access_token, client_id: t.clientId });
    expect(active.status).toBe(200);
    expect(active.json).toMatchObject({ active: true, client_id: t.clientId, aud: api, org: t.organizationId, token_type: 'Bearer' });
    const ok = await fetch(`${api}/organizations`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(ok.status).toBe(200);

    const revoked = await form('/revoke', { token: t.access_token, client_id: t.clientId });
    expect(revoked.status).toBe(200);
    expect((await form('/introspect', { token: t.access_token, client_id: t.clientId })).json).toEqual({ active: false });
    const denied = await fetch(`${api}/organizations`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toContain('invalid_token');
  });

  it('revokes refresh tokens (RFC 7009) and kills their family', async () => {
    const t = await obtainAccessToken(platform, { resource: api });
    expect((await form('/revoke', { token: t.refresh_token!, client_id: t.clientId })).status).toBe(200);
    const refresh = await form('/token', { grant_type: 'refresh_token', refresh_token: t.refresh_token!, client_id: t.clientId });
    expect(refresh.json.error).toBe('invalid_grant');
    await expect(platform.ctx.tokens.verify(t.access_token, api)).rejects.toThrow(/revoked/);
  });

  it('answers unknown tokens as RFC 7009 and RFC 7662 require', async () => {
    const client = await registerClient(auth);
    expect((await form('/revoke', { token: 'unknown-token', client_id: client.client_id })).status).toBe(200);
    expect((await form('/introspect', { token: 'unknown-token', client_id: client.client_id })).json).toEqual({ active: false });
    expect((await form('/introspect', { token: 'a.b.c', client_id: client.client_id })).json).toEqual({ active: false });
    expect((await form('/revoke', { token: 'a.b.c', client_id: client.client_id })).status).toBe(200);
  });

  it("does not let a client revoke or introspect another client's token", async () => {
    const t = await obtainAccessToken(platform, { resource: api });
    const other = await registerClient(auth);
    expect((await form('/introspect', { token: t.access_token, client_id: other.client_id })).json).toEqual({ active: false });
    expect((await form('/revoke', { token: t.access_token, client_id: other.client_id })).status).toBe(200);
    await expect(platform.ctx.tokens.verify(t.access_token, api)).resolves.toMatchObject({ clientId: t.clientId });
  });

  it('refuses unauthenticated callers and malformed requests with OAuth errors', async () => {
    const t = await obtainAccessToken(platform, { resource: api });
    const noClient = await form('/introspect', { token: t.access_token });
    expect(noClient.status).toBe(401);
    expect(noClient.json.error).toBe('invalid_client');
    expect((await form('/revoke', { token: t.access_token, client_id: 'nope' })).json.error).toBe('invalid_client');
    const missing = await form('/revoke', { client_id: t.clientId });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toBe('invalid_request');
    const json = await fetch(`${auth}/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBeGreaterThanOrEqual(400);
    expect(json.status).toBeLessThan(500);
  });
});

describe('organizations at consent', () => {
  it('lets a member of several organizations pick the one the client acts for', async () => {
    const user = newTestUser('multi');
    const first = await obtainAccessToken(platform, { resource: api, user });
    // A second organization for the same user, created through the agents service.
    const created = await platform.ctx.clients.organizations.createOrganization({
      name: 'Second org',
      ownerUserId: (await platform.ctx.tokens.verify(first.access_token, api)).subject,
    });
    const second = created.organization!.organizationId;
    const client = await registerClient(auth);
    const jar = new CookieJar();
    const { verifier, challenge } = pkcePair();
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0],
      scope: 'openid',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: api,
    });
    let page = await browse(jar, `${auth}/authorize?${params}`);
    page = await browse(jar, page.location!);
    page = await browse(jar, new URL(formAction(page.body, '/sign-in'), auth).href, {
      form: { csrf: formField(page.body, 'csrf'), email: user.email, password: user.password },
    });
    while (page.location && !page.location.startsWith(client.redirect_uris[0])) page = await browse(jar, page.location);
    const offered = organizationOptions(page.body).map((o) => o.id);
    expect(offered).toEqual(expect.arrayContaining([first.organizationId, second]));
    // An organization the user does not belong to is refused.
    const foreign = await browse(jar, new URL(formAction(page.body, '/consent'), auth).href, {
      form: { csrf: formField(page.body, 'csrf'), organization: 'org_notmine' },
    });
    expect(foreign.status).toBe(403);
    const forged = await browse(jar, new URL(formAction(page.body, '/consent'), auth).href, {
      form: { csrf: 'forged', organization: second },
    });
    expect(forged.status).toBe(403);
    page = await browse(jar, new URL(formAction(foreign.body, '/consent'), auth).href, {
      form: { csrf: formField(foreign.body, 'csrf'), organization: second },
    });
    while (page.location && !page.location.startsWith(client.redirect_uris[0])) page = await browse(jar, page.location);
    const code = new URL(page.location!).searchParams.get('code')!;
    const tokens = await tokenRequest(auth, {
      grant_type: 'authorization_code',
      code,
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0],
      code_verifier: verifier,
    });
    const body = (await tokens.json()) as Json;
    expect((await platform.ctx.tokens.verify(body.access_token, api)).organizationId).toBe(second);
  });

  it('sends the user back to the client with access_denied when consent is denied', async () => {
    const client = await registerClient(auth);
    const user = newTestUser();
    const jar = new CookieJar();
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0],
      scope: 'openid',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
      state: 'st',
    });
    let page = await browse(jar, `${auth}/authorize?${params}`);
    page = await browse(jar, page.location!);
    const signUp = await browse(jar, new URL(/href="([^"]*\/sign-up)"/.exec(page.body)![1], auth).href);
    page = await browse(jar, new URL(formAction(signUp.body, '/sign-up'), auth).href, {
      form: { csrf: formField(signUp.body, 'csrf'), email: user.email, password: user.password, name: 'x', organization: 'Denied org' },
    });
    while (page.location && !page.location.startsWith(client.redirect_uris[0])) page = await browse(jar, page.location);
    page = await browse(jar, new URL(formAction(page.body, '/abort'), auth).href, { form: { csrf: formField(page.body, 'csrf') } });
    while (page.location && !page.location.startsWith(client.redirect_uris[0])) page = await browse(jar, page.location);
    const back = new URL(page.location!);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st');
  });
});

describe('accounts', () => {
  it('refuses a wrong password, then throttles repeated failures with 429', async () => {
    const t = await obtainAccessToken(platform, { resource: api });
    const client = await registerClient(auth);
    const jar = new CookieJar();
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0],
      scope: 'openid',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
    });
    let page = await browse(jar, `${auth}/authorize?${params}`);
    page = await browse(jar, page.location!);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      page = await browse(jar, new URL(formAction(page.body, '/sign-in'), auth).href, {
        form: { csrf: formField(page.body, 'csrf'), email: t.user.email, password: 'wrong password' },
      });
      statuses.push(page.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(400));
    expect(statuses[10]).toBe(429);
    expect(page.headers.get('retry-after')).toMatch(/^\d+$/);
    // Even the right password is refused while throttled.
    page = await browse(jar, new URL(formAction(page.body, '/sign-in'), auth).href, {
      form: { csrf: formField(page.body, 'csrf'), email: t.user.email, password: t.user.password },
    });
    expect(page.status).toBe(429);
  });

  it('refuses a second account with the same e-mail and weak passwords', async () => {
    const t = await obtainAccessToken(platform, { resource: api });
    const jar = new CookieJar();
    let page = await browse(jar, `${auth}/sign-up`);
    page = await browse(jar, `${auth}/sign-up`, {
      form: {
        csrf: formField(page.body, 'csrf'),
        email: t.user.email.toUpperCase(),
        password: 'long enough password',
        name: 'x',
        organization: 'o',
      },
    });
    expect(page.status).toBe(400);
    expect(page.body).toContain('already exists');
    page = await browse(jar, `${auth}/sign-up`, {
      form: { csrf: formField(page.body, 'csrf'), email: 'new@example.test', password: 'short', name: 'x', organization: 'o' },
    });
    expect(page.status).toBe(400);
    expect(page.body).toContain('aria-invalid="true"');
    page = await browse(jar, `${auth}/sign-up`, {
      form: { csrf: 'forged', email: 'new2@example.test', password: 'long enough password', name: 'x', organization: 'o' },
    });
    expect(page.status).toBe(403);
  });

  it('answers malformed interaction requests with a page, never 500', async () => {
    const jar = new CookieJar();
    for (const [path, init] of [
      ['/interaction/unknown', {}],
      ['/interaction/unknown/sign-in', { form: { email: 'a' } }],
      ['/interaction/unknown/consent', { form: {} }],
      ['/verify-email?token=bad', {}],
      ['/social/callback?state=x&code=y', {}],
    ] as const) {
      const res = await browse(jar, `${auth}${path}`, init as { form?: Record<string, string> });
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
      expect(res.headers.get('content-type'), path).toContain('text/html');
    }
    const json = await fetch(`${auth}/sign-up`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(400);
    const token = await form('/token', { grant_type: 'authorization_code', code: 'nope', client_id: 'nope' });
    expect(token.status).toBe(401);
    expect(token.json.error).toBe('invalid_client');
    const badGrant = await form('/token', { grant_type: 'password', username: 'a', password: 'b' });
    expect(badGrant.status).toBeGreaterThanOrEqual(400);
    expect(badGrant.status).toBeLessThan(500);
    expect(typeof badGrant.json.error).toBe('string');
  });

  it('writes mail to the local outbox when no SMTP server is configured', async () => {
    const t = await obtainAccessToken(platform, { resource: api });
    const lines = fs
      .readFileSync(path.join(platform.dataDir, 'outbox.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    const mail = lines.find((m) => m.to === t.user.email);
    expect(mail).toMatchObject({ subject: 'Verify your e-mail address for Mindgate' });
    expect(mail!.text).toMatch(new RegExp(`${auth.replace(/[.]/g, '\\.')}/verify-email\\?token=[A-Za-z0-9_-]{43}`));
  });

  it('serves pages that cannot be framed', async () => {
    const res = await fetch(`${auth}/sign-up`);
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    expect(html).toContain('<html lang="en">');
    expect(html).toMatch(/<label for="email">/);
  });
});
