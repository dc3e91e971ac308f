// The Brain MCP server end to end: the SDK's MCP client with its OAuth provider goes from a
// bare 401 through discovery, dynamic registration, sign-up and consent (PKCE) to every tool;
// a second client of the same organization sees the first one's memories; a client of another
// organization sees none; a revoked client is refused. Everything over real HTTP through the
// gateway at {base_url}/brain/mcp.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driveAuthorization, newTestUser, obtainAccessToken, startOAuthTestPlatform, type TestUser } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';

/** A JSON-RPC 2.0 reply as the MCP endpoint answers it. */
interface JsonRpcReply {
  result?: any;
  error?: { code: number; message: string };
}

let platform: TestPlatform;
let mcpUrl: string;
let authUrl: string;

const REDIRECT = 'http://127.0.0.1:9/mcp-callback';
const GATEWAY_KEY = 'operator-key-0123456789abcdef';

/** The SDK's OAuth client provider contract, kept in memory like a CLI would keep it on disk. */
class MemoryOAuthProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK test client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

interface Session {
  client: Client;
  provider: MemoryOAuthProvider;
  organizationId: string;
  user: TestUser;
}

/** Connects the SDK client: 401, discovery, registration, browser sign-in and consent, token, connect. */
async function signIn(user: TestUser, mode: 'sign-up' | 'sign-in' = 'sign-up'): Promise<Session> {
  const provider = new MemoryOAuthProvider();
  const first = new Client({ name: 'test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.info?.client_id).toBeTruthy();
  expect(provider.authorizationUrl?.origin).toBe(new URL(authUrl).origin);
  expect(provider.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
  expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(mcpUrl);
  const done = await driveAuthorization(authUrl, provider.authorizationUrl!.href, REDIRECT, { user, mode });
  await transport.finishAuth(done.code);
  expect(provider.saved?.access_token).toBeTruthy();
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
  return { client, provider, organizationId: done.organizationId, user };
}

async function call(s: Session, name: string, args: Record<string, unknown>): Promise<CallToolResult & { structuredContent?: any }> {
  return (await s.client.callTool({ name, arguments: args })) as CallToolResult;
}

const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

let alice: Session;

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ GATEWAY_KEYS: GATEWAY_KEY });
  mcpUrl = `${platform.ctx.config.publicUrls.gateway}/brain/mcp`;
  authUrl = platform.ctx.config.publicUrls.auth;
  alice = await signIn(newTestUser('alice'));
}, 180_000);

afterAll(async () => {
  await alice?.client.close();
  await platform?.stop();
});

describe('authentication', () => {
  it('answers an unauthenticated initialize with 401 and a challenge naming the metadata', async () => {
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toMatch(/^Bearer /);
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)![1];
    expect(challenge).toMatch(/scope="[^"]+"/);
    const metadata = (await (await fetch(metadataUrl)).json()) as { resource: string; authorization_servers: string[] };
    expect(metadata.resource).toBe(mcpUrl);
    // {auth_url} first (the SDK takes it: see signIn), then the gateway's facade in front of it.
    expect(metadata.authorization_servers).toEqual([authUrl, `${platform.ctx.config.publicUrls.gateway}/brain`]);
  });

  it('refuses invalid tokens and tokens for another audience with invalid_token', async () => {
    const post = (token: string) =>
      fetch(mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const garbage = await post('not-a-jwt');
    expect(garbage.status).toBe(401);
    expect(garbage.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    const api = await obtainAccessToken(platform, { resource: platform.ctx.config.publicUrls.api, user: alice.user, mode: 'sign-in' });
    const wrongAudience = await post(api.access_token);
    expect(wrongAudience.status).toBe(401);
    expect(wrongAudience.headers.get('www-authenticate')).toContain('not issued for this resource');
  });

  it('answers malformed requests without a 500', async () => {
    const token = alice.provider.saved!.access_token;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` };
    const bad = await fetch(mcpUrl, { method: 'POST', headers, body: '{not json' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as JsonRpcReply).error?.code).toBe(-32700);
    const get = await fetch(mcpUrl, { headers });
    expect(get.status).toBe(405);
    const wrongPath = await fetch(`${mcpUrl}/x`, { method: 'POST', headers, body: '{}' });
    expect(wrongPath.status).toBe(404);
  });
});

describe('tools', () => {
  it('lists the five core tools with input and output schemas and usage-order descriptions', async () => {
    const { tools } = await alice.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'feedback_memories',
      'fetch_memories',
      'manage_memories',
      'recall_context',
      'search_memories',
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.description!.length).toBeGreaterThan(100);
    }
    expect(tools.find((t) => t.name === 'recall_context')!.description).toMatch(/FIRST/);
    expect(tools.find((t) => t.name === 'manage_memories')!.description).toMatch(/END/);
    expect(alice.client.getInstructions()).toMatch(/recall_context.*manage_memories.*feedback_memories/s);
  });

  it('creates, searches, recalls, fetches, updates, gives feedback and deletes', async () => {
    const created = await call(alice, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'deploy/api',
      title: 'Deploying the API',
      content: 'Deploy the API with the release pipeline; migrations run before traffic shifts.',
      tags: ['ops'],
      entities: ['API'],
    });
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent).toMatchObject({ action: 'create', outcome: 'created', memory: { key: 'deploy/api', version: 1 } });
    expect(text(created)).toContain('Created knowledge/deploy/api (version 1)');

    const dup = await call(alice, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'deploy/api-2',
      title: 'Deploying the API',
      content: 'Deploy the API with the release pipeline; migrations run before traffic shifts.',
    });
    expect(dup.structuredContent.outcome).toBe('duplicate');
    expect(text(dup)).toContain('similar memory exists: knowledge/deploy/api');

    const search = await call(alice, 'search_memories', { namespace: 'knowledge', query: 'how do we ship the API', limit: 3 });
    expect(search.structuredContent.results[0]).toMatchObject({ key: 'deploy/api', version: 1 });
    expect(search.structuredContent.results[0].scores.final).toBeGreaterThan(0);
    expect(text(search)).toMatch(/^1\. \[knowledge\] deploy\/api — Deploying the API/);

    const fetched = await call(alice, 'fetch_memories', { namespace: 'knowledge', keys: ['deploy/api', 'nope'] });
    expect(fetched.structuredContent.memories[0].content).toContain('release pipeline');
    expect(fetched.structuredContent.missing_keys).toEqual(['nope']);

    const updated = await call(alice, 'manage_memories', {
      action: 'update',
      namespace: 'knowledge',
      key: 'deploy/api',
      expected_version: 1,
      title: 'Deploying the API',
      content: 'Deploy the API with the release pipeline; migrations run before traffic shifts; canary for 10 minutes.',
    });
    expect(updated.structuredContent).toMatchObject({ outcome: 'updated', memory: { version: 2 } });
    const stale = await call(alice, 'manage_memories', {
      action: 'update',
      namespace: 'knowledge',
      key: 'deploy/api',
      expected_version: 1,
      content: 'old',
    });
    expect(stale.isError).toBe(true);
    expect(text(stale)).toContain('is at version 2, not 1');

    const contradiction = await call(alice, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'deploy/canary',
      content: 'The API canary phase lasts 30 minutes before traffic shifts.',
    });
    await call(alice, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'deploy/canary-old',
      content: 'The API canary phase lasts 10 minutes before traffic shifts.',
    }).then((r) => {
      expect(r.structuredContent.contradictions).toHaveLength(1);
      expect(text(r)).toMatch(/Flagged contradiction ctr_[a-z2-7]{20} with knowledge\/deploy\/canary/);
    });
    expect(contradiction.isError).toBeFalsy();

    const recall = await call(alice, 'recall_context', { task: 'deploy the API canary', entities: ['API'], token_budget: 1_000 });
    expect(recall.structuredContent.memories.map((m: any) => m.key)).toContain('deploy/api');
    expect(recall.structuredContent.contradictions).toHaveLength(1);
    expect(recall.structuredContent.estimated_tokens).toBeLessThanOrEqual(1_000);
    expect(text(recall)).toContain('Open contradictions');
    const ctrId = recall.structuredContent.contradictions[0].id;

    const byId = await call(alice, 'fetch_memories', { ids: [ctrId] });
    expect(byId.structuredContent.contradictions[0]).toMatchObject({ id: ctrId, status: 'open' });
    const resolved = await call(alice, 'manage_memories', {
      action: 'resolve',
      id: ctrId,
      status: 'resolved',
      resolution: 'It is 30 minutes now.',
    });
    expect(resolved.structuredContent.contradictions[0]).toMatchObject({ status: 'resolved', resolution: 'It is 30 minutes now.' });

    const asked = await call(alice, 'manage_memories', {
      action: 'ask_question',
      question: 'Who approves API canaries?',
      entities: ['API'],
    });
    expect(asked.structuredContent.question.id).toMatch(/^q_/);

    const feedback = await call(alice, 'feedback_memories', {
      outcome: 'failed',
      memories: [{ namespace: 'knowledge', key: 'deploy/api' }],
      note: 'the pipeline was renamed',
    });
    expect(feedback.structuredContent.updated).toEqual([{ namespace: 'knowledge', key: 'deploy/api', worked: 0, failed: 1 }]);
    const warned = await call(alice, 'search_memories', { namespace: 'knowledge', query: 'deploy the API', limit: 5 });
    const hit = warned.structuredContent.results.find((r: any) => r.key === 'deploy/api');
    expect(hit.warning).toMatchObject({ client_id: alice.provider.info!.client_id, note: 'the pipeline was renamed' });
    expect(text(warned)).toContain('WARNING: failed in use');

    const deleted = await call(alice, 'manage_memories', { action: 'delete', namespace: 'knowledge', key: 'deploy/canary-old' });
    expect(deleted.structuredContent.outcome).toBe('deleted');
  });

  it('returns tool errors that say what to fix', async () => {
    for (const [args, message] of [
      [{ action: 'update', namespace: 'knowledge', key: 'deploy/api', content: 'x' }, 'expected_version'],
      [{ action: 'create', namespace: 'knowledge', content: 'x' }, 'namespace and key'],
      [{ action: 'resolve', id: 'ctr_aaaaaaaaaaaaaaaaaaaa', status: 'resolved', resolution: 'r' }, 'no contradiction'],
      [{ action: 'delete', namespace: 'knowledge', key: 'never/was' }, 'does not exist'],
    ] as const) {
      const r = await call(alice, 'manage_memories', args);
      expect(r.isError).toBe(true);
      expect(text(r)).toContain(message);
    }
    const fetchNothing = await call(alice, 'fetch_memories', {});
    expect(fetchNothing.isError).toBe(true);
    const badSchema = await call(alice, 'search_memories', { namespace: 'nowhere', query: 'x' });
    expect(badSchema.isError).toBe(true);
  });
});

describe('organizations and clients', () => {
  it("lets a second client of the same organization see the first one's memories", async () => {
    const second = await signIn(alice.user, 'sign-in');
    try {
      expect(second.organizationId).toBe(alice.organizationId);
      expect(second.provider.info!.client_id).not.toBe(alice.provider.info!.client_id);
      const fetched = await call(second, 'fetch_memories', { namespace: 'knowledge', keys: ['deploy/api'] });
      expect(fetched.structuredContent.memories[0]).toMatchObject({
        key: 'deploy/api',
        version: 2,
        written_by: alice.provider.info!.client_id,
      });
    } finally {
      await second.client.close();
    }
  });

  it('shows a client of another organization none of them', async () => {
    const mallory = await signIn(newTestUser('mallory'));
    try {
      expect(mallory.organizationId).not.toBe(alice.organizationId);
      const search = await call(mallory, 'search_memories', { namespace: 'knowledge', query: 'deploy the API' });
      expect(search.structuredContent.results).toEqual([]);
      expect(search.structuredContent.searched_memories).toBe(0);
      const fetched = await call(mallory, 'fetch_memories', { namespace: 'knowledge', keys: ['deploy/api'] });
      expect(fetched.structuredContent.missing_keys).toEqual(['deploy/api']);
      const recall = await call(mallory, 'recall_context', { task: 'deploy the API', entities: ['API'] });
      expect(recall.structuredContent.memories).toEqual([]);
      expect(recall.structuredContent.questions).toEqual([]);
      const fb = await call(mallory, 'feedback_memories', { outcome: 'failed', memories: [{ namespace: 'knowledge', key: 'deploy/api' }] });
      expect(fb.structuredContent.missing).toEqual([{ namespace: 'knowledge', key: 'deploy/api' }]);
      const del = await call(mallory, 'manage_memories', { action: 'delete', namespace: 'knowledge', key: 'deploy/api' });
      expect(del.isError).toBe(true);
      const own = await call(mallory, 'manage_memories', {
        action: 'create',
        namespace: 'knowledge',
        key: 'deploy/api',
        content: 'Mallory deploys by hand.',
      });
      expect(own.structuredContent.outcome).toBe('created');
      const still = await call(alice, 'fetch_memories', { namespace: 'knowledge', keys: ['deploy/api'] });
      expect(still.structuredContent.memories[0]).toMatchObject({ version: 2, failed: 1 });
    } finally {
      await mallory.client.close();
    }
  });

  it("serves the operator's infrastructure with X-Gateway-Key for the organization it names", async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-gateway-key': GATEWAY_KEY };
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'fetch_memories', arguments: { namespace: 'knowledge', keys: ['deploy/api'] } },
    });
    const unnamed = await fetch(mcpUrl, { method: 'POST', headers, body });
    expect(unnamed.status).toBe(400);
    expect(((await unnamed.json()) as JsonRpcReply).error?.message).toContain('x-mindgate-organization');
    const named = await fetch(mcpUrl, { method: 'POST', headers: { ...headers, 'x-mindgate-organization': alice.organizationId }, body });
    expect(named.status).toBe(200);
    const result = ((await named.json()) as JsonRpcReply).result;
    expect(result.structuredContent.memories[0].key).toBe('deploy/api');
    const wrongKey = await fetch(mcpUrl, {
      method: 'POST',
      headers: { ...headers, 'x-gateway-key': 'not-the-key-0123456789', 'x-mindgate-organization': alice.organizationId },
      body,
    });
    expect(wrongKey.status).toBe(401);
  });

  it('refuses a revoked client', async () => {
    const victim = await signIn(alice.user, 'sign-in');
    const api = platform.ctx.config.publicUrls.api;
    const admin = await obtainAccessToken(platform, { resource: api, user: alice.user, mode: 'sign-in' });
    expect((await call(victim, 'search_memories', { namespace: 'knowledge', query: 'deploy' })).isError).toBeFalsy();
    const revoked = await fetch(`${api}/organizations/${alice.organizationId}/oauth-clients/${victim.provider.info!.client_id}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin.access_token}` },
    });
    expect(revoked.status).toBe(200);
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${victim.provider.saved!.access_token}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('revoked');
    await victim.client.close().catch(() => {});
    // Alice's own client keeps working.
    expect((await call(alice, 'search_memories', { namespace: 'knowledge', query: 'deploy' })).isError).toBeFalsy();
  });
});
