// The Brain tells the entity graph what its memories assert: the relationships a writer states on
// PutMemory and those the extractor reads in the text, cited by the memory's version; an update
// retracts what the memory stopped saying and a deletion everything. A write while the graph
// service cannot be reached still stands, and graph sync tells the graph afterwards.
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, createRouterTransport, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { BrainService, MemoryRelationshipSchema, Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { AliasListSchema, EntityGraphService } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { createBrainContext } from '../../services/brain/context.ts';
import { reconcileGraph } from '../../services/brain/graph-sync.ts';
import { brainRoutes } from '../../services/brain/routes.ts';
import { createLogger } from '../../services/common/log.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

let platform: TestPlatform;
let brain: Client<typeof BrainService>;
let graph: Client<typeof EntityGraphService>;
const K = Namespace.KNOWLEDGE;
const rel = (subject: string, predicate: string, object: string) => create(MemoryRelationshipSchema, { subject, predicate, object });
const edges = async (organizationId: string) =>
  (await graph.listRelationships({ organizationId })).relationships
    .map(
      (r) => `${r.subjectId} ${r.predicate} ${r.objectId} <- ${r.citations.map((c) => `${c.namespace}/${c.key}@${c.version}`).join(',')}`,
    )
    .sort();

beforeAll(async () => {
  platform = await startTestPlatform();
  brain = platform.ctx.clients.brain;
  graph = platform.ctx.clients.entityGraph;
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

describe('memories write the entity graph', () => {
  it('asserts stated and extracted relationships, retracts on update and on deletion', async () => {
    const org = 'org-graph-write';
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'services/checkout',
      title: 'Checkout',
      content: 'Checkout depends on the Payments API.',
      entities: ['Checkout', 'Payments API'],
      relationships: [rel('Checkout', 'owned by', 'web team')],
    });
    expect(await edges(org)).toEqual([
      'checkout depends_on payments-api <- knowledge/services/checkout@1',
      'checkout owned_by web-team <- knowledge/services/checkout@1',
    ]);
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'services/checkout',
      title: 'Checkout',
      content: 'Checkout runs on k8s-prod.',
      entities: ['Checkout', 'k8s-prod'],
      relationships: [rel('Checkout', 'owned_by', 'web team')],
      expectedVersion: 1n,
    });
    expect(await edges(org)).toEqual([
      'checkout owned_by web-team <- knowledge/services/checkout@2',
      'checkout runs_on k8s-prod <- knowledge/services/checkout@2',
    ]);
    await brain.deleteMemory({ organizationId: org, namespace: K, key: 'services/checkout' });
    expect(await edges(org)).toEqual([]);
  });

  it("recall_context brings back the memories behind an entity's relationships in the graph", async () => {
    const org = 'org-graph-recall';
    await platform.ctx.clients.billing.setPlan({ organizationId: org, plan: Plan.PROFESSIONAL });
    // Neither memory lists Payments API among its entities: only the graph ties them to it.
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'deps/checkout',
      content: 'Checkout depends on Payments API.',
      entities: ['Checkout'],
    });
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'hosting',
      content: 'Payments API runs on k8s-prod.',
      entities: ['k8s-prod'],
    });
    await brain.putMemory({ organizationId: org, namespace: K, key: 'unrelated', content: 'Lunch is at noon.', entities: ['Cafeteria'] });
    const recalled = await brain.recallContext({ organizationId: org, entities: ['Payments API'] });
    const got = recalled.memories.map((m) => `${m.memory?.key}:${m.reasons.join('+')}`).sort();
    expect(got).toEqual(['deps/checkout:GRAPH', 'hosting:GRAPH']);
  });

  it('recall_context with a task alone reads the entities the task names in the graph, by name or alias', async () => {
    const org = 'org-graph-recall-task';
    await platform.ctx.clients.billing.setPlan({ organizationId: org, plan: Plan.PROFESSIONAL });
    // No memory lists Payments API among its entities, and the recall passes none.
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'deps/checkout',
      content: 'Checkout depends on Payments API.',
      entities: ['Checkout'],
    });
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'hosting',
      content: 'Payments API runs on k8s-prod.',
      entities: ['k8s-prod'],
    });
    await brain.putMemory({ organizationId: org, namespace: K, key: 'unrelated', content: 'Lunch is at noon.', entities: ['Cafeteria'] });
    const graphed = async (task: string) =>
      (await brain.recallContext({ organizationId: org, task })).memories
        .filter((m) => m.reasons.includes('GRAPH'))
        .map((m) => m.memory?.key)
        .sort();
    expect(await graphed('Who must hear before the Payments API is restarted?')).toEqual(['deps/checkout', 'hosting']);
    await graph.updateEntity({ organizationId: org, entityId: 'payments-api', aliases: create(AliasListSchema, { values: ['PAPI'] }) });
    expect(await graphed('Who must hear before PAPI is restarted?')).toEqual(['deps/checkout', 'hosting']);
    expect(await graphed('Where do we have lunch?')).toEqual([]);
  });

  it('recall_context answers without its graph part when the graph refuses the connection or never answers', async () => {
    const org = 'org-graph-recall-down';
    const ctx = createBrainContext(platform.ctx.stores, createLogger({ level: 'silent' }));
    const local = createClient(BrainService, createRouterTransport(brainRoutes(ctx)));
    await local.putMemory({
      organizationId: org,
      namespace: K,
      key: 'hosting',
      content: 'Payments API runs on k8s-prod.',
      entities: ['k8s-prod'],
    });
    // A server that takes the call and never answers, and a closed port.
    const silent = http2.createServer();
    // The client cancels the call at its deadline; the stream's reset is expected.
    silent.on('stream', (stream) => stream.on('error', () => {}));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      for (const baseUrl of [`http://127.0.0.1:${port}`, 'http://127.0.0.1:9']) {
        ctx.graph = () => createClient(EntityGraphService, createGrpcTransport({ baseUrl }));
        const recalled = await local.recallContext({ organizationId: org, task: 'Where does the Payments API run?' });
        expect(
          recalled.memories.map((m) => `${m.memory?.key}:${m.reasons.join('+')}`),
          baseUrl,
        ).toEqual(['hosting:SEARCH']);
      }
    } finally {
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('recall_context answers without its graph part when billing cannot say whether the plan includes it', async () => {
    const org = 'org-graph-recall-unbilled';
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'deps/checkout',
      content: 'Checkout depends on Payments API.',
      entities: ['Checkout'],
    });
    const ctx = createBrainContext(platform.ctx.stores, createLogger({ level: 'silent' }));
    const local = createClient(BrainService, createRouterTransport(brainRoutes(ctx)));
    ctx.graph = () => graph;
    const recalled = async () =>
      (await local.recallContext({ organizationId: org, task: 'Who must hear before the Payments API is restarted?' })).memories.map(
        (m) => `${m.memory?.key}:${m.reasons.includes('GRAPH') ? 'graph' : 'other'}`,
      );
    ctx.graphEntitled = async () => true;
    expect(await recalled()).toContain('deps/checkout:graph');
    ctx.graphEntitled = () => Promise.reject(new ConnectError('the billing service is unavailable', Code.Unavailable));
    expect(await recalled()).not.toContain('deps/checkout:graph');
  });

  it('refuses a malformed stated relationship before writing anything', async () => {
    const err = await brain
      .putMemory({ organizationId: 'org-graph-bad', namespace: K, key: 'k', content: 'x', relationships: [rel('A', '???', 'B')] })
      .then(
        () => undefined,
        (e) => ConnectError.from(e),
      );
    expect(err?.code).toBe(Code.InvalidArgument);
    expect(err?.rawMessage).toMatch(/^relationships\[0\]\.predicate:/);
    expect((await brain.getMemories({ organizationId: 'org-graph-bad', namespace: K, keys: ['k'] })).memories).toEqual([]);
  });

  it('keeps a write when the graph service is unreachable, and graph sync tells the graph later', async () => {
    const org = 'org-graph-later';
    let clock = Date.now();
    const ctx = createBrainContext(platform.ctx.stores, createLogger({ level: 'silent' }), { now: () => clock });
    // A closed port: every call fails at once.
    ctx.graph = () => createClient(EntityGraphService, createGrpcTransport({ baseUrl: 'http://127.0.0.1:9', defaultTimeoutMs: 2_000 }));
    const local = createClient(BrainService, createRouterTransport(brainRoutes(ctx)));
    const put = await local.putMemory({
      organizationId: org,
      namespace: K,
      key: 'ledger',
      content: 'Ledger depends on Kafka.',
      entities: ['Ledger', 'Kafka'],
    });
    expect(put.memory?.version).toBe(1n);
    expect(await edges(org)).toEqual([]);
    ctx.graph = () => graph;
    clock += 10_000;
    expect(await reconcileGraph(ctx)).toBe(1);
    expect(await edges(org)).toEqual(['ledger depends_on kafka <- knowledge/ledger@1']);
    expect(await reconcileGraph(ctx)).toBe(0);
  });
});
