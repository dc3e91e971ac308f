// The slice that proves the foundation: the brain stores and searches memories through every
// layer, reached by grpc-js, grpcurl, Connect, gRPC-Web and the edge's in-process client.
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrainService, Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { findTool, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { grpc, loadServiceClient, unary } from '../support/grpc-js.ts';

const run = promisify(execFile);

let platform: TestPlatform;
let brainAddress: string;
let brain: grpc.Client;
let health: grpc.Client;
let auth: Record<string, string>;

const MEMORIES = [
  {
    key: 'deploy/steps',
    title: 'How we deploy the API',
    content: 'Run the release pipeline, wait for canary health checks, then promote the build to production.',
    tags: ['ops'],
  },
  {
    key: 'cake',
    title: 'Office birthday cake',
    content: 'The bakery on Main Street makes the chocolate cake for team birthdays.',
    tags: ['social'],
  },
  {
    key: 'db/failover',
    title: 'Database failover',
    content: 'When the primary database goes down, promote the replica and update the connection string.',
    tags: ['ops', 'db'],
  },
];

beforeAll(async () => {
  platform = await startTestPlatform();
  brainAddress = platform.grpc.brain!;
  const BrainClient = loadServiceClient('mindgate/brain/v1/brain.proto', 'mindgate.brain.v1.BrainService');
  brain = new BrainClient(brainAddress, grpc.credentials.createInsecure());
  const HealthClient = loadServiceClient('grpc/health/v1/health.proto', 'grpc.health.v1.Health');
  health = new HealthClient(brainAddress, grpc.credentials.createInsecure());
  auth = { 'x-internal-token': platform.internalToken };
  for (const m of MEMORIES) {
    await unary(brain, 'putMemory', { organizationId: 'org-a', namespace: 'NAMESPACE_KNOWLEDGE', ...m }, auth);
  }
  await unary(
    brain,
    'putMemory',
    {
      organizationId: 'org-b',
      namespace: 'NAMESPACE_KNOWLEDGE',
      key: 'deploy/steps',
      title: 'Org B deploys',
      content: 'Org B deploys by copying files over FTP.',
    },
    auth,
  );
}, 120_000);

afterAll(async () => {
  brain?.close();
  health?.close();
  await platform?.stop();
});

describe('brain over gRPC (grpc-js)', () => {
  it('refuses calls without the internal credential', async () => {
    await expect(
      unary(brain, 'getMemories', { organizationId: 'org-a', namespace: 'NAMESPACE_KNOWLEDGE', keys: ['cake'] }),
    ).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    await expect(
      unary(
        brain,
        'getMemories',
        { organizationId: 'org-a', namespace: 'NAMESPACE_KNOWLEDGE', keys: ['cake'] },
        { 'x-internal-token': 'wrong' },
      ),
    ).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
  });

  it('answers health checks without the credential', async () => {
    const res = await unary<{ status: string }>(health, 'check', { service: '' });
    expect(res.status).toBe('SERVING');
    const svc = await unary<{ status: string }>(health, 'check', { service: 'mindgate.brain.v1.BrainService' });
    expect(svc.status).toBe('SERVING');
    await expect(unary(health, 'check', { service: 'nope.Service' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('reads memories by exact key, within the organization only', async () => {
    const res = await unary<any>(
      brain,
      'getMemories',
      {
        organizationId: 'org-a',
        namespace: 'NAMESPACE_KNOWLEDGE',
        keys: ['deploy/steps', 'missing'],
      },
      auth,
    );
    expect(res.memories).toHaveLength(1);
    expect(res.memories[0]).toMatchObject({ key: 'deploy/steps', title: 'How we deploy the API', version: '1', organizationId: 'org-a' });
    expect(res.missingKeys).toEqual(['missing']);
    const other = await unary<any>(
      brain,
      'getMemories',
      {
        organizationId: 'org-b',
        namespace: 'NAMESPACE_KNOWLEDGE',
        keys: ['cake', 'deploy/steps'],
      },
      auth,
    );
    expect(other.memories.map((m: any) => m.content)).toEqual(['Org B deploys by copying files over FTP.']);
    expect(other.missingKeys).toEqual(['cake']);
  });

  it('searches by meaning, not words', async () => {
    const res = await unary<any>(
      brain,
      'searchMemories',
      {
        organizationId: 'org-a',
        namespace: 'NAMESPACE_KNOWLEDGE',
        query: 'shipping a new release to prod',
        limit: 3,
      },
      auth,
    );
    expect(res.results[0].memory.key).toBe('deploy/steps');
    expect(res.results.map((r: any) => r.memory.organizationId)).toEqual(res.results.map(() => 'org-a'));
    expect(res.results[0].scores.semantic).toBeGreaterThan(res.results[res.results.length - 1].scores.semantic);
    const food = await unary<any>(
      brain,
      'searchMemories',
      {
        organizationId: 'org-a',
        namespace: 'NAMESPACE_KNOWLEDGE',
        query: 'dessert for a party',
        limit: 1,
      },
      auth,
    );
    expect(food.results[0].memory.key).toBe('cake');
  });

  it('filters search by tags and never crosses organizations', async () => {
    const res = await unary<any>(
      brain,
      'searchMemories',
      {
        organizationId: 'org-a',
        namespace: 'NAMESPACE_KNOWLEDGE',
        query: 'outage',
        limit: 10,
        tags: ['db'],
      },
      auth,
    );
    expect(res.results.map((r: any) => r.memory.key)).toEqual(['db/failover']);
    const b = await unary<any>(
      brain,
      'searchMemories',
      {
        organizationId: 'org-b',
        namespace: 'NAMESPACE_KNOWLEDGE',
        query: 'chocolate cake',
        limit: 10,
      },
      auth,
    );
    expect(b.results.map((r: any) => r.memory.key)).toEqual(['deploy/steps']);
    const episodes = await unary<any>(
      brain,
      'searchMemories',
      {
        organizationId: 'org-a',
        namespace: 'NAMESPACE_EPISODES',
        query: 'deploy',
        limit: 10,
      },
      auth,
    );
    expect(episodes.results).toEqual([]);
  });

  it('updates with an optimistic version check', async () => {
    const base = { organizationId: 'org-a', namespace: 'NAMESPACE_EPISODES', key: 'incident/42', content: 'first' };
    const created = await unary<any>(brain, 'putMemory', { ...base, expectedVersion: 0 }, auth);
    expect(created).toMatchObject({ created: true, memory: { version: '1' } });
    const updated = await unary<any>(brain, 'putMemory', { ...base, content: 'second', expectedVersion: 1 }, auth);
    expect(updated).toMatchObject({ created: false, memory: { version: '2', content: 'second' } });
    await expect(unary(brain, 'putMemory', { ...base, content: 'stale', expectedVersion: 1 }, auth)).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
    });
    await unary(brain, 'deleteMemory', { organizationId: 'org-a', namespace: 'NAMESPACE_EPISODES', key: 'incident/42' }, auth);
    await expect(
      unary(brain, 'deleteMemory', { organizationId: 'org-a', namespace: 'NAMESPACE_EPISODES', key: 'incident/42' }, auth),
    ).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it.each([
    ['no organization', { namespace: 'NAMESPACE_KNOWLEDGE', key: 'k', content: 'c' }, 'organization_id'],
    ['bad organization', { organizationId: 'a/b', namespace: 'NAMESPACE_KNOWLEDGE', key: 'k', content: 'c' }, 'organization_id'],
    ['no namespace', { organizationId: 'org-a', key: 'k', content: 'c' }, 'namespace'],
    ['bad key', { organizationId: 'org-a', namespace: 'NAMESPACE_KNOWLEDGE', key: 'has space', content: 'c' }, 'key'],
    ['empty content', { organizationId: 'org-a', namespace: 'NAMESPACE_KNOWLEDGE', key: 'k', content: '  ' }, 'content'],
    ['huge content', { organizationId: 'org-a', namespace: 'NAMESPACE_KNOWLEDGE', key: 'k', content: 'x'.repeat(40_000) }, 'content'],
    ['empty tag', { organizationId: 'org-a', namespace: 'NAMESPACE_KNOWLEDGE', key: 'k', content: 'c', tags: [''] }, 'tags[0]'],
  ])('rejects a PutMemory with %s as INVALID_ARGUMENT', async (_name, request, field) => {
    const err: any = await unary(brain, 'putMemory', request, auth).catch((e) => e);
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toContain(field);
  });

  it('rejects malformed searches', async () => {
    const base = { organizationId: 'org-a', namespace: 'NAMESPACE_KNOWLEDGE' };
    for (const bad of [
      { ...base, query: '' },
      { ...base, query: 'x', limit: 51 },
      { ...base, namespace: 'NAMESPACE_UNSPECIFIED', query: 'x' },
    ]) {
      await expect(unary(brain, 'searchMemories', bad, auth)).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    }
  });
});

describe('brain over Connect and gRPC-Web', () => {
  it('serves the Connect protocol over HTTP/1.1 JSON', async () => {
    const res = await fetch(`http://${brainAddress}/mindgate.brain.v1.BrainService/GetMemories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-internal-token': platform.internalToken },
      body: JSON.stringify({ organizationId: 'org-a', namespace: 'NAMESPACE_KNOWLEDGE', keys: ['cake'] }),
    });
    expect(res.status).toBe(200);
    const body: any = await res.json();
    expect(body.memories[0].title).toBe('Office birthday cake');
    const denied = await fetch(`http://${brainAddress}/mindgate.brain.v1.BrainService/GetMemories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(denied.status).toBe(401);
    expect(((await denied.json()) as { code: string }).code).toBe('unauthenticated');
  });

  it('serves gRPC-Web and Connect clients of connect-node', async () => {
    for (const transport of [
      createGrpcWebTransport({ baseUrl: `http://${brainAddress}`, httpVersion: '1.1' }),
      createConnectTransport({ baseUrl: `http://${brainAddress}`, httpVersion: '2' }),
    ]) {
      const client = createClient(BrainService, transport);
      const res = await client.getMemories(
        { organizationId: 'org-a', namespace: Namespace.KNOWLEDGE, keys: ['db/failover'] },
        { headers: { 'x-internal-token': platform.internalToken } },
      );
      expect(res.memories[0].key).toBe('db/failover');
    }
  });
});

describe('brain through the edge client', () => {
  it('stores and searches in process, with the credential added for it', async () => {
    const { brain: client } = platform.ctx.clients;
    const put = await client.putMemory({
      organizationId: 'org-c',
      namespace: Namespace.KNOWLEDGE,
      key: 'oncall',
      title: 'On-call rota',
      content: 'The on-call engineer is paged by the alerting system and acknowledges within five minutes.',
    });
    expect(put.created).toBe(true);
    const res = await client.searchMemories({ organizationId: 'org-c', namespace: Namespace.KNOWLEDGE, query: 'who gets paged at night' });
    expect(res.results[0].memory?.key).toBe('oncall');
    const err = await client.getMemories({ organizationId: '', namespace: Namespace.KNOWLEDGE, keys: ['x'] }).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect(err.code).toBe(Code.InvalidArgument);
  });
});

describe('grpcurl through reflection', () => {
  const grpcurl = findTool('grpcurl', [path.join(os.homedir(), 'go/bin/grpcurl')]);

  it.skipIf(!grpcurl)('lists, describes and calls the brain service', async () => {
    const list = await run(grpcurl!, ['-plaintext', brainAddress, 'list']);
    expect(list.stdout.split('\n').filter(Boolean).sort()).toEqual([
      'grpc.health.v1.Health',
      'grpc.reflection.v1.ServerReflection',
      'grpc.reflection.v1alpha.ServerReflection',
      'mindgate.brain.v1.BrainService',
      // Memory seeding runs, hosted beside the memories they write.
      'mindgate.brain.v1.SeedingService',
      // The Brain's events, taken by the webhooks relay.
      'mindgate.events.v1.EventOutboxService',
    ]);
    const describe = await run(grpcurl!, ['-plaintext', brainAddress, 'describe', 'mindgate.brain.v1.BrainService']);
    expect(describe.stdout).toContain(
      'rpc SearchMemories ( .mindgate.brain.v1.SearchMemoriesRequest ) returns ( .mindgate.brain.v1.SearchMemoriesResponse );',
    );
    for (const rpc of [
      'RecordFeedback',
      'FlagContradiction',
      'ListContradictions',
      'ResolveContradiction',
      'AskQuestion',
      'ListQuestions',
      'ResolveQuestion',
      'RecallContext',
    ]) {
      expect(describe.stdout).toContain(`rpc ${rpc} (`);
    }
    const message = await run(grpcurl!, ['-plaintext', brainAddress, 'describe', 'mindgate.brain.v1.Memory']);
    expect(message.stdout).toContain('.google.protobuf.Timestamp create_time = 9;');
    const call = await run(grpcurl!, [
      '-plaintext',
      '-H',
      `x-internal-token: ${platform.internalToken}`,
      '-d',
      JSON.stringify({ organization_id: 'org-a', namespace: 'NAMESPACE_KNOWLEDGE', query: 'database outage', limit: 1 }),
      brainAddress,
      'mindgate.brain.v1.BrainService/SearchMemories',
    ]);
    expect(JSON.parse(call.stdout).results[0].memory.key).toBe('db/failover');
    const recall = await run(grpcurl!, [
      '-plaintext',
      '-H',
      `x-internal-token: ${platform.internalToken}`,
      '-d',
      JSON.stringify({ organization_id: 'org-a', task: 'the database is down', token_budget: 500 }),
      brainAddress,
      'mindgate.brain.v1.BrainService/RecallContext',
    ]);
    const recalled = JSON.parse(recall.stdout);
    expect(recalled.memories[0].memory.key).toBe('db/failover');
    expect(recalled.context).toContain('### knowledge/db/failover');
    const health = await run(grpcurl!, ['-plaintext', brainAddress, 'grpc.health.v1.Health/Check']);
    expect(JSON.parse(health.stdout)).toEqual({ status: 'SERVING' });
    const denied = await run(grpcurl!, ['-plaintext', '-d', '{}', brainAddress, 'mindgate.brain.v1.BrainService/GetMemories']).catch(
      (e) => e,
    );
    expect(denied.stderr).toContain('Unauthenticated');
  });
});
