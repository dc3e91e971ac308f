// The Brain MCP server end to end: the SDK's MCP client with its OAuth provider goes from a
// bare 401 through discovery, dynamic registration, sign-up and consent (PKCE) to every tool;
// a second client of the same organization sees the first one's memories; a client of another
// organization sees none; a revoked client is refused. Everything over real HTTP through the
// gateway at {base_url}/brain/mcp.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driveAuthorization, newTestUser, obtainAccessToken, startOAuthTestPlatform, type TestUser } from '../support/oauth-client.ts';
import { MemoryOAuthProvider } from '../support/memory-oauth-provider.ts';
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

interface Session {
  client: Client;
  provider: MemoryOAuthProvider;
  organizationId: string;
  user: TestUser;
}

/** Connects the SDK client: 401, discovery, registration, browser sign-in and consent, token, connect. */
async function signIn(user: TestUser, mode: 'sign-up' | 'sign-in' = 'sign-up'): Promise<Session> {
  const provider = new MemoryOAuthProvider('SDK test client', REDIRECT);
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
/** The o200k encoder: building it blocks the event loop for seconds, so it is built before any connection is open. */
let o200kEncoder: Tiktoken;

beforeAll(async () => {
  o200kEncoder = new Tiktoken(o200k);
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
    // A signed-up organization is on the Professional trial, which includes the entity graph's three.
    expect(tools.map((t) => t.name).sort()).toEqual([
      'affected_entities',
      'entity_path',
      'explain_entity',
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

  it('costs at most 2,000 o200k tokens for the five tools, and still teaches their use', async () => {
    const all = (await alice.client.listTools()).tools;
    const graphTools = ['explain_entity', 'entity_path', 'affected_entities'];
    const tools = all.filter((t) => !graphTools.includes(t.name));
    const tokens = o200kEncoder.encode(JSON.stringify(tools)).length;
    console.log(`tools/list of the five Brain tools: ${tokens} o200k tokens`);
    expect(tokens).toBeLessThanOrEqual(2_000);
    const graphTokens = o200kEncoder.encode(JSON.stringify(all.filter((t) => graphTools.includes(t.name)))).length;
    console.log(`tools/list of the three entity-graph tools: ${graphTokens} o200k tokens`);
    expect(graphTokens).toBeLessThanOrEqual(900);
    const about = (name: string) => tools.find((t) => t.name === name)!.description!;
    // The order of use, the markers in results, and what a write may answer.
    expect(about('recall_context')).toMatch(/FIRST.*WARNING.*HISTORY.*manage_memories.*feedback_memories/s);
    expect(about('search_memories')).toMatch(/WARNING.*HISTORY.*contradictions.*fetch_memories/s);
    expect(about('manage_memories')).toMatch(
      /END.*knowledge.*episodes.*expected_version.*supersedes.*NOT stored.*allow_duplicate.*contradiction/s,
    );
    expect(about('feedback_memories')).toMatch(/END.*worked.*failed.*WARNING/s);
    for (const tool of tools) expect(tool.outputSchema?.type).toBe('object');
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
    expect(hit.warning).toMatchObject({ by: `SDK test client for ${alice.user.name}`, note: 'the pipeline was renamed' });
    expect(text(warned)).toContain(`WARNING: failed in use 1 minute ago`);
    expect(text(warned)).toContain(`by SDK test client for ${alice.user.name}: the pipeline was renamed`);

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
        // The writer by its registered client_name and its user, not the opaque client_id.
        written_by: `SDK test client for ${alice.user.name}`,
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

/** Creates a memory and returns the structured result (fails the test on a tool error). */
async function write(s: Session, args: Record<string, unknown>): Promise<any> {
  const r = await call(s, 'manage_memories', { action: 'create', namespace: 'knowledge', ...args });
  expect(r.isError, text(r)).toBeFalsy();
  return Object.assign(r.structuredContent, { text: text(r) });
}

describe('corrections are never lost', () => {
  it.each([
    ['a number', 'The API runs two replicas in production.', 'The API runs three replicas in production.', /different numbers/],
    ['a date', 'The search migration finished in May.', 'The search migration finished in June.', /different dates/],
    ['a name', 'Billing moved to eu-west-1 last quarter.', 'Billing moved to eu-central-1 last quarter.', /different names/],
    ['a negation', 'The ledger service moved to the new cluster.', 'The ledger service did not move to the new cluster.', /one says/],
    ['an opposite word', 'Public signup is enabled on the EU instance.', 'Public signup is disabled on the EU instance.', /opposes/],
  ])('stores a near duplicate that differs in %s, and flags the contradiction', async (what, before, after, reason) => {
    const slug = what.replace(/\W+/g, '-');
    await write(alice, { key: `fact/${slug}`, content: before });
    const corrected = await write(alice, { key: `fact/${slug}-fix`, content: after });
    expect(corrected.outcome).toBe('created');
    expect(corrected.duplicates).toEqual([]);
    expect(corrected.contradictions).toHaveLength(1);
    expect(corrected.contradictions[0].reason).toMatch(reason);
    expect(corrected.text).toMatch(new RegExp(`Flagged contradiction ctr_\\w+ with knowledge/fact/${slug}:`));
    expect(corrected.text).toContain('write again with supersedes');
  });

  it('still refuses text that says the same thing', async () => {
    await write(alice, { key: 'fact/backups', content: 'Backups of the ledger are kept for 35 days.' });
    const again = await call(alice, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'fact/backups-2',
      content: 'backups of the ledger are kept for 35 days',
    });
    expect(again.structuredContent.outcome).toBe('duplicate');
  });

  it('supersedes: the old memory stays as history below its successor, and their contradiction is resolved', async () => {
    await write(alice, { key: 'runbook/queue-limit', title: 'Queue limit', content: 'The orders queue accepts 500 messages per second.' });
    const flagged = await write(alice, {
      key: 'runbook/queue-limit-2026',
      title: 'Queue limit',
      content: 'The orders queue accepts 800 messages per second.',
    });
    const ctrId = flagged.contradictions[0].id;
    // The correction written again, naming the memory it corrects.
    const fixed = await call(alice, 'manage_memories', {
      action: 'update',
      namespace: 'knowledge',
      key: 'runbook/queue-limit-2026',
      expected_version: 1,
      title: 'Queue limit',
      content: 'The orders queue accepts 800 messages per second since the broker upgrade.',
      supersedes: { namespace: 'knowledge', key: 'runbook/queue-limit' },
    });
    expect(fixed.isError, text(fixed)).toBeFalsy();
    expect(fixed.structuredContent.memory).toMatchObject({ supersedes: 'knowledge/runbook/queue-limit' });
    expect(fixed.structuredContent.closed_contradictions).toMatchObject([{ id: ctrId, status: 'resolved' }]);
    expect(text(fixed)).toContain('It supersedes knowledge/runbook/queue-limit, which is kept as history.');

    const old = await call(alice, 'fetch_memories', { namespace: 'knowledge', keys: ['runbook/queue-limit'], ids: [ctrId] });
    expect(old.structuredContent.memories[0]).toMatchObject({ superseded_by: 'knowledge/runbook/queue-limit-2026', version: 1 });
    expect(old.structuredContent.contradictions[0]).toMatchObject({ status: 'resolved' });
    expect(text(old)).toContain('HISTORY, superseded by knowledge/runbook/queue-limit-2026');

    const search = await call(alice, 'search_memories', { namespace: 'knowledge', query: 'orders queue messages per second', limit: 5 });
    const keys = search.structuredContent.results.map((r: any) => r.key);
    expect(keys.indexOf('runbook/queue-limit-2026')).toBeLessThan(keys.indexOf('runbook/queue-limit'));
    expect(keys.indexOf('runbook/queue-limit')).toBeGreaterThanOrEqual(0);
    expect(text(search)).toContain('HISTORY: superseded by knowledge/runbook/queue-limit-2026');

    const recall = await call(alice, 'recall_context', { task: 'orders queue messages per second', namespaces: ['knowledge'] });
    expect(recall.structuredContent.contradictions.map((c: any) => c.id)).not.toContain(ctrId);
    expect(recall.structuredContent.context).toMatch(/### knowledge\/runbook\/queue-limit .*HISTORY, superseded by/);
  });

  it('refuses to supersede a memory that does not exist, or itself', async () => {
    const missing = await call(alice, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'fact/orphan',
      content: 'Orphan fact.',
      supersedes: { namespace: 'knowledge', key: 'never/was' },
    });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('knowledge/never/was named in supersedes does not exist');
    const self = await call(alice, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'fact/self',
      content: 'Self.',
      supersedes: { namespace: 'knowledge', key: 'fact/self' },
    });
    expect(self.isError).toBe(true);
    expect(text(self)).toContain('supersedes');
  });
});

describe('episodes of a conversation', () => {
  const chat = (key: string, content: string, extra: Record<string, unknown> = {}) =>
    write(alice, { namespace: 'episodes', key, content, entities: ['Caroline', 'Melanie'], ...extra });

  it("keeps one speaker's goodbye and the other's, and the same greeting on two days, without flags", async () => {
    const bye1 = await chat('chat/s1/t40', 'Caroline: Bye Mel, talk soon!', { tags: ['session-1'] });
    const bye2 = await chat('chat/s1/t41', 'Melanie: Bye Caroline, talk soon!', { tags: ['session-1'] });
    const hello1 = await chat('chat/s2/t1', 'Caroline: Hey Mel! Good to see you!', { title: '8 May 2023', tags: ['session-2'] });
    const hello2 = await chat('chat/s3/t1', 'Caroline: Hey Mel! Good to see you!', { title: '25 May 2023', tags: ['session-3'] });
    for (const r of [bye1, bye2, hello1, hello2]) {
      expect(r.outcome).toBe('created');
      expect(r.duplicates).toEqual([]);
      expect(r.contradictions).toEqual([]);
    }
    // Two turns that differ only in the occasion are still one episode written twice.
    const again = await call(alice, 'manage_memories', {
      action: 'create',
      namespace: 'episodes',
      key: 'chat/s3/t1-copy',
      title: '25 May 2023',
      content: 'Caroline: Hey Mel! Good to see you!',
      entities: ['Caroline', 'Melanie'],
      tags: ['session-3'],
    });
    expect(again.structuredContent.outcome).toBe('duplicate');
  });

  it('does not flag small talk or the same outing on two dates', async () => {
    const a = await chat('chat/s4/t3', 'Caroline: I went to the LGBTQ support group today, it was powerful.', { title: '8 May 2023' });
    const b = await chat('chat/s6/t2', 'Caroline: I went to the LGBTQ support group today, it was powerful.', { title: '20 May 2023' });
    const c = await chat('chat/s6/t9', 'Melanie: Thanks, Caroline! Take care!');
    const d = await chat('chat/s7/t9', 'Caroline: Thanks, Melanie! Take care!');
    for (const r of [a, b, c, d]) expect(r.contradictions).toEqual([]);
  });
});

describe('contradictions an agent can trust', () => {
  it('marks search results with an open contradiction, and closes it as obsolete when a side is deleted', async () => {
    await write(alice, { key: 'policy/laptops', content: 'Engineers get a new laptop every 3 years.' });
    const flagged = await write(alice, { key: 'policy/laptops-new', content: 'Engineers get a new laptop every 4 years.' });
    const ctrId = flagged.contradictions[0].id;
    const search = await call(alice, 'search_memories', { namespace: 'knowledge', query: 'new laptop every years engineers' });
    const marked = search.structuredContent.results.filter((r: any) => r.open_contradictions.includes(ctrId)).map((r: any) => r.key);
    expect(marked.sort()).toEqual(['policy/laptops', 'policy/laptops-new']);
    expect(text(search)).toContain(`CONTRADICTED: open contradiction ${ctrId}`);

    const deleted = await call(alice, 'manage_memories', { action: 'delete', namespace: 'knowledge', key: 'policy/laptops' });
    expect(text(deleted)).toContain('closed as obsolete');
    const closed = await call(alice, 'fetch_memories', { ids: [ctrId] });
    expect(closed.structuredContent.contradictions[0]).toMatchObject({
      status: 'obsolete',
      resolution: 'knowledge/policy/laptops was deleted',
    });
    const after = await call(alice, 'search_memories', { namespace: 'knowledge', query: 'new laptop every years engineers' });
    expect(after.structuredContent.results.find((r: any) => r.key === 'policy/laptops-new').open_contradictions).toEqual([]);
  });

  it('shows in recall_context only open contradictions touching the memories it returns, at most five', async () => {
    // Six contradictions around one memory, and one between two memories the task does not reach.
    await write(alice, { key: 'tide/base', content: 'The tide gauge at the harbor samples every 10 seconds.' });
    for (const n of [20, 30, 40, 50, 60, 70]) {
      await write(alice, { key: `tide/v${n}`, content: `The tide gauge at the harbor samples every ${n} seconds.`, allow_duplicate: true });
    }
    await write(alice, { key: 'zebra/a', content: 'The zebra crossing light stays green for 12 seconds.' });
    const far = await write(alice, { key: 'zebra/b', content: 'The zebra crossing light stays green for 25 seconds.' });
    const recall = await call(alice, 'recall_context', { task: 'how often does the tide gauge at the harbor sample', limit: 3 });
    const shown = new Set(recall.structuredContent.memories.map((m: any) => `${m.namespace}/${m.key}`));
    expect(recall.structuredContent.contradictions.length).toBeGreaterThan(0);
    expect(recall.structuredContent.contradictions.length).toBeLessThanOrEqual(5);
    for (const c of recall.structuredContent.contradictions) {
      expect(c.memories.some((m: any) => shown.has(`${m.namespace}/${m.key}`))).toBe(true);
    }
    expect(recall.structuredContent.contradictions.map((c: any) => c.id)).not.toContain(far.contradictions[0].id);
  });
});

describe('what the model reads', () => {
  it('says that a created key exists and how to update it', async () => {
    await write(alice, { key: 'howto/rotate-keys', content: 'Rotate signing keys with the rotate-keys job.' });
    const again = await call(alice, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'howto/rotate-keys',
      content: 'Rotate signing keys by hand.',
    });
    expect(again.isError).toBe(true);
    expect(text(again)).toBe(
      'knowledge/howto/rotate-keys already exists (version 1): create never replaces a memory. ' +
        'To change it, call manage_memories with action "update" and expected_version 1; to keep both, create under another key.',
    );
  });

  it('lists the choices in words when an enum value is missing or wrong', async () => {
    const noAction = await call(alice, 'manage_memories', { namespace: 'knowledge', key: 'x', content: 'x' });
    expect(noAction.isError).toBe(true);
    expect(text(noAction)).toContain(
      'missing: give one of "create", "update", "delete", "flag_contradiction", "ask_question", "resolve" (what to do)',
    );
    const wrong = await call(alice, 'search_memories', { namespace: 'nowhere', query: 'x' });
    expect(wrong.isError).toBe(true);
    expect(text(wrong)).toContain(
      '"nowhere" is not one of "knowledge" or "episodes" (knowledge = reusable learnings, episodes = what happened)',
    );
    const badTime = await call(alice, 'search_memories', { namespace: 'knowledge', query: 'x', updated_after: 'yesterday' });
    expect(text(badTime)).toContain('updated_after must be an ISO 8601 time');
  });

  it('does not read "meaning 0.00" for a result that matched on words alone', async () => {
    await write(alice, { key: 'glossary/qx7', content: 'QX7-ZETA is the code name of the ledger rewrite.' });
    const search = await call(alice, 'search_memories', { namespace: 'knowledge', query: 'QX7-ZETA', limit: 20 });
    expect(text(search)).not.toContain('meaning 0.00');
    const hit = search.structuredContent.results.find((r: any) => r.key === 'glossary/qx7');
    const line = text(search)
      .split('\n')
      .find((l) => l.includes('glossary/qx7'))!;
    if (hit.scores.semantic === 0) expect(line).toMatch(/score \d\.\d\d: words \d+\.\d\)$/);
    else expect(line).toMatch(/words \d+\.\d, meaning 0\.\d\d\)$/);
  });

  it('clears the warning and restores the ranking when a memory works after it failed', async () => {
    // Two answers about as relevant to the query: feedback decides their order.
    await write(alice, {
      key: 'howto/restart-billing',
      content: 'To restart the billing workers, run the restart job in the ops console.',
    });
    await write(alice, {
      key: 'howto/restart-billing-old',
      content: 'To restart the billing workers, click restart next to each worker in the ops console.',
      allow_duplicate: true,
    });
    const query = { namespace: 'knowledge', query: 'restart the billing workers in the ops console', limit: 5 };
    const rank = async () => {
      const r = await call(alice, 'search_memories', query);
      return { keys: r.structuredContent.results.map((x: any) => x.key), result: r };
    };
    const before = await rank();
    const score = (r: Awaited<ReturnType<typeof rank>>, key: string) =>
      r.result.structuredContent.results.find((x: any) => x.key === key).scores.final as number;
    expect(before.keys.indexOf('howto/restart-billing')).toBeLessThan(before.keys.indexOf('howto/restart-billing-old'));
    console.log(
      `feedback sequence, final scores (job / by hand): before ${score(before, 'howto/restart-billing')} / ${score(before, 'howto/restart-billing-old')}`,
    );

    await call(alice, 'feedback_memories', {
      outcome: 'failed',
      memories: [{ namespace: 'knowledge', key: 'howto/restart-billing' }],
      note: 'job removed',
    });
    const failed = await rank();
    // The failure costs 0.2 x (feedback -0.58): demoted, and warned.
    expect(score(failed, 'howto/restart-billing')).toBeLessThan(score(before, 'howto/restart-billing') - 0.1);
    expect(text(failed.result)).toMatch(/WARNING: failed in use 1 minute ago .* job removed/);

    const worked = await call(alice, 'feedback_memories', {
      outcome: 'worked',
      memories: [{ namespace: 'knowledge', key: 'howto/restart-billing' }],
    });
    expect(text(worked)).toContain('earlier failures no longer show a WARNING');
    const recovered = await rank();
    // One failure and one success weigh nothing (p = 0.5): back to the score it had before any report.
    expect(score(recovered, 'howto/restart-billing')).toBeCloseTo(score(before, 'howto/restart-billing'), 2);
    expect(recovered.keys).toEqual(before.keys);
    const hit = recovered.result.structuredContent.results.find((r: any) => r.key === 'howto/restart-billing');
    expect(hit.warning).toBeUndefined();
    expect(hit).toMatchObject({ worked: 1, failed: 1 });
    expect(text(recovered.result)).not.toContain('WARNING');
  });
});
