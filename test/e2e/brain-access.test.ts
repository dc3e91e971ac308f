// Team access to the Brain and API keys at the Brain, end to end: the MCP SDK client against
// {base_url}/brain/mcp with members' access tokens and with API keys (x-api-key), teams narrowed
// through the REST API. A narrowed caller's searches, recall and fetches return only what its
// teams allow; its writes outside are refused with a message saying what it may reach; a read key
// cannot write; several teams combine as a union; lifting a restriction widens at once.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, encodeBinaryHeader } from '@connectrpc/connect';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryAccessSchema } from '../../gen/mindgate/brain/v1/access_pb.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { joinAs, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let mcpUrl: string;
let owner: ObtainedToken;
let org: string;
let member: TestMember;
let supportTeam: string;
const call = restClient(() => api);
const open: Client[] = [];

type ToolResult = CallToolResult & { structuredContent?: Json };

/** An MCP SDK client sending these headers (a bearer token, or an API key) with every request. */
async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'access-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers } }));
  open.push(client);
  return client;
}

const tool = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as ToolResult;
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const keysOf = (r: ToolResult) =>
  (r.structuredContent?.results ?? r.structuredContent?.memories ?? []).map((m: Json) => `${m.namespace}/${m.key}`);

async function mcpToken(user: ObtainedToken['user']): Promise<string> {
  const token = await obtainAccessToken(platform, { resource: mcpUrl, user, mode: 'sign-in', organizationId: org });
  return token.access_token;
}

async function newKey(scopes: string[], teamId?: string, keep?: (id: string) => void): Promise<string> {
  const r = await call(`/organizations/${org}/api-keys`, {
    token: owner.access_token,
    body: { name: 'brain key', scopes, team_id: teamId },
  });
  expect(r.status).toBe(201);
  keep?.(r.json.api_key.id);
  return r.json.secret as string;
}

const MEMORIES = [
  ['knowledge', 'support/password-reset', 'Password reset', 'Reset a customer password from the admin console, then email the customer.'],
  ['knowledge', 'support/refunds', 'Refunds', 'Refunds up to 100 euros need no approval; the password of the console is not needed.'],
  ['knowledge', 'deploy/steps', 'Deploy steps', 'Deploy with the release pipeline; the password vault holds the deploy key.'],
  ['episodes', 'ops/outage-march', 'March outage', 'The database ran out of disk; the password rotation job filled the logs.'],
  ['episodes', 'support/ticket-42', 'Ticket 42', 'A customer could not reset the password; the email was in spam.'],
] as const;

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  mcpUrl = `${platform.ctx.config.publicUrls.gateway}/brain/mcp`;
  owner = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  const writer = await connect({ authorization: `Bearer ${await mcpToken(owner.user)}` });
  for (const [namespace, key, title, content] of MEMORIES) {
    const r = await tool(writer, 'manage_memories', { action: 'create', namespace, key, title, content, allow_duplicate: true });
    expect(r.isError, text(r)).toBeFalsy();
  }
  member = await joinAs(platform, org, 'member');
  const team = await call(`/organizations/${org}/teams`, { token: owner.access_token, body: { name: 'Support' } });
  supportTeam = team.json.id;
  expect(
    (await call(`/organizations/${org}/teams/${supportTeam}/members/${member.userId}`, { token: owner.access_token, method: 'PUT' }))
      .status,
  ).toBe(200);
}, 240_000);

afterAll(async () => {
  await Promise.allSettled(open.map((c) => c.close()));
  await platform?.stop();
});

describe('team access over the REST API', () => {
  it('narrows a team with PUT brain-access, shows it on the team, and refuses bad input with 422', async () => {
    const path = `/organizations/${org}/teams/${supportTeam}/brain-access`;
    const bad = [{}, { namespaces: [] }, { namespaces: ['secrets'] }, { key_prefixes: ['has space'] }, { namespaces: ['knowledge'], x: 1 }];
    for (const body of bad) {
      const r = await call(path, { token: owner.access_token, method: 'PUT', body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.errors[0].loc[0]).toBe('body');
    }
    const stale = await call(path, {
      token: owner.access_token,
      method: 'PUT',
      body: { namespaces: ['knowledge'] },
      headers: { 'if-match': '"999"' },
    });
    expect(stale.status).toBe(412);
    const r = await call(path, {
      token: owner.access_token,
      method: 'PUT',
      body: { namespaces: ['knowledge'], key_prefixes: ['support/'] },
    });
    expect(r.status).toBe(200);
    expect(r.json.brain_access).toEqual({ namespaces: ['knowledge'], key_prefixes: ['support/'] });
    expect(r.headers.get('etag')).toBeTruthy();
    const got = await call(`/organizations/${org}/teams/${supportTeam}`, { token: member.access_token });
    expect(got.json.brain_access).toEqual({ namespaces: ['knowledge'], key_prefixes: ['support/'] });
    // A member may read the team but not change its access.
    expect((await call(path, { token: member.access_token, method: 'PUT', body: { namespaces: ['episodes'] } })).status).toBe(403);
    expect(
      (
        await call(`/organizations/${org}/teams/team_nosuchteam/brain-access`, {
          token: owner.access_token,
          method: 'PUT',
          body: { namespaces: ['episodes'] },
        })
      ).status,
    ).toBe(404);
  });
});

describe('a member of a narrowed team, over MCP', () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect({ authorization: `Bearer ${await mcpToken(member.user)}` });
  }, 60_000);

  it('searches, recalls and fetches only the memories the team allows', async () => {
    const found = await tool(client, 'search_memories', { namespace: 'knowledge', query: 'password' });
    expect(found.isError).toBeFalsy();
    expect(keysOf(found).sort()).toEqual(['knowledge/support/password-reset', 'knowledge/support/refunds']);
    const recalled = await tool(client, 'recall_context', {
      task: 'customer password reset',
      entities: [],
      keys: [{ namespace: 'knowledge', key: 'deploy/steps' }],
    });
    expect(recalled.isError).toBeFalsy();
    expect(keysOf(recalled).every((k: string) => k.startsWith('knowledge/support/'))).toBe(true);
    expect(keysOf(recalled)).toContain('knowledge/support/password-reset');
    expect(recalled.structuredContent?.missing).toEqual([{ namespace: 'knowledge', key: 'deploy/steps' }]);
    expect(text(recalled)).not.toContain('release pipeline');
    const fetched = await tool(client, 'fetch_memories', { namespace: 'knowledge', keys: ['deploy/steps', 'support/refunds'] });
    expect(fetched.structuredContent?.memories.map((m: Json) => m.key)).toEqual(['support/refunds']);
    expect(fetched.structuredContent?.missing_keys).toEqual(['deploy/steps']);
  });

  it('refuses a search of a namespace the team does not reach, and writes outside, saying what it may reach', async () => {
    const episodes = await tool(client, 'search_memories', { namespace: 'episodes', query: 'password' });
    expect(episodes.isError).toBe(true);
    expect(text(episodes)).toMatch(/Refused: .*episodes namespace.*knowledge under support\/ \(team Support\)/);
    const outside = await tool(client, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'deploy/rollback',
      content: 'Roll back with the pipeline.',
    });
    expect(outside.isError).toBe(true);
    expect(text(outside)).toContain('knowledge/deploy/rollback is outside what you (through your teams) may reach');
    const superseding = await tool(client, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'support/deploy-note',
      content: 'Deploys now go through the new pipeline.',
      supersedes: { namespace: 'knowledge', key: 'deploy/steps' },
    });
    expect(superseding.isError).toBe(true);
    expect(text(superseding)).toContain('knowledge/deploy/steps is outside what you (through your teams) may reach');
    const deleting = await tool(client, 'manage_memories', { action: 'delete', namespace: 'knowledge', key: 'deploy/steps' });
    expect(deleting.isError).toBe(true);
    const feedback = await tool(client, 'feedback_memories', {
      memories: [{ namespace: 'knowledge', key: 'deploy/steps' }],
      outcome: 'failed',
    });
    expect(feedback.isError).toBe(true);
    const inside = await tool(client, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'support/escalation',
      content: 'Escalate unpaid invoices to finance.',
    });
    expect(inside.isError, text(inside)).toBeFalsy();
    // The refused ones were not written or deleted.
    const ownerView = platform.ctx.clients.brain;
    const { memories } = await ownerView.getMemories({
      organizationId: org,
      namespace: Namespace.KNOWLEDGE,
      keys: ['deploy/steps', 'deploy/rollback'],
    });
    expect(memories.map((m) => m.key)).toEqual(['deploy/steps']);
  });

  it('hides contradictions and questions that name a memory outside, and is not warned of duplicates it cannot see', async () => {
    const brain = platform.ctx.clients.brain;
    const refs = [
      { namespace: Namespace.KNOWLEDGE, key: 'support/refunds' },
      { namespace: Namespace.KNOWLEDGE, key: 'deploy/steps' },
    ];
    const { contradiction } = await brain.flagContradiction({ organizationId: org, memories: refs, reason: 'they disagree' });
    const { question } = await brain.askQuestion({ organizationId: org, question: 'Who owns the vault?', memories: [refs[1]] });
    const fetched = await tool(client, 'fetch_memories', { ids: [contradiction!.id, question!.id] });
    expect(fetched.structuredContent?.contradictions).toEqual([]);
    expect(fetched.structuredContent?.questions).toEqual([]);
    expect(fetched.structuredContent?.missing_ids.sort()).toEqual([contradiction!.id, question!.id].sort());
    const recalled = await tool(client, 'recall_context', { task: 'refunds approval' });
    expect(recalled.structuredContent?.contradictions).toEqual([]);
    const resolve = await tool(client, 'manage_memories', {
      action: 'resolve',
      id: contradiction!.id,
      status: 'dismissed',
      resolution: 'no',
    });
    expect(resolve.isError).toBe(true);
    // The same text as a memory outside its reach: written, with no duplicate named.
    const copy = await tool(client, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'support/deploy-copy',
      title: 'Deploy steps',
      content: 'Deploy with the release pipeline; the password vault holds the deploy key.',
    });
    expect(copy.isError, text(copy)).toBeFalsy();
    expect(copy.structuredContent?.outcome).toBe('created');
    expect(JSON.stringify(copy.structuredContent)).not.toContain('deploy/steps');
  });

  it('reaches the union of its narrowed teams, and more once a restriction is lifted', async () => {
    const ops = await call(`/organizations/${org}/teams`, { token: owner.access_token, body: { name: 'Ops' } });
    await call(`/organizations/${org}/teams/${ops.json.id}/members/${member.userId}`, { token: owner.access_token, method: 'PUT' });
    await call(`/organizations/${org}/teams/${ops.json.id}/brain-access`, {
      token: owner.access_token,
      method: 'PUT',
      body: { namespaces: ['episodes'], key_prefixes: ['ops/'] },
    });
    const episodes = await tool(client, 'search_memories', { namespace: 'episodes', query: 'password' });
    expect(keysOf(episodes)).toEqual(['episodes/ops/outage-march']);
    const knowledgeBoth = keysOf(await tool(client, 'search_memories', { namespace: 'knowledge', query: 'password' }));
    expect(knowledgeBoth).toContain('knowledge/support/password-reset');
    expect(knowledgeBoth.every((k: string) => k.startsWith('knowledge/support/'))).toBe(true);
    // Lifting Support leaves the member narrowed by Ops alone.
    expect(
      (await call(`/organizations/${org}/teams/${supportTeam}/brain-access`, { token: owner.access_token, method: 'DELETE' })).status,
    ).toBe(204);
    const knowledge = await tool(client, 'search_memories', { namespace: 'knowledge', query: 'password' });
    expect(knowledge.isError).toBe(true);
    // Lifting Ops too: the member reaches everything.
    expect(
      (await call(`/organizations/${org}/teams/${ops.json.id}/brain-access`, { token: owner.access_token, method: 'DELETE' })).status,
    ).toBe(204);
    expect(keysOf(await tool(client, 'search_memories', { namespace: 'knowledge', query: 'password' }))).toContain(
      'knowledge/deploy/steps',
    );
    await call(`/organizations/${org}/teams/${supportTeam}/brain-access`, {
      token: owner.access_token,
      method: 'PUT',
      body: { namespaces: ['knowledge'], key_prefixes: ['support/'] },
    });
  });
});

describe('a member of a narrowed team, over the REST API', () => {
  it('lists, reads and writes only what the team allows, and is refused the memory graph', async () => {
    const token = member.access_token;
    const listed = await call(`/organizations/${org}/memories?namespace=knowledge`, { token });
    expect(listed.status, JSON.stringify(listed.json)).toBe(200);
    const keys = listed.json.memories.map((m: Json) => m.key as string);
    expect(keys).toContain('support/refunds');
    expect(keys.every((k: string) => k.startsWith('support/'))).toBe(true);
    expect((await call(`/organizations/${org}/memories/knowledge/deploy%2Fsteps`, { token })).status).toBe(404);
    expect((await call(`/organizations/${org}/memories/knowledge/support%2Frefunds`, { token })).status).toBe(200);
    const outside = await call(`/organizations/${org}/memories`, {
      token,
      body: { namespace: 'knowledge', key: 'deploy/rest-note', content: 'Deploys are frozen on Fridays.' },
    });
    expect(outside.status).toBe(403);
    expect(outside.json.detail).toContain('knowledge/deploy/rest-note is outside what you (through your teams) may reach');
    const graph = await call(`/organizations/${org}/graph/entities`, { token });
    expect(graph.status).toBe(403);
    expect(graph.json.detail).toContain('narrowed');
    // The owner is not narrowed: the same reads answer.
    expect((await call(`/organizations/${org}/memories/knowledge/deploy%2Fsteps`, { token: owner.access_token })).status).toBe(200);
    expect((await call(`/organizations/${org}/graph/entities`, { token: owner.access_token })).status).toBe(200);
  });
});

describe('API keys at the Brain', () => {
  it('accepts x-api-key: a read key searches and fetches but cannot write', async () => {
    const client = await connect({ 'x-api-key': await newKey(['read']) });
    const found = await tool(client, 'search_memories', { namespace: 'knowledge', query: 'deploy pipeline' });
    expect(keysOf(found)).toContain('knowledge/deploy/steps');
    expect(
      (await tool(client, 'fetch_memories', { namespace: 'knowledge', keys: ['deploy/steps'] })).structuredContent?.memories,
    ).toHaveLength(1);
    const write = await tool(client, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'keys/read',
      content: 'A read key wrote this.',
    });
    expect(write.isError).toBe(true);
    expect(text(write)).toMatch(/API key mg_\w+… may only read memories: writing needs an API key with the memories scope/);
    const feedback = await tool(client, 'feedback_memories', {
      memories: [{ namespace: 'knowledge', key: 'deploy/steps' }],
      outcome: 'worked',
    });
    expect(feedback.isError).toBe(true);
  });

  it('lets a memories key write, recording the key as the writer', async () => {
    let keyId = '';
    const client = await connect({ 'x-api-key': await newKey(['memories'], undefined, (id) => (keyId = id)) });
    const write = await tool(client, 'manage_memories', {
      action: 'create',
      namespace: 'knowledge',
      key: 'keys/memories',
      content: 'A memories key wrote this note about backups.',
    });
    expect(write.isError, text(write)).toBeFalsy();
    expect(write.structuredContent?.memory.written_by).toBe(keyId);
  });

  it("narrows a key to its team's access, and a key whose team is gone to nothing", async () => {
    const client = await connect({ 'x-api-key': await newKey(['memories'], supportTeam) });
    expect(
      keysOf(await tool(client, 'search_memories', { namespace: 'knowledge', query: 'password' })).every((k: string) =>
        k.startsWith('knowledge/support/'),
      ),
    ).toBe(true);
    const outside = await tool(client, 'manage_memories', { action: 'create', namespace: 'knowledge', key: 'deploy/by-key', content: 'x' });
    expect(text(outside)).toMatch(/outside what API key mg_\w+… may reach \(knowledge under support\/ \(team Support\)\)/);
    const doomed = await call(`/organizations/${org}/teams`, { token: owner.access_token, body: { name: 'Doomed' } });
    const orphan = await connect({ 'x-api-key': await newKey(['memories'], doomed.json.id) });
    expect(keysOf(await tool(orphan, 'search_memories', { namespace: 'knowledge', query: 'password' }))).toContain(
      'knowledge/deploy/steps',
    );
    expect((await call(`/organizations/${org}/teams/${doomed.json.id}`, { token: owner.access_token, method: 'DELETE' })).status).toBe(204);
    const refused = await tool(orphan, 'search_memories', { namespace: 'knowledge', query: 'password' });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('no memory');
  });

  it('refuses a request carrying both a token and an API key', async () => {
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${await mcpToken(owner.user)}`,
        'x-api-key': await newKey(['read']),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_request"');
  });

  it('answers an unknown key with 401 and an invalid_token challenge', async () => {
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': 'mg_nope' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(((await res.json()) as Json).error.message).toContain('API key is not valid');
  });
});

describe('the brain service itself', () => {
  it('enforces a MemoryAccess header on its RPCs and refuses one that does not decode', async () => {
    const access = create(MemoryAccessSchema, {
      restricted: true,
      rules: [{ namespaces: [Namespace.EPISODES], keyPrefixes: ['ops/'] }],
      holder: 'test',
    });
    const headers = { 'mindgate-memory-access-bin': encodeBinaryHeader(access, MemoryAccessSchema) };
    const brain = platform.ctx.clients.brain;
    const got = await brain.getMemories(
      { organizationId: org, namespace: Namespace.EPISODES, keys: ['ops/outage-march', 'support/ticket-42'] },
      { headers },
    );
    expect(got.memories.map((m) => m.key)).toEqual(['ops/outage-march']);
    expect(got.missingKeys).toEqual(['support/ticket-42']);
    const refused = brain.putMemory({ organizationId: org, namespace: Namespace.EPISODES, key: 'support/x', content: 'x' }, { headers });
    await expect(refused).rejects.toMatchObject({ code: Code.PermissionDenied });
    // A batch is written whole or not at all: one write outside the access refuses it.
    const batch = brain.putMemories(
      {
        organizationId: org,
        memories: [
          { namespace: Namespace.EPISODES, key: 'ops/batch-inside', content: 'Paged the on-call engineer at 02:00.' },
          { namespace: Namespace.EPISODES, key: 'support/batch-outside', content: 'Refunded the March invoice.' },
        ],
      },
      { headers },
    );
    await expect(batch).rejects.toMatchObject({ code: Code.PermissionDenied });
    const written = await brain.getMemories({
      organizationId: org,
      namespace: Namespace.EPISODES,
      keys: ['ops/batch-inside', 'support/batch-outside'],
    });
    expect(written.memories).toEqual([]);
    const inside = await brain.putMemories(
      {
        organizationId: org,
        memories: [{ namespace: Namespace.EPISODES, key: 'ops/batch-inside', content: 'Paged the on-call engineer at 02:00.' }],
      },
      { headers },
    );
    expect(inside.results.map((r) => r.response?.created)).toEqual([true]);
    const bad = brain.getMemories(
      { organizationId: org, namespace: Namespace.EPISODES, keys: ['ops/outage-march'] },
      { headers: { 'mindgate-memory-access-bin': '!!!' } },
    );
    await expect(bad).rejects.toBeInstanceOf(ConnectError);
    await expect(bad).rejects.toMatchObject({ code: Code.InvalidArgument });
  });
});
