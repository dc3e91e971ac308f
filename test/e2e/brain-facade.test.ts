// The Brain through the gateway's stateless OAuth facade, `{base_url}/brain/oauth/*`, in front
// of the platform's own authorization server `{auth_url}`, in the default configuration (no
// servers file). The MCP SDK client with its OAuth provider, pointed at the facade (the second
// authorization server of the Brain's protected-resource metadata), registers at the facade,
// passes the gateway's consent page, signs in and picks the organization at `{auth_url}`, comes
// back through the gateway's callback with a gateway code, redeems it at the facade (PKCE checked
// by the gateway), calls the Brain's tools, and refreshes through the facade. Memories are shared
// with clients that went to `{auth_url}` directly; grants and the dashboard's revocation still
// cut access; malformed input gets the documented errors. Everything over real HTTP.
import { Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  discoverAuthorizationServerMetadata,
  UnauthorizedError,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewaySurface } from '../../edge/gateway/index.ts';
import { derivePlatformClientSecret } from '../../edge/gateway/oauth/platform-client.ts';
import { startListener, type Listener } from '../../edge/http/listener.ts';
import { collectionName, openClientRecord } from '../../edge/oauth/adapter.ts';
import { registerGatewayClients } from '../../edge/oauth/gateway-client.ts';
import { createLogger } from '../../services/common/log.ts';
import {
  CookieJar,
  driveFacadeAuthorization,
  newTestUser,
  obtainAccessToken,
  pkcePair,
  startOAuthTestPlatform,
  type TestUser,
} from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';

/** FastAPI's HTTPValidationError, as the facade answers malformed input. */
interface HTTPValidationBody {
  detail: { type: string; loc: (string | number)[]; msg: string }[];
}

const STATE_SECRET = 'brain-facade-state-secret-0123456789abcdef';
const CLIENT_ID = 'mindgate-gateway-brain';
const REDIRECT = 'http://127.0.0.1:9/facade-callback';

let platform: TestPlatform;
let base: string;
let authUrl: string;
let apiUrl: string;
let mcpUrl: string;
let facade: string;
const logs: string[] = [];

/** Alice: signed up by the direct path, which created her organization. */
let alice: { user: TestUser; organizationId: string; direct: Client };

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ GATEWAY_STATE_SECRET: STATE_SECRET }, { logs });
  base = platform.ctx.config.publicUrls.gateway;
  authUrl = platform.ctx.config.publicUrls.auth;
  apiUrl = platform.ctx.config.publicUrls.api;
  mcpUrl = `${base}/brain/mcp`;
  facade = `${base}/brain`;
  const direct = await obtainAccessToken(platform, { resource: mcpUrl, user: newTestUser('alice') });
  alice = { user: direct.user, organizationId: direct.organizationId, direct: await bearerClient(direct.access_token) };
}, 180_000);

afterAll(async () => {
  await alice?.direct.close();
  await platform?.stop();
});

/** An SDK client calling the Brain with a fixed bearer token. */
async function bearerClient(token: string): Promise<Client> {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult & { structuredContent?: any }> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** A raw JSON-RPC tools/call with a token: the status and the WWW-Authenticate challenge. */
async function rawCall(token: string): Promise<{ status: number; challenge: string | null }> {
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search_memories', arguments: { namespace: 'knowledge', query: 'x' } },
    }),
  });
  await res.body?.cancel();
  return { status: res.status, challenge: res.headers.get('www-authenticate') };
}

async function postForm(url: string, form: Record<string, string>): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/**
 * The SDK's OAuth client provider of an MCP client that uses the facade: its discovery state
 * names the facade, the second authorization server of the protected-resource metadata, so the
 * SDK registers, authorizes, redeems and refreshes there. The browser part is played by
 * driveFacadeAuthorization.
 */
class FacadeOAuthProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  discovery: OAuthDiscoveryState;
  authorizationUrls: URL[] = [];
  code?: string;
  callback?: URL;
  jar = new CookieJar();
  registrations = 0;
  private readonly user: TestUser;
  private readonly organizationId: string;

  constructor(authorizationServerUrl: string, user: TestUser, organizationId: string) {
    this.discovery = { authorizationServerUrl };
    this.user = user;
    this.organizationId = organizationId;
  }

  get redirectUrl() {
    return REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK facade client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state() {
    return 'facade-client-state';
  }

  discoveryState() {
    return this.discovery;
  }

  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }

  clientInformation() {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed) {
    this.registrations++;
    this.info = info;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }

  async redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
    const done = await driveFacadeAuthorization(authUrl, url.href, REDIRECT, {
      user: this.user,
      mode: 'sign-in',
      organizationId: this.organizationId,
      jar: this.jar,
    });
    this.code = done.code;
    this.callback = done.callback;
  }

  saveCodeVerifier(v: string) {
    this.verifier = v;
  }

  codeVerifier() {
    return this.verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'client') this.info = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
  }
}

interface FacadeSession {
  client: Client;
  provider: FacadeOAuthProvider;
}

/** The SDK's whole flow through the facade: 401, registration, consent pages, code, token, connect. */
async function connectThroughFacade(user: TestUser, organizationId: string): Promise<FacadeSession> {
  const prm = (await (await fetch(`${base}/.well-known/oauth-protected-resource/brain/mcp`)).json()) as { authorization_servers: string[] };
  const provider = new FacadeOAuthProvider(prm.authorization_servers[1], user, organizationId);
  const first = new Client({ name: 'facade', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  await transport.finishAuth(provider.code!);
  const client = new Client({ name: 'facade', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
  return { client, provider };
}

describe('discovery', () => {
  it("names {auth_url} first and the facade second in the Brain's protected-resource metadata", async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource/brain/mcp',
      '/.well-known/oauth-protected-resource',
      '/brain/.well-known/oauth-protected-resource',
    ]) {
      const prm = (await (await fetch(`${base}${path}`)).json()) as Record<string, unknown>;
      expect(prm.authorization_servers, path).toEqual([authUrl, facade]);
    }
  });

  it('describes the facade with issuer {base_url}/brain in every per-server form', async () => {
    for (const path of [
      '/.well-known/oauth-authorization-server/brain',
      '/.well-known/oauth-authorization-server/brain/mcp',
      '/brain/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration/brain',
      '/brain/.well-known/openid-configuration',
    ]) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(200);
      const doc = (await res.json()) as Record<string, unknown>;
      expect(doc, path).toMatchObject({
        issuer: facade,
        authorization_endpoint: `${facade}/oauth/authorize`,
        token_endpoint: `${facade}/oauth/token`,
        registration_endpoint: `${facade}/oauth/register`,
        scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
      });
      // ID tokens are the platform's: the OpenID form names its keys.
      if (path.includes('openid')) expect(doc.jwks_uri, path).toBe(`${authUrl}/jwks`);
    }
    // The SDK's discovery, probing from the issuer URL, accepts the document (RFC 8414 §3.3).
    const metadata = await discoverAuthorizationServerMetadata(facade);
    expect(metadata?.issuer).toBe(facade);
  });

  it('describes the facade at the root forms too, brain being the default server', async () => {
    const doc = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/token`,
      registration_endpoint: `${base}/register`,
    });
  });
});

describe("the gateway's client at the authorization server", () => {
  it('is registered at start in the records store, with the gateway callback and a secret derived from GATEWAY_STATE_SECRET', async () => {
    const doc = await platform.ctx.stores.records.collection(collectionName('Client')).get(CLIENT_ID);
    expect(doc).toBeDefined();
    // Stored with the secret sealed under the key-encryption key, never in clear.
    expect(JSON.parse(doc!.payload as string)).not.toHaveProperty('client_secret');
    const { payload } = openClientRecord(platform.ctx.keyEncryption, CLIENT_ID, doc!.payload as string);
    expect(payload).toMatchObject({
      client_id: CLIENT_ID,
      client_secret: derivePlatformClientSecret(STATE_SECRET, CLIENT_ID),
      redirect_uris: [`${facade}/oauth/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(payload).not.toHaveProperty('organization_id');
  });

  it('is registered idempotently: what a replica with the same configuration writes is already there', async () => {
    const surface = createGatewaySurface(platform.ctx);
    try {
      expect(surface.platformClients.map((c) => c.clientId)).toEqual([CLIENT_ID]);
      const outcomes = await registerGatewayClients(
        platform.ctx.stores.records,
        platform.ctx.keyEncryption,
        surface.platformClients,
        platform.ctx.logger,
      );
      expect(outcomes).toEqual({ [CLIENT_ID]: 'unchanged' });
    } finally {
      await surface.close?.();
    }
  });

  it('warns, without the secrets, when a process with another GATEWAY_STATE_SECRET registered it', async () => {
    const records = platform.ctx.stores.records;
    const lines: string[] = [];
    const logger = createLogger(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      }),
    );
    const ours = createGatewaySurface(platform.ctx);
    const otherSecret = 'a-replica-with-another-state-secret-0123';
    const other = createGatewaySurface({
      ...platform.ctx,
      config: { ...platform.ctx.config, gateway: { ...platform.ctx.config.gateway, stateSecrets: [otherSecret] } },
    });
    try {
      expect(await registerGatewayClients(records, platform.ctx.keyEncryption, other.platformClients, logger)).toEqual({
        [CLIENT_ID]: 'updated',
      });
      expect(await registerGatewayClients(records, platform.ctx.keyEncryption, ours.platformClients, logger)).toEqual({
        [CLIENT_ID]: 'updated',
      });
      expect(lines.filter((l) => l.includes('replicas must share GATEWAY_STATE_SECRET'))).toHaveLength(2);
      for (const secret of [
        otherSecret,
        STATE_SECRET,
        derivePlatformClientSecret(otherSecret, CLIENT_ID),
        derivePlatformClientSecret(STATE_SECRET, CLIENT_ID),
      ]) {
        expect(lines.join('\n')).not.toContain(secret);
      }
      // A rotation is not a clash: a secret derived from one of the configured secrets is expected.
      lines.length = 0;
      const rotated = createGatewaySurface({
        ...platform.ctx,
        config: { ...platform.ctx.config, gateway: { ...platform.ctx.config.gateway, stateSecrets: [otherSecret, STATE_SECRET] } },
      });
      expect(await registerGatewayClients(records, platform.ctx.keyEncryption, rotated.platformClients, logger)).toEqual({
        [CLIENT_ID]: 'updated',
      });
      expect(await registerGatewayClients(records, platform.ctx.keyEncryption, ours.platformClients, logger)).toEqual({
        [CLIENT_ID]: 'updated',
      });
      expect(lines.filter((l) => l.includes('replicas must share'))).toHaveLength(1);
      await rotated.close?.();
    } finally {
      await registerGatewayClients(records, platform.ctx.keyEncryption, ours.platformClients, logger);
      await Promise.all([ours.close?.(), other.close?.()]);
    }
  });

  it('is not accepted by the authorization server with another secret', async () => {
    const basic = Buffer.from(`${CLIENT_ID}:${derivePlatformClientSecret('another-secret-0123456789abcdef0123', CLIENT_ID)}`).toString(
      'base64',
    );
    const res = await fetch(`${authUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x' }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as Record<string, unknown>).error).toBe('invalid_client');
  });
});

describe('end to end with the MCP SDK client', () => {
  let session: FacadeSession;

  afterAll(async () => {
    await session?.client.close();
  });

  it('registers at the facade, passes both consent pages, redeems the gateway code and calls the Brain', async () => {
    await call(alice.direct, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'oncall/pager',
      title: 'Paging the on-call engineer',
      content: 'Page the on-call engineer through the incident bot; never call personal phones.',
    });
    session = await connectThroughFacade(alice.user, alice.organizationId);
    const { provider } = session;

    // Registration, authorization and redemption all happened at the facade.
    expect(provider.registrations).toBe(1);
    // The gateway's client, with the name the client registered signed into its id.
    expect(provider.info!.client_id.startsWith(`${CLIENT_ID}.`)).toBe(true);
    expect(provider.info).not.toHaveProperty('client_secret');
    expect(provider.authorizationUrls).toHaveLength(1);
    const authorizationUrl = provider.authorizationUrls[0];
    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${facade}/oauth/authorize`);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(provider.callback!.searchParams.get('iss')).toBe(facade);
    expect(provider.callback!.searchParams.get('state')).toBe('facade-client-state');
    expect(provider.code).toMatch(/^mgc1\./);

    // The platform's token: for the Brain's MCP URL, the organization picked at {auth_url}, the grant.
    const claims = decodeJwt(provider.saved!.access_token);
    // client_name is the name the client registered at the facade, carried through consent.
    expect(claims).toMatchObject({
      iss: authUrl,
      aud: mcpUrl,
      org: alice.organizationId,
      client_id: CLIENT_ID,
      client_name: 'SDK facade client',
    });
    expect(typeof claims.gid).toBe('string');
    expect(provider.saved!.refresh_token).toMatch(/^mgr1\./);

    // The organization's memories, written by a client that went to {auth_url} directly.
    const fetched = await call(session.client, 'fetch_memories', { namespace: 'knowledge', keys: ['oncall/pager'] });
    expect(fetched.isError).toBeFalsy();
    expect(fetched.structuredContent.memories[0]).toMatchObject({ key: 'oncall/pager', version: 1 });
    const search = await call(session.client, 'search_memories', { namespace: 'knowledge', query: 'how do I page the on-call engineer' });
    expect(search.structuredContent.results[0].key).toBe('oncall/pager');

    // And the other way round: what the facade client writes, the direct client reads.
    const created = await call(session.client, 'manage_memories', {
      action: 'create',
      namespace: 'episodes',
      key: 'incident/db-failover',
      content: 'The primary database failed over at 03:10; replication lag stayed under a second.',
    });
    expect(created.structuredContent.outcome).toBe('created');
    const seen = await call(alice.direct, 'fetch_memories', { namespace: 'episodes', keys: ['incident/db-failover'] });
    // Named by the client that wrote it through the facade, not by the gateway's client, and its user.
    expect(seen.structuredContent.memories[0]).toMatchObject({
      key: 'incident/db-failover',
      written_by: `SDK facade client for ${alice.user.name}`,
    });
    expect(text(seen)).toContain(`by SDK facade client for ${alice.user.name}`);
  });

  it('refuses a second redemption of the gateway code with invalid_grant', async () => {
    const { provider } = session;
    const again = await postForm(`${facade}/oauth/token`, {
      grant_type: 'authorization_code',
      code: provider.code!,
      redirect_uri: REDIRECT,
      code_verifier: provider.verifier,
      client_id: CLIENT_ID,
    });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('refreshes through the facade when the Brain refuses the access token', async () => {
    const { provider } = session;
    const before = provider.saved!;
    provider.saved = { ...before, access_token: 'not-a-valid-token' };
    const result = await call(session.client, 'fetch_memories', { namespace: 'knowledge', keys: ['oncall/pager'] });
    expect(result.isError).toBeFalsy();
    expect(provider.registrations).toBe(1);
    expect(provider.authorizationUrls).toHaveLength(1);
    expect(provider.saved!.access_token).not.toBe('not-a-valid-token');
    expect(provider.saved!.refresh_token).toMatch(/^mgr1\./);
    expect(provider.saved!.refresh_token).not.toBe(before.refresh_token);
    const claims = decodeJwt(provider.saved!.access_token);
    expect(claims).toMatchObject({ aud: mcpUrl, org: alice.organizationId, client_id: CLIENT_ID, gid: decodeJwt(before.access_token).gid });
  });
});

/** The facade's flow step by step over plain HTTP, with the test browser for the two pages. */
async function facadeTokens(user: TestUser, organizationId: string): Promise<Record<string, any>> {
  const reg = await fetch(`${facade}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'step by step' }),
  });
  expect(reg.status).toBe(200);
  const registered = (await reg.json()) as Record<string, unknown>;
  const { verifier, challenge } = pkcePair();
  const url = new URL(`${facade}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: String(registered.client_id),
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 's1',
    scope: 'openid profile email offline_access',
    resource: mcpUrl,
  }))
    url.searchParams.set(k, v);
  const done = await driveFacadeAuthorization(authUrl, url.href, REDIRECT, { user, mode: 'sign-in', organizationId });
  const form = { grant_type: 'authorization_code', code: done.code, redirect_uri: REDIRECT, client_id: CLIENT_ID };
  // PKCE is the gateway's to check: a wrong verifier does not redeem (nor spend) the code.
  expect(await postForm(`${facade}/oauth/token`, { ...form, code_verifier: pkcePair().verifier })).toMatchObject({
    status: 400,
    body: { error: 'invalid_grant' },
  });
  expect(await postForm(`${facade}/oauth/token`, form)).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  const res = await postForm(`${facade}/oauth/token`, { ...form, code_verifier: verifier });
  expect(res.status).toBe(200);
  expect(await postForm(`${facade}/oauth/token`, { ...form, code_verifier: verifier })).toMatchObject({
    status: 400,
    body: { error: 'invalid_grant' },
  });
  return res.body;
}

describe('rotation of GATEWAY_STATE_SECRET', () => {
  let replica: Listener;
  const NEXT = 'next-brain-facade-state-secret-0123456789';

  beforeAll(async () => {
    // A replica restarted with the new secret first, while the client registered at the
    // authorization server still has the secret of the old one.
    const ctx = platform.ctx;
    const rotated = { ...ctx, config: { ...ctx.config, gateway: { ...ctx.config.gateway, stateSecrets: [NEXT, STATE_SECRET] } } };
    replica = await startListener(createGatewaySurface(rotated), { host: '127.0.0.1', port: 0, logger: ctx.logger });
  });

  afterAll(async () => {
    await replica?.close(0);
  });

  it('refreshes with the previous secret when the authorization server refuses the new one', async () => {
    const tokens = await facadeTokens(alice.user, alice.organizationId);
    const res = await postForm(`${replica.url}/brain/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: CLIENT_ID,
    });
    expect(res.status).toBe(200);
    expect((await rawCall(res.body.access_token)).status).toBe(200);
  });
});

describe('grants and revocation', () => {
  it('revokes the grant when a rotated refresh token is used again, and the Brain refuses its tokens', async () => {
    const first = await facadeTokens(alice.user, alice.organizationId);
    expect((await rawCall(first.access_token)).status).toBe(200);
    const refreshed = await postForm(`${facade}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: CLIENT_ID,
    });
    expect(refreshed.status).toBe(200);
    expect((await rawCall(refreshed.body.access_token)).status).toBe(200);
    // The old refresh token again: the platform sees a reuse and revokes the whole grant.
    const reuse = await postForm(`${facade}/oauth/token`, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: CLIENT_ID,
    });
    expect(reuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const denied = await rawCall(refreshed.body.access_token);
    expect(denied.status).toBe(401);
    expect(denied.challenge).toContain('revoked');
    expect(
      await postForm(`${facade}/oauth/token`, {
        grant_type: 'refresh_token',
        refresh_token: refreshed.body.refresh_token,
        client_id: CLIENT_ID,
      }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it("revokes one facade user's grant from the dashboard without touching the other facade users", async () => {
    const one = await facadeTokens(alice.user, alice.organizationId);
    const other = await facadeTokens(alice.user, alice.organizationId);
    const admin = await obtainAccessToken(platform, {
      resource: apiUrl,
      user: alice.user,
      mode: 'sign-in',
      organizationId: alice.organizationId,
    });
    const grantId = decodeJwt(one.access_token).gid as string;
    const revoked = await fetch(`${apiUrl}/organizations/${alice.organizationId}/oauth-clients/${CLIENT_ID}/grants/${grantId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.access_token}` },
    });
    expect(revoked.status).toBe(200);
    const denied = await rawCall(one.access_token);
    expect(denied.status).toBe(401);
    expect(denied.challenge).toContain('revoked');
    expect(
      await postForm(`${facade}/oauth/token`, { grant_type: 'refresh_token', refresh_token: one.refresh_token, client_id: CLIENT_ID }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await rawCall(other.access_token)).status).toBe(200);
    expect(
      (await postForm(`${facade}/oauth/token`, { grant_type: 'refresh_token', refresh_token: other.refresh_token, client_id: CLIENT_ID }))
        .status,
    ).toBe(200);
  });

  it("lists facade grants under the gateway's client, and revoking that client cuts every facade user of the organization only", async () => {
    const bob = newTestUser('bob');
    const bobDirect = await obtainAccessToken(platform, { resource: mcpUrl, user: bob });
    const bobFacade = await facadeTokens(bob, bobDirect.organizationId);
    const aliceFacade = await facadeTokens(alice.user, alice.organizationId);
    const admin = await obtainAccessToken(platform, {
      resource: apiUrl,
      user: alice.user,
      mode: 'sign-in',
      organizationId: alice.organizationId,
    });

    const listed = await fetch(`${apiUrl}/organizations/${alice.organizationId}/oauth-clients`, {
      headers: { authorization: `Bearer ${admin.access_token}` },
    });
    const { clients } = (await listed.json()) as {
      clients: { client_id: string; client_name: string; grants: { id: string; resources: string[] }[] }[];
    };
    const gateway = clients.find((c) => c.client_id === CLIENT_ID)!;
    expect(gateway.client_name).toBe('Mindgate gateway (brain)');
    expect(gateway.grants.map((g) => g.id)).toContain(decodeJwt(aliceFacade.access_token).gid);
    expect(gateway.grants.every((g) => g.resources.includes(mcpUrl))).toBe(true);

    const revoked = await fetch(`${apiUrl}/organizations/${alice.organizationId}/oauth-clients/${CLIENT_ID}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.access_token}` },
    });
    expect(revoked.status).toBe(200);
    expect(await rawCall(aliceFacade.access_token)).toMatchObject({ status: 401 });
    expect(
      await postForm(`${facade}/oauth/token`, {
        grant_type: 'refresh_token',
        refresh_token: aliceFacade.refresh_token,
        client_id: CLIENT_ID,
      }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // Another organization's facade users, and the organization's direct clients, keep working.
    expect((await rawCall(bobFacade.access_token)).status).toBe(200);
    expect((await call(alice.direct, 'search_memories', { namespace: 'knowledge', query: 'page' })).isError).toBeFalsy();
  });
});

describe("malformed input at the Brain's facade", () => {
  it('answers registration with a 422 or an RFC 7591 error', async () => {
    const post = (body: string) =>
      fetch(`${facade}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const missing = await post('{}');
    expect(missing.status).toBe(422);
    expect(((await missing.json()) as HTTPValidationBody).detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'redirect_uris'] });
    const broken = await post('{"redirect_uris": [');
    expect(broken.status).toBe(422);
    expect(((await broken.json()) as HTTPValidationBody).detail[0].type).toBe('json_invalid');
    const evil = await post(JSON.stringify({ redirect_uris: ['javascript:alert(1)'] }));
    expect(evil.status).toBe(400);
    expect(await evil.json()).toMatchObject({ error: 'invalid_redirect_uri' });
    const loop = await post(JSON.stringify({ redirect_uris: [`${facade}/oauth/callback`] }));
    expect(loop.status).toBe(400);
  });

  it('answers authorize and callback with a 422 or a 400 page, never a redirect', async () => {
    const none = await fetch(`${facade}/oauth/authorize`, { redirect: 'manual' });
    expect(none.status).toBe(422);
    const { challenge } = pkcePair();
    const wrongClient = await fetch(
      `${facade}/oauth/authorize?response_type=code&client_id=someone-else&redirect_uri=${encodeURIComponent(REDIRECT)}&code_challenge=${challenge}&code_challenge_method=S256`,
      { redirect: 'manual' },
    );
    expect(wrongClient.status).toBe(400);
    expect(wrongClient.headers.get('location')).toBeNull();
    expect(wrongClient.headers.get('content-type')).toMatch(/text\/html/);
    const forged = await fetch(`${facade}/oauth/callback?code=abc&state=forged.state.value`, { redirect: 'manual' });
    expect(forged.status).toBe(400);
    expect(forged.headers.get('location')).toBeNull();
    expect((await fetch(`${facade}/oauth/callback`, { redirect: 'manual' })).status).toBe(422);
  });

  it('answers the token endpoint with a 422 or an RFC 6749 error', async () => {
    const json = await fetch(`${facade}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"grant_type":"authorization_code"}',
    });
    expect(json.status).toBe(422);
    expect(((await json.json()) as HTTPValidationBody).detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'grant_type'] });
    expect(
      await postForm(`${facade}/oauth/token`, { grant_type: 'authorization_code', code: 'x', client_id: 'someone-else' }),
    ).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(
      await postForm(`${facade}/oauth/token`, {
        grant_type: 'authorization_code',
        code: 'mgc1.forged',
        redirect_uri: REDIRECT,
        code_verifier: pkcePair().verifier,
        client_id: CLIENT_ID,
      }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(
      await postForm(`${facade}/oauth/token`, { grant_type: 'refresh_token', refresh_token: 'not-ours', client_id: CLIENT_ID }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await postForm(`${facade}/oauth/token`, { grant_type: 'password', client_id: CLIENT_ID })).toMatchObject({
      status: 400,
      body: { error: 'unsupported_grant_type' },
    });
  });
});

describe('secrets', () => {
  it("never writes the state secret or the gateway client's secret to the log", () => {
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.some((l) => l.includes('registered the gateway client'))).toBe(true);
    const secrets = [STATE_SECRET, derivePlatformClientSecret(STATE_SECRET, CLIENT_ID)];
    for (const line of logs) for (const secret of secrets) expect(line).not.toContain(secret);
  });
});
