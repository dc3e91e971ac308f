// Entitlements enforced, with a catalogue whose Starter plan is small (3 memories, 2 members, 2
// runs a month): a
// Starter organization hits its memory limit with an error that names the plan and the limit (the
// MCP tool's error text through the MCP SDK client, RESOURCE_EXHAUSTED over gRPC with grpc-js), loses
// none of the memories it was told were stored, and may still update them; invitations stop at the
// member limit (403 plan-limit), an acceptance beyond it is refused while the link stays valid; and
// a change of plan reaches a second replica within the entitlements cache's two seconds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { readEdgeConfig } from '../../edge/config.ts';
import { startPlatform, type Platform } from '../../edge/platform.ts';
import { DEFAULT_PLANS_FILE } from '../../services/billing/catalogue.ts';
import { createLogger } from '../../services/common/log.ts';
import { grpc, loadServiceClient, unary } from '../support/grpc-js.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import { testEnv, type TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';

const plansFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-plans-')), 'plans.yaml');
fs.writeFileSync(
  plansFile,
  fs
    .readFileSync(DEFAULT_PLANS_FILE, 'utf8')
    .replace('max_memories: 100000', 'max_memories: 3')
    .replace('max_members: 10', 'max_members: 2')
    .replace('runs_per_month: 100', 'runs_per_month: 2'),
);

let offset = 0;
const now = () => Date.now() + offset;
let platform: TestPlatform;
let replica: Platform;
let api: string;
let owner: ObtainedToken;
let mcp: Client;
const call = restClient(() => api);

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ BILLING_PLANS_FILE: plansFile, TRIAL_DAYS: '0' }, { now });
  api = platform.ctx.config.publicUrls.api;
  const resource = `${platform.ctx.config.publicUrls.gateway}/brain/mcp`;
  owner = await obtainAccessToken(platform, { resource: api });
  const brainToken = await obtainAccessToken(platform, {
    resource,
    user: owner.user,
    mode: 'sign-in',
    client: owner.client,
    organizationId: owner.organizationId,
  });
  mcp = new Client({ name: 'entitlements-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${platform.urls.gateway}/brain/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${brainToken.access_token}` } },
    }),
  );
  // A second replica of the edge and services over the same stores, with the same public URLs.
  const urls = platform.ctx.config.publicUrls;
  const env = testEnv(platform.dataDir, {
    PUBLIC_GATEWAY_URL: urls.gateway,
    PUBLIC_API_URL: urls.api,
    PUBLIC_WEB_URL: urls.web,
    PUBLIC_AUTH_URL: urls.auth,
    BILLING_PLANS_FILE: plansFile,
  });
  replica = await startPlatform({
    config: readEdgeConfig(env, 2),
    logger: createLogger({ level: 'silent' }),
    stores: platform.ctx.stores,
    now,
  });
}, 180_000);

afterAll(async () => {
  await mcp?.close();
  await replica?.stop(500);
  await platform?.stop();
});

const remember = (key: string, content: string, update?: { expected_version: number }) =>
  mcp.callTool({
    name: 'manage_memories',
    arguments: { action: update ? 'update' : 'create', namespace: 'knowledge', key, title: key, content, ...update },
  }) as Promise<CallToolResult>;
const text = (r: CallToolResult) => (r.content as { type: string; text: string }[]).map((c) => c.text).join('\n');

const FACTS = [
  'Invoices are issued on the first working day of the month by the finance team.',
  'The staging database is refreshed from production every Sunday night at two.',
  'On-call engineers hand over at nine in the morning with a written summary.',
];

describe('runs_per_month on Starter', () => {
  it('queues runs up to the limit, refuses the next with 403 plan-limit naming the plan and the limit', async () => {
    const org = owner.organizationId;
    const token = owner.access_token;
    const thread = await call(`/organizations/${org}/threads`, { token, body: { title: 'Limits' } });
    expect(thread.status, JSON.stringify(thread.json)).toBe(201);
    const run = () => call(`/organizations/${org}/threads/${thread.json.id}/runs`, { token, body: { executor: 'external' } });
    for (let i = 0; i < 2; i += 1) expect((await run()).status).toBe(201);
    const refused = await run();
    expect(refused.status).toBe(403);
    expect(refused.json.type).toMatch(/problem\/plan-limit$/);
    expect(refused.json.detail).toContain('the Starter plan allows 2 runs a month');
    // The usage shows what was counted: the refused run is not among them.
    const usage = await call(`/organizations/${org}/usage`, { token });
    expect(usage.json.runs).toEqual({ used: 2, limit: 2 });
    // The count is this calendar month's (UTC): next month, the usage starts again from 0.
    const monthLater = offset;
    offset += 32 * 86_400_000;
    try {
      expect(await platform.ctx.clients.runUsage.getRunUsage({ organizationId: org })).toMatchObject({ queued: 0n });
    } finally {
      offset = monthLater;
    }
    // Counted from the runs of this calendar month (UTC): a new month starts from 0 (run-limit.ts).
  });
});

describe('max_memories on Starter', () => {
  it('stores up to the limit, then refuses the next new memory naming the plan and the limit', async () => {
    for (const [i, fact] of FACTS.entries()) {
      const r = await remember(`fact/${i}`, fact);
      expect(r.isError, text(r)).toBeFalsy();
    }
    const refused = await remember('fact/3', 'The office plants are watered by whoever arrives first on Mondays.');
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('the most the Starter plan allows (max_memories 3)');
  });

  it('keeps every accepted memory, stores nothing for the refused one, and still takes updates', async () => {
    const { memories } = await platform.ctx.clients.brain.getMemories({
      organizationId: owner.organizationId,
      namespace: Namespace.KNOWLEDGE,
      keys: ['fact/0', 'fact/1', 'fact/2', 'fact/3'],
    });
    expect(memories.map((m) => m.key).sort()).toEqual(['fact/0', 'fact/1', 'fact/2']);
    const updated = await remember('fact/1', 'The staging database is refreshed from production every Saturday night at three.', {
      expected_version: 1,
    });
    expect(updated.isError, text(updated)).toBeFalsy();
    const usage = await call(`/organizations/${owner.organizationId}/usage`, { token: owner.access_token });
    expect(usage.json.memories).toEqual({ used: 3, limit: 3 });
    expect(usage.json.members).toEqual({ used: 1, limit: 2 });
    expect(usage.json.entitlements).toMatchObject({ entity_graph: false, max_memories: 3, max_members: 2 });
  });

  it('answers RESOURCE_EXHAUSTED over gRPC (grpc-js) with the same message', async () => {
    const BrainClient = loadServiceClient('mindgate/brain/v1/brain.proto', 'mindgate.brain.v1.BrainService');
    const brain = new BrainClient(platform.grpc.brain!, grpc.credentials.createInsecure());
    try {
      const err = await unary(
        brain,
        'putMemory',
        {
          organizationId: owner.organizationId,
          namespace: 'NAMESPACE_KNOWLEDGE',
          key: 'fact/grpc',
          title: 'g',
          content: 'Lunch is served at noon in the big room.',
        },
        { 'x-internal-token': platform.internalToken },
      ).catch((e: grpc.ServiceError) => e);
      expect((err as grpc.ServiceError).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect((err as grpc.ServiceError).details).toContain('Starter plan allows (max_memories 3)');
      expect((err as grpc.ServiceError).metadata.get('mindgate-reason')).toEqual(['plan-limit']);
    } finally {
      brain.close();
    }
  });
});

describe('max_members on Starter', () => {
  it('stops invitations at the limit, pending ones included, with a plan-limit problem', async () => {
    const first = await call(`/organizations/${owner.organizationId}/invitations`, {
      token: owner.access_token,
      body: { email: 'one@example.com', role: 'member' },
    });
    expect(first.status).toBe(201);
    const second = await call(`/organizations/${owner.organizationId}/invitations`, {
      token: owner.access_token,
      body: { email: 'two@example.com', role: 'member' },
    });
    expect(second.status).toBe(403);
    expect(second.json.type).toBe('tag:mindgate.dev,2026:problem/plan-limit');
    expect(second.json.detail).toContain('the Starter plan allows 2 members, pending invitations included');
  });

  it('refuses an acceptance beyond the limit and leaves the link valid', async () => {
    // Make room by revoking the pending invitation, invite again, then fill the last seat directly.
    const { invitations } = await platform.ctx.clients.invitations.listInvitations({ organizationId: owner.organizationId });
    await platform.ctx.clients.invitations.revokeInvitation({
      organizationId: owner.organizationId,
      invitationId: invitations[0].invitationId,
    });
    const { token } = await platform.ctx.clients.invitations.createInvitation({
      organizationId: owner.organizationId,
      email: 'three@example.com',
      role: Role.MEMBER,
      invitedBy: 'usr_test',
      actorRole: Role.OWNER,
    });
    await platform.ctx.clients.organizations.addMember({ organizationId: owner.organizationId, userId: 'usr_filler', role: Role.VIEWER });
    const refused = await platform.ctx.clients.invitations
      .acceptInvitation({ token, userId: 'usr_three', userEmail: 'three@example.com' })
      .catch((e: Error) => e);
    expect(String(refused)).toContain('[resource_exhausted]');
    expect(String(refused)).toContain('the Starter plan allows 2 members');
    const still = await platform.ctx.clients.invitations.getInvitationByToken({ token });
    expect(still.invitation?.email).toBe('three@example.com');
  });
});

describe('a change of plan', () => {
  it('reaches the other replica within two seconds', async () => {
    const onFirst = () => call(`/organizations/${owner.organizationId}/subscription`, { token: owner.access_token });
    const replicaApi = replica.urls.api;
    const viaReplica = await fetch(`${replicaApi}/organizations/${owner.organizationId}/usage`, {
      headers: { authorization: `Bearer ${owner.access_token}` },
    });
    expect(viaReplica.headers.get('ratelimit-policy')).toBe('"api-starter";q=600;w=60');
    await platform.ctx.clients.billing.setPlan({ organizationId: owner.organizationId, plan: Plan.PROFESSIONAL });
    offset += 2_100;
    const after = await fetch(`${replicaApi}/organizations/${owner.organizationId}/usage`, {
      headers: { authorization: `Bearer ${owner.access_token}` },
    });
    expect(after.headers.get('ratelimit-policy')).toBe('"api-professional";q=3000;w=60');
    expect(((await after.json()) as { memories: { limit: number } }).memories.limit).toBe(2000000);
    expect((await onFirst()).json.plan).toBe('professional');
    const { structuredContent, isError } = await remember('fact/3', 'The office plants are watered by whoever arrives first on Mondays.');
    expect(isError).toBeFalsy();
    expect(structuredContent).toMatchObject({ outcome: 'created' });
  });
});

describe('the memory graph over REST follows entity_graph', () => {
  const graph = (path = '/graph/entities') => call(`/organizations/${owner.organizationId}${path}`, { token: owner.access_token });
  const assert = () =>
    call(`/organizations/${owner.organizationId}/graph/relationships`, {
      token: owner.access_token,
      body: { subject: 'Checkout', predicate: 'depends_on', object: 'Payments API', memory: { namespace: 'knowledge', key: 'fact/0' } },
    });
  const setPlan = (plan: Plan, trialEndMs?: number) =>
    platform.ctx.clients.billing.setPlan({
      organizationId: owner.organizationId,
      plan,
      ...(trialEndMs === undefined ? {} : { trialEndTime: timestampFromMs(trialEndMs) }),
    });
  const refusedOnStarter = async () => {
    for (const res of [
      await graph(),
      await graph('/graph/entities/search?q=checkout'),
      await graph('/graph/relationships'),
      await assert(),
    ]) {
      expect(res.status, JSON.stringify(res.json)).toBe(403);
      expect(res.json.type).toBe('tag:mindgate.dev,2026:problem/plan-limit');
      expect(res.json.detail).toContain('the Starter plan does not include the memory graph (entity_graph)');
    }
  };

  it('refuses every graph operation on Starter with a plan-limit problem naming the plan, and stores nothing', async () => {
    await setPlan(Plan.STARTER);
    await refusedOnStarter();
    await setPlan(Plan.PROFESSIONAL);
    expect((await graph()).json.entities ?? []).toEqual([]);
  });

  it('allows them on Professional', async () => {
    await setPlan(Plan.PROFESSIONAL);
    const asserted = await assert();
    expect(asserted.status, JSON.stringify(asserted.json)).toBe(201);
    const listed = await graph();
    expect(listed.status).toBe(200);
    expect(listed.json.entities.map((e: { name: string }) => e.name).sort()).toEqual(['Checkout', 'Payments API']);
  });

  it('allows them during a trial, and refuses them once the trial has ended without payment', async () => {
    await setPlan(Plan.PROFESSIONAL, now() + 60_000);
    expect((await graph()).status).toBe(200);
    // Past the trial's end (and well within the access token's life).
    offset += 120_000;
    await refusedOnStarter();
  });
});
