// The Brain under an index memory budget (BRAIN_INDEX_MEMORY_MB, index-budget.ts) small enough
// for two of four organizations: searches of each answer what a Brain without a budget answers,
// one at a time and many at once (with evictions under searches in flight), least recently used
// organizations are evicted and their estimated bytes stay under the budget, writes that arrive
// while an organization is evicted are found once it is rebuilt (through MCP, as a client sees
// it, and in the embedded vector store alone), and the figures are exported to Prometheus.
import { create } from '@bufbuild/protobuf';
import { createClient, createRouterTransport, type Client as RpcClient } from '@connectrpc/connect';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrainService, Namespace, PutMemoryRequestSchema } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { type BrainContext, createBrainContext } from '../../services/brain/context.ts';
import { brainRoutes } from '../../services/brain/routes.ts';
import { hybridSearch } from '../../services/brain/search/hybrid.ts';
import { createLogger } from '../../services/common/log.ts';
import { IndexBudget } from '../../services/common/storage/index-budget.ts';
import { createEmbeddedVectorStore } from '../../services/common/storage/vectors/embedded.ts';
import { qualityFixture } from '../bench/brain-seed.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { sample, scrape } from '../support/prometheus.ts';

const LIMIT = 2 * 2 ** 20;
const GATEWAY_KEY = 'budget-gateway-key-0123456789abcdef';
const PER_ORGANIZATION = 120;
const QUERIES = qualityFixture.queries.slice(0, 12).map((q) => q.query);
const silent = createLogger({ level: 'silent' });
// One clock for both Brains, so that recency scores (and so rankings) are the same.
const clock = Date.now();
const now = () => clock;

let platform: TestPlatform;
let budget: IndexBudget;
let organizations: string[];
/** A Brain over the platform's stores and its budget (the same routes, holds included). */
let bounded: BrainContext;
/** The same stores, with lexical indexes no budget evicts: the expected answers. */
let reference: BrainContext;

const client = (ctx: BrainContext): RpcClient<typeof BrainService> => createClient(BrainService, createRouterTransport(brainRoutes(ctx)));

/** Keys and final scores of a search, the answer compared. */
async function answer(ctx: BrainContext, organizationId: string, query: string): Promise<[string, number][]> {
  const found = await client(ctx).searchMemories({ organizationId, namespace: Namespace.KNOWLEDGE, query, limit: 10 });
  return found.results.map((r) => [r.memory!.key, Number(r.scores!.final.toFixed(9))]);
}

/** The same search straight on the context: no call holds the organization, so evictions can land mid-search. */
async function unheldAnswer(ctx: BrainContext, organizationId: string, query: string): Promise<[string, number][]> {
  const found = await hybridSearch(ctx, { organizationId, namespace: 'knowledge', query, limit: 10 });
  return found.results.map((r) => [r.record.key, Number(r.scores.final.toFixed(9))]);
}

async function mcpClient(organizationId: string): Promise<Client> {
  const mcp = new Client({ name: 'budget-test', version: '1.0.0' });
  const headers = { 'x-gateway-key': GATEWAY_KEY, 'x-mindgate-organization': organizationId };
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${platform.urls.gateway}/brain/mcp`), { requestInit: { headers } }));
  return mcp;
}

beforeAll(async () => {
  platform = await startTestPlatform({ BRAIN_INDEX_MEMORY_MB: String(LIMIT / 2 ** 20), GATEWAY_KEYS: GATEWAY_KEY, METRICS_PORT: '0' });
  budget = platform.ctx.stores.indexBudget!;
  bounded = createBrainContext(platform.ctx.stores, silent, { now });
  reference = createBrainContext({ ...platform.ctx.stores, indexBudget: undefined }, silent, { now });
  organizations = [];
  for (const name of ['Ada', 'Bo', 'Cy', 'Di']) {
    const { organization } = await platform.ctx.clients.organizations.createOrganization({ name, ownerUserId: 'user-1' });
    organizations.push(organization!.organizationId);
  }
  // Written through the bounded Brain: its own writes already evict the others.
  const writer = client(bounded);
  for (const [o, organizationId] of organizations.entries()) {
    const memories = qualityFixture.memories.slice(o * PER_ORGANIZATION, (o + 1) * PER_ORGANIZATION);
    for (let i = 0; i < memories.length; i += 40) {
      const batch = memories.slice(i, i + 40).map((m, j) =>
        create(PutMemoryRequestSchema, {
          namespace: Namespace.KNOWLEDGE,
          key: `fact-${i + j}`,
          title: m.title,
          content: m.content,
          tags: m.tags,
          entities: m.entities,
        }),
      );
      await writer.putMemories({ organizationId, memories: batch });
    }
  }
}, 300_000);

afterAll(async () => {
  await platform?.stop();
});

describe('searches under a budget smaller than the organizations in use', () => {
  it('answer one at a time as without a budget, evicting the least recently used, within the budget', async () => {
    const before = budget.usage().evictions;
    const largest = new Map<string, number>();
    for (let round = 0; round < 2; round++) {
      for (const organizationId of organizations) {
        for (const query of QUERIES.slice(0, 4)) {
          const expected = await answer(reference, organizationId, query);
          expect(expected.length).toBeGreaterThan(0);
          expect(await answer(bounded, organizationId, query)).toEqual(expected);
          const held = budget.residentBytesOf(organizationId);
          expect(held).toBeGreaterThan(0);
          expect(held).toBeLessThan(LIMIT);
          largest.set(organizationId, Math.max(held, largest.get(organizationId) ?? 0));
          expect(budget.residentBytes).toBeLessThanOrEqual(LIMIT);
        }
      }
    }
    // The four do not fit together: using them in turn evicts at every round.
    expect([...largest.values()].reduce((a, b) => a + b)).toBeGreaterThan(LIMIT);
    expect(budget.usage().evictions - before).toBeGreaterThanOrEqual(4);
    expect(budget.usage().organizations).toBeLessThan(organizations.length);
  });

  it('answer many at once as without a budget, with evictions landing under searches in flight', async () => {
    const expected = new Map<string, [string, number][]>();
    for (const organizationId of organizations) {
      for (const query of QUERIES) expected.set(`${organizationId} ${query}`, await answer(reference, organizationId, query));
    }
    // Embedded one at a time, as for the reference: the embedder's batches of concurrent queries
    // differ from single runs in the seventh digit, which is not what this test is about.
    for (const query of QUERIES) await bounded.queryEmbeddings.embed(query);
    const before = budget.usage().evictions;
    for (let round = 0; round < 3; round++) {
      const work = organizations.flatMap((organizationId, o) =>
        QUERIES.map(async (query, q) => {
          // Half through the routes (holding their organization), half straight on the context.
          const found = (o + q) % 2 ? await answer(bounded, organizationId, query) : await unheldAnswer(bounded, organizationId, query);
          expect(found, `${organizationId} ${query}`).toEqual(expected.get(`${organizationId} ${query}`));
        }),
      );
      await Promise.all(work);
      // With no call in flight, the budget holds again.
      expect(budget.residentBytes).toBeLessThanOrEqual(LIMIT);
    }
    expect(budget.usage().evictions - before).toBeGreaterThan(0);
  });
});

describe('writes while an organization is evicted', () => {
  it('are found through MCP once the organization is rebuilt', async () => {
    const [target, ...others] = organizations;
    const mcp = await mcpClient(target!);
    try {
      const warm = (await mcp.callTool({
        name: 'search_memories',
        arguments: { namespace: 'knowledge', query: 'who owns fraud-api' },
      })) as CallToolResult;
      expect(warm.isError).toBeFalsy();
      for (const organizationId of others) await answer(bounded, organizationId, QUERIES[0]!);
      expect(budget.residentBytesOf(target!)).toBe(0);
      // Another replica (its own lexical index) takes the write; this Brain holds nothing of the organization.
      const replica = createBrainContext({ ...platform.ctx.stores, indexBudget: undefined }, silent);
      const written = await client(replica).putMemory({
        organizationId: target!,
        namespace: Namespace.KNOWLEDGE,
        key: 'runbooks/quasar-failover',
        title: 'Quasar failover',
        content: 'The quasar cluster fails over to the Lisbon region when its primary stops answering for ninety seconds.',
      });
      expect(written.memory?.key).toBe('runbooks/quasar-failover');
      for (const organizationId of others) await answer(bounded, organizationId, QUERIES[1]!);
      expect(budget.residentBytesOf(target!)).toBe(0);
      const found = (await mcp.callTool({
        name: 'search_memories',
        arguments: { namespace: 'knowledge', query: 'where does quasar fail over to' },
      })) as CallToolResult;
      expect(found.isError).toBeFalsy();
      expect(JSON.stringify(found.structuredContent)).toContain('runbooks/quasar-failover');
      expect(budget.residentBytesOf(target!)).toBeGreaterThan(0);
      // Its own writes too: evicted again, then written and searched through MCP.
      for (const organizationId of others) await answer(bounded, organizationId, QUERIES[2]!);
      expect(budget.residentBytesOf(target!)).toBe(0);
      const created = (await mcp.callTool({
        name: 'manage_memories',
        arguments: {
          action: 'create',
          namespace: 'knowledge',
          key: 'runbooks/nimbus-restore',
          title: 'Nimbus restore',
          content: 'Nimbus backups are restored from the cold bucket with the restore-nimbus job, never by hand.',
        },
      })) as CallToolResult;
      expect(created.isError).toBeFalsy();
      const again = (await mcp.callTool({
        name: 'search_memories',
        arguments: { namespace: 'knowledge', query: 'how are nimbus backups restored' },
      })) as CallToolResult;
      expect(JSON.stringify(again.structuredContent)).toContain('runbooks/nimbus-restore');
    } finally {
      await mcp.close();
    }
  });

  it('go to the vectors file alone, and the reloaded matrix holds them', async () => {
    const storeBudget = new IndexBudget({ limitBytes: 200_000 });
    const store = createEmbeddedVectorStore({ path: ':memory:', dimensions: 8, budget: storeBudget });
    // Distinct directions: 8 pseudo-random components each.
    const unit = (i: number) => Float32Array.from({ length: 8 }, (_, d) => Math.sin(i * 12.9898 + d * 78.233) + 0.01);
    const points = (org: string, from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ id: `p${from + i}`, organizationId: org, vector: unit(from + i), payload: { n: from + i } }));
    await store.upsert([...points('a', 0, 300), ...points('b', 0, 300)]);
    expect((await store.search('a', unit(3), { limit: 1 }))[0]!.id).toBe('p3');
    await store.search('b', unit(3), { limit: 1 });
    // Each matrix takes more than half of the budget: loading b evicted a.
    expect(storeBudget.residentBytesOf('a')).toBe(0);
    expect(storeBudget.residentBytesOf('b')).toBeGreaterThan(100_000);
    await store.upsert([{ id: 'fresh', organizationId: 'a', vector: unit(1_000), payload: { n: -1 } }]);
    await store.delete('a', ['p13']);
    expect(storeBudget.residentBytesOf('a')).toBe(0);
    expect((await store.search('a', unit(1_000), { limit: 1 }))[0]!.id).toBe('fresh');
    expect((await store.search('a', unit(13), { limit: 1 }))[0]!.id).not.toBe('p13');
    expect((await store.search('a', unit(14), { limit: 1 }))[0]!.id).toBe('p14');
    expect(await store.count('a')).toBe(300);
    expect(storeBudget.residentBytesOf('b')).toBe(0);
    await store.close();
    expect(storeBudget.residentBytes).toBe(0);
  });
});

describe('metrics', () => {
  it('export the indexes resident bytes, the budget and the evictions', async () => {
    const text = await scrape(platform.metricsUrl!);
    expect(sample(text, 'mindgate_brain_index_budget_bytes')).toBe(LIMIT);
    const lexical = sample(text, 'mindgate_brain_index_resident_bytes', { index: 'lexical' })!;
    const vectors = sample(text, 'mindgate_brain_index_resident_bytes', { index: 'vectors' })!;
    expect(lexical).toBeGreaterThan(0);
    expect(vectors).toBeGreaterThan(0);
    expect(lexical + vectors).toBeLessThanOrEqual(LIMIT);
    expect(sample(text, 'mindgate_brain_index_evictions_total')).toBe(budget.usage().evictions);
    expect(sample(text, 'mindgate_brain_index_evictions_total')).toBeGreaterThan(4);
    expect(sample(text, 'mindgate_brain_index_organizations')).toBeGreaterThan(0);
  });
});
