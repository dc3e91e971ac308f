// The organization parts of the REST API over real HTTP, with tokens from the real
// authorization server: organizations, API keys, OAuth clients and their revocation,
// confidential clients with client_credentials, tenant isolation, OpenAPI and /docs.
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { obtainAccessToken, startOAuthTestPlatform, tokenRequest, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let auth: string;
let a: ObtainedToken;
let b: ObtainedToken;

const call = restClient(() => api);

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  auth = platform.ctx.config.publicUrls.auth;
  a = await obtainAccessToken(platform, { resource: api });
  b = await obtainAccessToken(platform, { resource: api });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('authentication', () => {
  it('serves /health without credentials', async () => {
    const r = await call('/health');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'ok', service: 'api' });
  });

  it('answers 401 with a Bearer challenge and a problem body when credentials are missing', async () => {
    const r = await call('/organizations');
    expect(r.status).toBe(401);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer realm="mindgate-api", resource_metadata="http/);
    expect(r.json).toMatchObject({ status: 401, title: 'Unauthorized' });
  });

  it('refuses malformed, forged and foreign-audience tokens with invalid_token', async () => {
    for (const token of ['not-a-jwt', `${a.access_token.slice(0, -4)}AAAA`, 'a.b.c']) {
      const r = await call('/organizations', { token });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
    const brain = await obtainAccessToken(platform, { resource: `${platform.ctx.config.publicUrls.gateway}/brain/mcp` });
    const r = await call('/organizations', { token: brain.access_token });
    expect(r.status).toBe(401);
    expect(r.json.detail).toContain('not issued for this resource');
    const basic = await fetch(`${api}/organizations`, { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    expect(basic.status).toBe(401);
    expect(basic.headers.get('www-authenticate')).toContain('error="invalid_request"');
  });

  it('refuses a request carrying both a token and an API key, whichever is valid', async () => {
    const key = (await call(`/organizations/${a.organizationId}/api-keys`, { token: a.access_token, body: { name: 'both' } })).json.secret;
    for (const [token, apiKey] of [
      [a.access_token, key],
      ['not-a-jwt', key],
      [a.access_token, 'mg_nope'],
    ]) {
      const r = await call('/organizations', { token, apiKey });
      expect(r.status).toBe(401);
      expect(r.json.detail).toBe('send either Authorization or x-api-key, not both');
      expect(r.headers.get('www-authenticate')).toContain('error="invalid_request"');
    }
  });

  it('publishes protected resource metadata naming the authorization server', async () => {
    const r = await call('/.well-known/oauth-protected-resource');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ resource: api, authorization_servers: [auth] });
  });
});

describe('organizations', () => {
  it("lists the caller's organizations, marking the one the token acts for", async () => {
    const r = await call('/organizations', { token: a.access_token });
    expect(r.status).toBe(200);
    expect(r.json.organizations).toHaveLength(1);
    expect(r.json.organizations[0]).toMatchObject({ id: a.organizationId, name: a.user.organization, role: 'owner', current: true });
    expect(r.json.organizations[0].brain_id).toMatch(/^brain_/);
    expect(JSON.stringify(r.json)).not.toContain(b.organizationId);
  });

  it('started the organization on a Professional trial at onboarding, held by the billing service', async () => {
    const { subscription, effectivePlan, entitlements } = await platform.ctx.clients.billing.getEntitlements({
      organizationId: a.organizationId,
    });
    expect(effectivePlan).toBe(Plan.PROFESSIONAL);
    expect(entitlements?.entityGraph).toBe(true);
    const days = (timestampMs(subscription!.trialEndTime!) - Date.now()) / 86_400_000;
    expect(Math.round(days)).toBe(14);
  });

  it('reads its own organization and refuses another one with 403', async () => {
    expect((await call(`/organizations/${a.organizationId}`, { token: a.access_token })).status).toBe(200);
    const r = await call(`/organizations/${b.organizationId}`, { token: a.access_token });
    expect(r.status).toBe(403);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
  });

  it('answers 422 problems for malformed path parameters', async () => {
    const r = await call('/organizations/not-an-org', { token: a.access_token });
    expect(r.status).toBe(422);
    expect(r.json.errors[0].loc).toEqual(['path', 'organization_id']);
  });
});

describe('API keys', () => {
  it('creates a key shown once, lists it without the secret, and authenticates with it', async () => {
    const created = await call(`/organizations/${a.organizationId}/api-keys`, { token: a.access_token, body: { name: 'ci' } });
    expect(created.status).toBe(201);
    const secret: string = created.json.secret;
    expect(secret).toMatch(/^mg_k[A-Za-z0-9]{16}_/);
    expect(created.json.api_key).toMatchObject({ name: 'ci', organization_id: a.organizationId, prefix: secret.slice(0, 12) });

    const listed = await call(`/organizations/${a.organizationId}/api-keys`, { token: a.access_token });
    expect(listed.status).toBe(200);
    expect(listed.json.api_keys.map((k: Json) => k.id)).toContain(created.json.api_key.id);
    expect(listed.text).not.toContain(secret);
    expect(listed.text).not.toContain(secret.slice(20));

    const orgs = await call('/organizations', { apiKey: secret });
    expect(orgs.status).toBe(200);
    expect(orgs.json.organizations).toEqual([expect.objectContaining({ id: a.organizationId, current: true, role: null })]);
    // Tenant isolation: A's key never reads B.
    expect((await call(`/organizations/${b.organizationId}`, { apiKey: secret })).status).toBe(403);
    expect((await call(`/organizations/${b.organizationId}/api-keys`, { apiKey: secret })).status).toBe(403);
    // A key cannot mint keys.
    expect((await call(`/organizations/${a.organizationId}/api-keys`, { apiKey: secret, body: { name: 'x' } })).status).toBe(403);
  });

  it('rotates a key (the old secret stops working) and revokes it', async () => {
    const created = await call(`/organizations/${a.organizationId}/api-keys`, { token: a.access_token, body: { name: 'rotating' } });
    const id = created.json.api_key.id;
    const rotated = await call(`/organizations/${a.organizationId}/api-keys/${id}/rotate`, { token: a.access_token, method: 'POST' });
    expect(rotated.status).toBe(200);
    expect(rotated.json.secret).not.toBe(created.json.secret);
    expect((await call('/organizations', { apiKey: created.json.secret })).status).toBe(401);
    expect((await call('/organizations', { apiKey: rotated.json.secret })).status).toBe(200);
    // B cannot touch A's key, and learns nothing about it.
    expect((await call(`/organizations/${a.organizationId}/api-keys/${id}`, { token: b.access_token, method: 'DELETE' })).status).toBe(403);
    expect((await call(`/organizations/${b.organizationId}/api-keys/${id}`, { token: b.access_token, method: 'DELETE' })).status).toBe(404);
    const revoked = await call(`/organizations/${a.organizationId}/api-keys/${id}`, { token: a.access_token, method: 'DELETE' });
    expect(revoked.status).toBe(204);
    const after = await call('/organizations', { apiKey: rotated.json.secret });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('invalid_token');
    expect((await call(`/organizations/${a.organizationId}/api-keys/${id}`, { token: a.access_token, method: 'DELETE' })).status).toBe(404);
  });

  it('answers malformed bodies and parameters with documented problems, never 500', async () => {
    const path = `/organizations/${a.organizationId}/api-keys`;
    const cases: [Parameters<typeof call>[1], number][] = [
      [{ token: a.access_token, rawBody: '{"name":' }, 422],
      [{ token: a.access_token, rawBody: '' }, 422],
      [{ token: a.access_token, body: {} }, 422],
      [{ token: a.access_token, body: { name: '' } }, 422],
      [{ token: a.access_token, body: { name: 42 } }, 422],
      [{ token: a.access_token, body: { name: 'x', extra: true } }, 422],
      [{ token: a.access_token, body: [] }, 422],
      [{ token: a.access_token, body: { name: 'x'.repeat(201) } }, 422],
      [{ token: a.access_token, rawBody: 'name=x', contentType: 'application/x-www-form-urlencoded' }, 415],
      [{ token: a.access_token, rawBody: JSON.stringify({ name: 'x'.repeat(2_000_000) }) }, 413],
    ];
    for (const [init, status] of cases) {
      const r = await call(path, init);
      expect(r.status, JSON.stringify(init).slice(0, 120)).toBe(status);
      expect(r.headers.get('content-type')).toBe('application/problem+json');
    }
    const invalid = await call(path, { token: a.access_token, body: { name: 42 } });
    expect(invalid.json.errors[0]).toMatchObject({ loc: ['body', 'name'] });
    for (const bad of ['/api-keys/nope/rotate', '/api-keys/k123/rotate']) {
      const r = await call(`/organizations/${a.organizationId}${bad}`, { token: a.access_token, method: 'POST' });
      expect(r.status).toBe(422);
    }
    expect((await call(`/organizations/${a.organizationId}/api-keys`, { token: a.access_token, method: 'PUT' })).status).toBe(405);
  });
});

describe('OAuth clients and revocation from the dashboard', () => {
  it("lists the clients acting for the organization, with their grants, and not other organizations' clients", async () => {
    const r = await call(`/organizations/${a.organizationId}/oauth-clients`, { token: a.access_token });
    expect(r.status).toBe(200);
    const client = r.json.clients.find((c: Json) => c.client_id === a.clientId);
    expect(client).toMatchObject({ client_name: 'Test client' });
    expect(client.grants[0]).toMatchObject({ user_id: a.user && expect.any(String), resources: [api] });
    expect(JSON.stringify(r.json)).not.toContain(b.clientId);
    expect((await call(`/organizations/${b.organizationId}/oauth-clients`, { token: a.access_token })).status).toBe(403);
  });

  it("revokes a client's tokens: its access token stops working at the API and its refresh token is dead", async () => {
    const victim = await obtainAccessToken(platform, { resource: api, user: a.user, mode: 'sign-in' });
    expect(victim.organizationId).toBe(a.organizationId);
    expect((await call('/organizations', { token: victim.access_token })).status).toBe(200);
    const r = await call(`/organizations/${a.organizationId}/oauth-clients/${victim.clientId}/revoke`, {
      token: a.access_token,
      method: 'POST',
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ client_id: victim.clientId, revoked_grants: 1 });
    const denied = await call('/organizations', { token: victim.access_token });
    expect(denied.status).toBe(401);
    expect(denied.json.detail).toContain('revoked');
    const refreshed = await tokenRequest(auth, {
      grant_type: 'refresh_token',
      refresh_token: victim.refresh_token!,
      client_id: victim.clientId,
    });
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as Json).error).toBe('invalid_grant');
    // The revoking user's own client is untouched.
    expect((await call('/organizations', { token: a.access_token })).status).toBe(200);
  });

  it("revokes one grant of a client: that authorization stops working, the client's other grant does not", async () => {
    const first = await obtainAccessToken(platform, { resource: api, user: a.user, mode: 'sign-in' });
    const second = await obtainAccessToken(platform, { resource: api, user: a.user, mode: 'sign-in', client: first.client });
    const grants = (await call(`/organizations/${a.organizationId}/oauth-clients`, { token: a.access_token })).json.clients.find(
      (c: Json) => c.client_id === first.clientId,
    ).grants as Json[];
    expect(grants).toHaveLength(2);
    const gid = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')).gid as string;
    expect(grants.map((g) => g.id).sort()).toEqual([gid(first.access_token), gid(second.access_token)].sort());

    const path = (grantId: string, org = a.organizationId, client = first.clientId) =>
      `/organizations/${org}/oauth-clients/${client}/grants/${grantId}/revoke`;
    expect((await call(path(gid(first.access_token)), { token: b.access_token, method: 'POST' })).status).toBe(403);
    expect(
      (await call(path(gid(first.access_token), a.organizationId, a.clientId), { token: a.access_token, method: 'POST' })).status,
    ).toBe(404);
    expect((await call(path('no-such-grant'), { token: a.access_token, method: 'POST' })).status).toBe(404);
    const malformed = await call(path('bad%20grant'), { token: a.access_token, method: 'POST' });
    expect(malformed.status).toBe(422);

    const r = await call(path(gid(first.access_token)), { token: a.access_token, method: 'POST' });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ client_id: first.clientId, revoked_grants: 1 });
    expect((await call('/organizations', { token: first.access_token })).status).toBe(401);
    const refreshed = await tokenRequest(auth, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token!,
      client_id: first.clientId,
    });
    expect(((await refreshed.json()) as Json).error).toBe('invalid_grant');
    expect((await call('/organizations', { token: second.access_token })).status).toBe(200);
    expect((await call(path(gid(first.access_token)), { token: a.access_token, method: 'POST' })).status).toBe(404);
  });

  it('does not let another organization revoke a client', async () => {
    const r = await call(`/organizations/${a.organizationId}/oauth-clients/${a.clientId}/revoke`, {
      token: b.access_token,
      method: 'POST',
    });
    expect(r.status).toBe(403);
    expect((await call('/organizations', { token: a.access_token })).status).toBe(200);
  });
});

describe('paging of the client lists', () => {
  it('pages the OAuth clients and the confidential clients with the list envelope, and refuses a foreign page_token', async () => {
    const owner = await obtainAccessToken(platform, { resource: api });
    const org = owner.organizationId;
    await obtainAccessToken(platform, { resource: api, user: owner.user, mode: 'sign-in' });
    await obtainAccessToken(platform, { resource: api, user: owner.user, mode: 'sign-in' });
    const pages = async (path: string) => {
      const seen: string[] = [];
      let token = '';
      for (let i = 0; i < 10; i++) {
        const r = await call(`${path}?page_size=1${token ? `&page_token=${token}` : ''}`, { token: owner.access_token });
        expect(r.status).toBe(200);
        expect(Object.keys(r.json).sort()).toEqual(['clients', 'next_page_token']);
        expect(r.json.clients.length).toBeLessThanOrEqual(1);
        seen.push(...r.json.clients.map((c: Json) => c.client_id));
        if (r.json.next_page_token === null) return seen;
        token = r.json.next_page_token;
      }
      throw new Error('too many pages');
    };
    const oauth = await pages(`/organizations/${org}/oauth-clients`);
    expect(oauth).toHaveLength(3);
    expect(new Set(oauth).size).toBe(3);
    for (const name of ['one', 'two', 'three']) {
      const r = await call(`/organizations/${org}/confidential-clients`, { token: owner.access_token, body: { name } });
      expect(r.status).toBe(201);
    }
    const confidential = await pages(`/organizations/${org}/confidential-clients`);
    expect(confidential).toHaveLength(3);
    const first = await call(`/organizations/${org}/confidential-clients?page_size=1`, { token: owner.access_token });
    const foreign = await call(`/organizations/${org}/oauth-clients?page_token=${first.json.next_page_token}`, {
      token: owner.access_token,
    });
    expect(foreign.status).toBe(422);
    expect(foreign.json.errors[0].loc).toEqual(['query', 'page_token']);
    expect((await call(`/organizations/${org}/oauth-clients?page_size=101`, { token: owner.access_token })).status).toBe(422);
  });
});

describe('confidential clients and client_credentials', () => {
  it('issues a client whose client_credentials tokens act for the organization only', async () => {
    const created = await call(`/organizations/${a.organizationId}/confidential-clients`, {
      token: a.access_token,
      body: { name: 'backend' },
    });
    expect(created.status).toBe(201);
    const { client, client_secret: secret } = created.json;
    expect(client).toMatchObject({ client_name: 'backend', organization_id: a.organizationId, grant_types: ['client_credentials'] });

    const listed = await call(`/organizations/${a.organizationId}/confidential-clients`, { token: a.access_token });
    expect(listed.json.clients.map((c: Json) => c.client_id)).toContain(client.client_id);
    expect(listed.text).not.toContain(secret);
    expect((await call(`/organizations/${b.organizationId}/confidential-clients`, { token: b.access_token })).json.clients).toEqual([]);

    const res = await tokenRequest(auth, { grant_type: 'client_credentials', resource: api }, { id: client.client_id, secret });
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as Json;
    expect(tokens.refresh_token).toBeUndefined();
    const claims = await platform.ctx.tokens.verify(tokens.access_token, api);
    expect(claims).toMatchObject({ organizationId: a.organizationId, clientId: client.client_id, subject: client.client_id });

    const orgs = await call('/organizations', { token: tokens.access_token });
    expect(orgs.json.organizations).toEqual([expect.objectContaining({ id: a.organizationId })]);
    expect((await call(`/organizations/${b.organizationId}`, { token: tokens.access_token })).status).toBe(403);
    expect((await call(`/organizations/${a.organizationId}/api-keys`, { token: tokens.access_token, body: { name: 'x' } })).status).toBe(
      403,
    );

    const wrong = await tokenRequest(
      auth,
      { grant_type: 'client_credentials', resource: api },
      { id: client.client_id, secret: `${secret}x` },
    );
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as Json).error).toBe('invalid_client');

    const rotated = await call(`/organizations/${a.organizationId}/confidential-clients/${client.client_id}/rotate-secret`, {
      token: a.access_token,
      method: 'POST',
    });
    expect(rotated.status).toBe(200);
    expect((await tokenRequest(auth, { grant_type: 'client_credentials', resource: api }, { id: client.client_id, secret })).status).toBe(
      401,
    );
    const fresh = await tokenRequest(
      auth,
      { grant_type: 'client_credentials', resource: api },
      { id: client.client_id, secret: rotated.json.client_secret },
    );
    expect(fresh.status).toBe(200);

    expect(
      (
        await call(`/organizations/${a.organizationId}/confidential-clients/${client.client_id}`, {
          token: b.access_token,
          method: 'DELETE',
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await call(`/organizations/${a.organizationId}/confidential-clients/${client.client_id}`, {
          token: a.access_token,
          method: 'DELETE',
        })
      ).status,
    ).toBe(204);
    expect((await call('/organizations', { token: tokens.access_token })).status).toBe(401);
    expect(
      (
        await tokenRequest(
          auth,
          { grant_type: 'client_credentials', resource: api },
          { id: client.client_id, secret: rotated.json.client_secret },
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await call(`/organizations/${a.organizationId}/confidential-clients/${client.client_id}`, {
          token: a.access_token,
          method: 'DELETE',
        })
      ).status,
    ).toBe(404);
  });

  it('refuses client_credentials for public clients and unknown resources', async () => {
    const pub = await tokenRequest(auth, { grant_type: 'client_credentials', client_id: a.clientId, resource: api });
    expect(pub.status).toBeGreaterThanOrEqual(400);
    expect(pub.status).toBeLessThan(500);
    const created = await call(`/organizations/${a.organizationId}/confidential-clients`, { token: a.access_token, body: { name: 'x' } });
    const res = await tokenRequest(
      auth,
      { grant_type: 'client_credentials', resource: 'https://elsewhere.example/' },
      { id: created.json.client.client_id, secret: created.json.client_secret },
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error).toBe('invalid_target');
  });
});

describe('OpenAPI and /docs', () => {
  it('describes every operation with a unique operationId and a description (OpenAPI 3.1, version 1.0.0)', async () => {
    const r = await call('/openapi.json');
    expect(r.status).toBe(200);
    expect(r.json.openapi).toBe('3.1.0');
    expect(r.json.info.version).toBe('1.0.0');
    const ids: string[] = [];
    for (const [path, item] of Object.entries(r.json.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.operationId, `${method} ${path}`).toBeTruthy();
        expect(op.description, `${method} ${path}`).toBeTruthy();
        ids.push(op.operationId);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(
      expect.arrayContaining(['listOrganizations', 'createApiKey', 'revokeOAuthClient', 'createConfidentialClient', 'getHealth']),
    );
    expect(r.json.paths['/organizations'].get.security).toEqual(expect.arrayContaining([{ BearerToken: [] }, { ApiKey: [] }]));
    expect(r.json.paths['/organizations/{organization_id}/api-keys'].post.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/CreateApiKey',
    );
    expect(r.json.components.securitySchemes.BearerToken).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  });

  it('serves an interactive reference with its assets locally', async () => {
    const page = await fetch(`${api}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of ['/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css', '/docs/assets/init.js']) {
      const res = await fetch(`${api}${asset}`);
      expect(res.status, asset).toBe(200);
      await res.arrayBuffer();
    }
  });
});
