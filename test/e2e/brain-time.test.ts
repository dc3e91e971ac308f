// Time and batch writes in the Brain, as a client sees them: the MCP SDK client over real HTTP
// at {base_url}/brain/mcp with a real access token, and the brain's gRPC contract through the
// edge's client. Event times are set, shown, filtered on and ranked by; "when did …" is answered
// by what the tools return; several memories are written in one call; and search results do not
// depend on the limit.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';

let platform: TestPlatform;
let client: Client;
let org: string;

const fixture = JSON.parse(
  fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/brain-quality.json'), 'utf8'),
) as {
  memories: { namespace: 'knowledge' | 'episodes'; key: string; title: string; content: string; tags: string[]; entities: string[] }[];
  queries: { namespace: 'knowledge' | 'episodes'; query: string }[];
};

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult & { structuredContent: any }> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: any };
}

const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ EMBEDDINGS_THREADS: '2' });
  const mcpUrl = `${platform.ctx.config.publicUrls.gateway}/brain/mcp`;
  const token = await obtainAccessToken(platform, { resource: mcpUrl });
  org = token.organizationId;
  client = new Client({ name: 'time-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { authorization: `Bearer ${token.access_token}` } } }),
  );
}, 120_000);

afterAll(async () => {
  await client?.close();
  await platform?.stop();
});

describe('event time', () => {
  it('is set by the writer, shown in results and kept by an update that gives none', async () => {
    const created = await call('manage_memories', {
      action: 'create',
      namespace: 'episodes',
      key: 'chat/alice-berlin',
      content: 'Alice said she moved to Berlin for a new job at a robotics startup.',
      entities: ['Alice'],
      event_time: '2024-03-15',
    });
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent.memory.event_time).toBe('2024-03-15T00:00:00.000Z');
    expect(created.structuredContent.memory.created_at.slice(0, 4)).not.toBe('2024');

    const updated = await call('manage_memories', {
      action: 'update',
      namespace: 'episodes',
      key: 'chat/alice-berlin',
      expected_version: 1,
      content: 'Alice said she moved to Berlin for a new job at a robotics start-up.',
      entities: ['Alice'],
    });
    expect(updated.structuredContent.memory.version).toBe(2);
    expect(updated.structuredContent.memory.event_time).toBe('2024-03-15T00:00:00.000Z');

    const fetched = await call('fetch_memories', { namespace: 'episodes', keys: ['chat/alice-berlin'] });
    expect(text(fetched)).toContain('happened 2024-03-15');
  });

  it('answers "when did …" from what search_memories and recall_context return', async () => {
    const search = await call('search_memories', { namespace: 'episodes', query: 'When did Alice move to Berlin?' });
    expect(search.structuredContent.results[0].key).toBe('chat/alice-berlin');
    expect(search.structuredContent.results[0].event_time).toBe('2024-03-15T00:00:00.000Z');
    expect(text(search).split('\n')[0]).toContain('2024-03-15');

    const recall = await call('recall_context', { task: 'When did Alice move to Berlin?' });
    expect(recall.structuredContent.memories[0].event_time).toBe('2024-03-15T00:00:00.000Z');
    expect(recall.structuredContent.context).toContain('happened 2024-03-15');
  });

  it('filters search and recall by after and before', async () => {
    for (const [key, when, story] of [
      ['chat/bob-trip-1', '2023-06-10', 'Bob is back from a holiday trip to Lisbon: grilled sardines every night.'],
      ['chat/bob-trip-2', '2023-09-02', 'On his Oslo holiday trip Bob tried brown cheese and hated the prices.'],
      ['chat/bob-trip-3', '2024-01-20', 'Kyoto was the best holiday trip ever, Bob says; the ramen food alone was worth it.'],
    ]) {
      const r = await call('manage_memories', {
        action: 'create',
        namespace: 'episodes',
        key,
        content: story,
        entities: ['Bob'],
        event_time: when,
      });
      expect(r.structuredContent.outcome).toBe('created');
    }
    const keys = (r: { structuredContent: any }) => r.structuredContent.results.map((x: { key: string }) => x.key).sort();
    const query = 'Bob holiday trip food';
    const bob = { namespace: 'episodes', query, entities: ['Bob'] };
    expect(keys(await call('search_memories', { ...bob, after: '2023-09-01', before: '2024-01-01' }))).toEqual(['chat/bob-trip-2']);
    expect(keys(await call('search_memories', { ...bob, after: '2023-09-02T00:00:00Z' }))).toEqual(['chat/bob-trip-2', 'chat/bob-trip-3']);
    expect(keys(await call('search_memories', { ...bob, before: '2023-09-02T00:00:00Z' }))).toEqual(['chat/bob-trip-1']);

    const recall = await call('recall_context', { task: query, entities: ['Bob'], before: '2023-07-01' });
    expect(recall.structuredContent.memories.map((m: { key: string }) => m.key)).toEqual(['chat/bob-trip-1']);

    const bad = await call('search_memories', { namespace: 'episodes', query, after: '2024-01-01', before: '2023-01-01' });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain('event_after: must be earlier than event_before');
    const malformed = await call('search_memories', { namespace: 'episodes', query, after: 'last tuesday' });
    expect(malformed.isError).toBe(true);
  });

  it('ranks the more recent of two equally relevant events first', async () => {
    const content = 'Carol and Dan watched the meteor shower from the hill behind the observatory.';
    const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
    for (const [key, when] of [
      ['chat/meteor-older', daysAgo(400)],
      ['chat/meteor-newer', daysAgo(10)],
    ]) {
      await call('manage_memories', { action: 'create', namespace: 'episodes', key, content, event_time: when, allow_duplicate: true });
    }
    const r = await call('search_memories', { namespace: 'episodes', query: 'meteor shower observatory hill' });
    const [first, second] = r.structuredContent.results;
    expect(first.key).toBe('chat/meteor-newer');
    expect(second.key).toBe('chat/meteor-older');
    expect(first.scores.relevance).toBe(second.scores.relevance);
    expect(first.scores.recency).toBeGreaterThan(second.scores.recency);
  });

  it('is validated and returned by gRPC', async () => {
    const brain = platform.ctx.clients.brain;
    const at = Date.UTC(2022, 4, 2, 9, 30);
    const put = await brain.putMemory({
      organizationId: org,
      namespace: Namespace.KNOWLEDGE,
      key: 'facts/migration',
      content: 'The orders database migration to the new cluster finished.',
      eventTime: timestampFromMs(at),
    });
    expect(Number(put.memory!.eventTime!.seconds) * 1000).toBe(at);
    const found = await brain.searchMemories({
      organizationId: org,
      namespace: Namespace.KNOWLEDGE,
      query: 'orders database migration',
      eventAfter: timestampFromMs(at),
      eventBefore: timestampFromMs(at + 1),
    });
    expect(found.results.map((r) => r.memory!.key)).toEqual(['facts/migration']);
    await expect(
      brain.putMemory({
        organizationId: org,
        namespace: Namespace.KNOWLEDGE,
        key: 'facts/ancient',
        content: 'x',
        eventTime: timestampFromMs(Date.UTC(1800, 0, 1)),
      }),
    ).rejects.toMatchObject({ code: Code.InvalidArgument, rawMessage: 'event_time: must be between 1900-01-01 and 2200-01-01' });
  });
});

describe('batch writes', () => {
  it('creates several memories with manage_memories items, then reports each one unchanged', async () => {
    const items = Array.from({ length: 30 }, (_, i) => ({
      namespace: 'knowledge',
      key: `batch/fact-${i}`,
      content: `Service number ${i} of the batch test is owned by team ${String.fromCharCode(65 + (i % 26))} and deploys on ${['Monday', 'Tuesday', 'Thursday'][i % 3]}s.`,
      tags: ['batch'],
      allow_duplicate: true,
      event_time: `2025-01-${String(1 + (i % 28)).padStart(2, '0')}`,
    }));
    const first = await call('manage_memories', { action: 'create', items });
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent.items).toHaveLength(30);
    expect(first.structuredContent.items.every((i: { outcome: string }) => i.outcome === 'created')).toBe(true);
    expect(text(first)).toContain('30 items: 30 created');
    const again = await call('manage_memories', { action: 'create', items: items.slice(0, 2) });
    expect(again.structuredContent.items.map((i: { outcome: string }) => i.outcome)).toEqual(['failed', 'failed']);
    expect(again.structuredContent.items[0].error).toContain('is at version 1, not 0');

    const updates = await call('manage_memories', {
      action: 'update',
      items: [
        { ...items[0], content: `${items[0].content} Changed.`, expected_version: 1 },
        { ...items[1], expected_version: 7 },
        { ...items[2], expected_version: 1 },
      ],
    });
    expect(updates.structuredContent.items.map((i: { outcome: string }) => i.outcome)).toEqual(['updated', 'failed', 'unchanged']);
    const search = await call('search_memories', { namespace: 'knowledge', query: 'service number 17 batch test', tags: ['batch'] });
    expect(search.structuredContent.results[0].key).toBe('batch/fact-17');
  });

  it('refuses malformed batches with errors that say what to fix', async () => {
    const item = { namespace: 'knowledge', key: 'batch/x', content: 'x' };
    const noVersion = await call('manage_memories', { action: 'update', items: [item] });
    expect(noVersion.isError).toBe(true);
    expect(text(noVersion)).toContain('expected_version');
    const tooMany = await call('manage_memories', { action: 'create', items: Array.from({ length: 101 }, () => item) });
    expect(tooMany.isError).toBe(true);
    const noContent = await call('manage_memories', { action: 'create', items: [item, { namespace: 'knowledge', key: 'batch/y' }] });
    expect(noContent.isError).toBe(true);
    expect(text(noContent)).toContain('items[1].content');
    const badTime = await call('manage_memories', { action: 'create', items: [{ ...item, event_time: 'last spring' }] });
    expect(text(badTime)).toContain('items[0].event_time must be an ISO 8601 time');

    const brain = platform.ctx.clients.brain;
    const write = { namespace: Namespace.KNOWLEDGE, key: 'batch/ok', content: 'fine' };
    await expect(brain.putMemories({ organizationId: org, memories: [write, { ...write, key: 'bad key!' }] })).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringContaining('memories[1].key'),
    });
    await expect(brain.putMemories({ organizationId: org, memories: [{ ...write, organizationId: 'other-org' }] })).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringContaining('memories[0].organization_id'),
    });
    await expect(brain.putMemories({ organizationId: org, memories: [] })).rejects.toBeInstanceOf(ConnectError);
    const none = await brain.getMemories({ organizationId: org, namespace: Namespace.KNOWLEDGE, keys: ['batch/ok'] });
    expect(none.missingKeys).toEqual(['batch/ok']);
  });
});

describe('search results do not depend on the limit', () => {
  it('returns the same first ten, in the same order, for limit 10 and limit 20 over many queries', async () => {
    const memories = fixture.memories.filter((m) => m.namespace === 'knowledge').slice(0, 400);
    for (let start = 0; start < memories.length; start += 25) {
      const items = memories.slice(start, start + 25).map((m) => ({
        namespace: m.namespace,
        key: `limit/${m.key}`,
        title: m.title || undefined,
        content: m.content,
        tags: m.tags,
        entities: m.entities,
        allow_duplicate: true,
      }));
      const r = await call('manage_memories', { action: 'create', items });
      expect(r.isError).toBeFalsy();
    }
    const queries = fixture.queries.filter((q) => q.namespace === 'knowledge').slice(0, 60);
    let differing = 0;
    for (const q of queries) {
      const keys = async (limit: number) =>
        (await call('search_memories', { namespace: 'knowledge', query: q.query, limit })).structuredContent.results.map(
          (r: { key: string }) => r.key,
        );
      const [ten, twenty] = [await keys(10), await keys(20)];
      if (JSON.stringify(ten) !== JSON.stringify(twenty.slice(0, 10))) differing += 1;
    }
    expect(queries.length).toBe(60);
    expect(differing).toBe(0);
  }, 300_000);
});
