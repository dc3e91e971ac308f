// The entity-graph tools over MCP, end to end: the SDK's client through the gateway at
// {base_url}/brain/mcp (as the operator's infrastructure, with X-Gateway-Key naming the
// organization), on memories written through the Brain. Listed only for a plan with the entity
// graph (Professional, or its trial while it runs), refused with a clear message otherwise, and
// every answer cites memories that fetch_memories reads.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { AliasListSchema } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

const KEY = 'operator-key-0123456789abcdef';
const GRAPH_TOOLS = ['affected_entities', 'entity_path', 'explain_entity'];
let platform: TestPlatform;

async function connect(organizationId: string): Promise<Client> {
  const client = new Client({ name: 'graph-test', version: '1.0.0' });
  const url = new URL(`${platform.urls.gateway}/brain/mcp`);
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { 'x-gateway-key': KEY, 'x-mindgate-organization': organizationId } },
    }),
  );
  return client;
}

const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
const recalled = (r: unknown) => ((r as CallToolResult).structuredContent as { memories: { key: string; reasons: string[] }[] }).memories;
const keysOf = (r: unknown) => recalled(r).map((m) => m.key);
/** Keys of the recalled memories the graph brought (reason graph), sorted. */
const byGraph = (r: unknown) =>
  recalled(r)
    .filter((m) => m.reasons.includes('graph'))
    .map((m) => m.key)
    .sort();
const graphToolsOf = async (client: Client) =>
  (await client.listTools()).tools
    .map((t) => t.name)
    .filter((n) => GRAPH_TOOLS.includes(n))
    .sort();

async function write(organizationId: string, key: string, content: string, entities: string[]) {
  await platform.ctx.clients.brain.putMemory({ organizationId, namespace: Namespace.KNOWLEDGE, key, title: key, content, entities });
}

beforeAll(async () => {
  platform = await startTestPlatform({ GATEWAY_KEYS: KEY });
  await platform.ctx.clients.billing.setPlan({ organizationId: 'org-pro', plan: Plan.PROFESSIONAL });
  await write('org-pro', 'services/checkout', 'Checkout depends on the Payments API.', ['Checkout', 'Payments API']);
  await write('org-pro', 'services/payments', 'The Payments API runs on k8s-prod. The Payments API is owned by the payments team.', [
    'Payments API',
    'k8s-prod',
    'payments team',
  ]);
  await write('org-starter', 'services/other', 'Checkout depends on Redis.', ['Checkout', 'Redis']);
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

describe('entity-graph tools over MCP', () => {
  it('lists the three tools to a Professional organization, with input and output schemas', async () => {
    const client = await connect('org-pro');
    const tools = (await client.listTools()).tools.filter((t) => GRAPH_TOOLS.includes(t.name));
    expect(tools.map((t) => t.name).sort()).toEqual(GRAPH_TOOLS);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
    }
    await client.close();
  });

  it('explains an entity with the memories behind each relationship, whose keys fetch_memories reads', async () => {
    const client = await connect('org-pro');
    const res = await client.callTool({ name: 'explain_entity', arguments: { entity: 'payments api' } });
    expect(res.isError).toBeFalsy();
    expect(text(res)).toContain('Payments API (id payments-api)');
    expect(text(res)).toContain('Checkout depends_on Payments API [knowledge/services/checkout "services/checkout" v1]');
    expect(text(res)).toContain('Payments API runs_on k8s-prod [knowledge/services/payments');
    const cited = (res.structuredContent as { incoming: { cited_by: { namespace: string; key: string }[] }[] }).incoming[0].cited_by[0];
    const fetched = await client.callTool({ name: 'fetch_memories', arguments: { namespace: cited.namespace, keys: [cited.key] } });
    expect(text(fetched)).toContain('Checkout depends on the Payments API.');
    const miss = await client.callTool({ name: 'explain_entity', arguments: { entity: 'Paymants API' } });
    expect(miss.isError).toBe(true);
    expect(text(miss)).toContain('closest: "Payments API" (payments-api)');
    await client.close();
  });

  it('answers how two entities connect and what a failure affects, citing each step', async () => {
    const client = await connect('org-pro');
    const path = await client.callTool({ name: 'entity_path', arguments: { from: 'Checkout', to: 'k8s-prod' } });
    expect(text(path)).toContain('Path 1 (2 steps):');
    expect(text(path)).toContain('Checkout depends_on Payments API [knowledge/services/checkout');
    const affected = await client.callTool({ name: 'affected_entities', arguments: { entity: 'k8s-prod' } });
    expect(text(affected)).toContain('Affected if k8s-prod');
    expect(
      (affected.structuredContent as { affected: { entity: { id: string }; depth: number }[] }).affected.map(
        (a) => `${a.entity.id}@${a.depth}`,
      ),
    ).toEqual(['payments-api@1', 'checkout@2']);
    const deps = await client.callTool({ name: 'affected_entities', arguments: { entity: 'Checkout', direction: 'dependencies' } });
    expect(text(deps)).toContain('What Checkout');
    expect(text(deps)).toContain('k8s-prod');
    await client.close();
  });

  it('takes relationships a writer states through manage_memories', async () => {
    const client = await connect('org-pro');
    const created = await client.callTool({
      name: 'manage_memories',
      arguments: {
        action: 'create',
        namespace: 'knowledge',
        key: 'teams/payments',
        content: 'Who runs payments.',
        relationships: [{ subject: 'Payments API', predicate: 'alerts to', object: 'payments on-call' }],
      },
    });
    expect(created.isError).toBeFalsy();
    const explained = await client.callTool({ name: 'explain_entity', arguments: { entity: 'payments on-call' } });
    expect(text(explained)).toContain('Payments API alerts_to payments on-call [knowledge/teams/payments');
    const bad = await client.callTool({
      name: 'manage_memories',
      arguments: {
        action: 'create',
        namespace: 'knowledge',
        key: 'teams/x',
        content: 'x',
        relationships: [{ subject: '', predicate: 'calls', object: 'B' }],
      },
    });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain('relationships[0].subject');
    const malformed = await client.callTool({
      name: 'manage_memories',
      arguments: { action: 'create', namespace: 'knowledge', key: 'teams/y', content: 'y', relationships: [{ subject: 'A', calls: 'B' }] },
    });
    expect(malformed.isError).toBe(true);
    expect(text(malformed)).toContain('relationships[0] must be {subject, predicate, object}');
    await client.close();
  });

  it('recall_context brings back, for a task about a service, the memories the graph ties to it (reason graph)', async () => {
    // Neither memory names the Inventory Service among its entities, and the task passes none:
    // only the graph reads the name in the task and in the memories' text.
    await write('org-pro', 'deps/orders', 'Orders depends on the Inventory Service.', ['Orders']);
    await write('org-pro', 'hosting/inventory', 'The Inventory Service runs on k8s-eu.', ['k8s-eu']);
    await write('org-pro', 'office/lunch', 'Lunch is served at noon in the cafeteria.', ['Cafeteria']);
    const client = await connect('org-pro');
    const res = await client.callTool({
      name: 'recall_context',
      arguments: { task: 'Plan a maintenance window for the Inventory Service' },
    });
    expect(res.isError).toBeFalsy();
    expect(byGraph(res)).toEqual(['deps/orders', 'hosting/inventory']);
    expect(keysOf(res)).not.toContain('office/lunch');
    expect(text(res)).toContain('Orders depends on the Inventory Service.');
    expect(text(res)).toContain('The Inventory Service runs on k8s-eu.');
    await client.close();
  });

  it('recall_context reads an alias of an entity in the task', async () => {
    await platform.ctx.clients.entityGraph.updateEntity({
      organizationId: 'org-pro',
      entityId: 'inventory-service',
      aliases: create(AliasListSchema, { values: ['IMS'] }),
    });
    const client = await connect('org-pro');
    const res = await client.callTool({ name: 'recall_context', arguments: { task: 'Can IMS be restarted tonight?' } });
    expect(res.isError).toBeFalsy();
    expect(byGraph(res)).toEqual(['deps/orders', 'hosting/inventory']);
    expect(text(res)).toContain('The Inventory Service runs on k8s-eu.');
    await client.close();
  });

  it('recall_context uses the graph only where the plan includes it: a Starter organization gets the rest of the context', async () => {
    // Neither memory lists the Billing Service among its entities: only the graph ties them to it.
    for (const organizationId of ['org-starter', 'org-pro'])
      await write(organizationId, 'deps/billing', 'Invoices depends on the Billing Service.', ['Invoices']);
    const task = { task: 'Who relies on the Billing Service?' };
    const starter = await connect('org-starter');
    const withoutGraph = await starter.callTool({ name: 'recall_context', arguments: task });
    expect(withoutGraph.isError).toBeFalsy();
    expect(byGraph(withoutGraph)).toEqual([]);
    expect(keysOf(withoutGraph)).toContain('deps/billing');
    await starter.close();

    const pro = await connect('org-pro');
    await expect.poll(async () => byGraph(await pro.callTool({ name: 'recall_context', arguments: task }))).toEqual(['deps/billing']);
    await pro.close();

    // Upgraded, the Starter organization's graph (kept all along) serves its recall.
    await platform.ctx.clients.billing.setPlan({ organizationId: 'org-starter', plan: Plan.PROFESSIONAL });
    try {
      const upgraded = await connect('org-starter');
      await expect
        .poll(async () => byGraph(await upgraded.callTool({ name: 'recall_context', arguments: task })))
        .toEqual(['deps/billing']);
      await upgraded.close();
    } finally {
      await platform.ctx.clients.billing.setPlan({ organizationId: 'org-starter', plan: Plan.STARTER });
    }
  });

  it('neither lists nor runs the tools for a Starter organization, and says why', async () => {
    const client = await connect('org-starter');
    expect(await graphToolsOf(client)).toEqual([]);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('recall_context');
    const refused = await client.callTool({ name: 'explain_entity', arguments: { entity: 'Checkout' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('Professional plan');
    await client.close();
  });

  it('lists them during a trial and withdraws them once it has ended', async () => {
    await platform.ctx.clients.billing.setPlan({
      organizationId: 'org-trial',
      plan: Plan.PROFESSIONAL,
      trialEndTime: timestampFromMs(Date.now() + 1_500),
    });
    const client = await connect('org-trial');
    expect(await graphToolsOf(client)).toEqual(GRAPH_TOOLS);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await graphToolsOf(client)).toEqual([]);
    const refused = await client.callTool({ name: 'entity_path', arguments: { from: 'a', to: 'b' } });
    expect(text(refused)).toContain('Professional plan');
    await client.close();
  });

  it('answers only from the calling organization', async () => {
    await platform.ctx.clients.billing.setPlan({ organizationId: 'org-starter-2', plan: Plan.PROFESSIONAL });
    const client = await connect('org-starter-2');
    const res = await client.callTool({ name: 'explain_entity', arguments: { entity: 'Checkout' } });
    expect(res.isError).toBe(true);
    expect(text(res)).toContain('no entity named "Checkout"');
    await client.close();
  });
});
