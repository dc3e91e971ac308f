// The brain's behaviour beyond storage: duplicates and contradictions on write, feedback that
// changes ranking and warns, open questions, hybrid scores, recall_context, replicas that share
// one records store, and tenant isolation on every RPC. Through the edge's typed client (the
// same routes, gate and interceptors as the gRPC port).
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, createClient, createRouterTransport, type Client } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BrainService,
  DuplicateKind,
  ItemStatus,
  MemoryRefSchema,
  Namespace,
  Outcome,
  WriteOutcome,
} from '../../gen/mindgate/brain/v1/brain_pb.js';
import { createBrainContext } from '../../services/brain/context.ts';
import { brainRoutes } from '../../services/brain/routes.ts';
import { createLogger } from '../../services/common/log.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

let platform: TestPlatform;
let brain: Client<typeof BrainService>;

const K = Namespace.KNOWLEDGE;
const E = Namespace.EPISODES;
const ref = (key: string, namespace = K) => create(MemoryRefSchema, { namespace, key });
const alice = { clientId: 'client-alice', userId: 'u-alice', clientName: 'Alice CLI' };
const bob = { clientId: 'client-bob', userId: 'u-bob', clientName: 'Bob agent' };

async function code(p: Promise<unknown>): Promise<Code | undefined> {
  const err = await p.then(
    () => undefined,
    (e) => e,
  );
  return err instanceof ConnectError ? err.code : undefined;
}

async function errorOf(p: Promise<unknown>): Promise<ConnectError> {
  const err = await p.then(
    () => undefined,
    (e) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

beforeAll(async () => {
  platform = await startTestPlatform();
  brain = platform.ctx.clients.brain;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('duplicates', () => {
  const org = 'org-dup';
  it('reports an exact duplicate under another key instead of adding it', async () => {
    const first = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'vpn/setup',
      title: 'VPN setup',
      content: 'Install WireGuard and import the office profile from the wiki.',
      source: alice,
    });
    expect(first.outcome).toBe(WriteOutcome.CREATED);
    const again = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'vpn/howto',
      title: 'VPN setup',
      content: 'Install wireguard, and import the office profile from the wiki!',
      source: bob,
    });
    expect(again.outcome).toBe(WriteOutcome.DUPLICATE);
    expect(again.created).toBe(false);
    expect(again.duplicates.map((d) => [d.ref?.key, d.kind])).toEqual([['vpn/setup', DuplicateKind.EXACT]]);
    const read = await brain.getMemories({ organizationId: org, namespace: K, keys: ['vpn/howto'] });
    expect(read.missingKeys).toEqual(['vpn/howto']);
  });

  it('reports a near duplicate, and writes it when the writer insists', async () => {
    const near = {
      organizationId: org,
      namespace: K,
      key: 'vpn/howto',
      title: 'VPN setup',
      content: 'Install WireGuard and then import the office profile from the wiki.',
    };
    const refused = await brain.putMemory(near);
    expect(refused.outcome).toBe(WriteOutcome.DUPLICATE);
    expect(refused.duplicates[0]).toMatchObject({ kind: DuplicateKind.NEAR });
    expect(refused.duplicates[0].overlap).toBeGreaterThanOrEqual(0.85);
    const forced = await brain.putMemory({ ...near, allowDuplicate: true });
    expect(forced.outcome).toBe(WriteOutcome.CREATED);
    expect(forced.duplicates[0].ref?.key).toBe('vpn/setup');
  });

  it('says UNCHANGED when the same key is written with the same text', async () => {
    const same = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'vpn/setup',
      title: 'VPN setup',
      content: 'Install WireGuard and import the office profile from the wiki.',
    });
    expect(same.outcome).toBe(WriteOutcome.UNCHANGED);
    expect(same.memory?.version).toBe(1n);
  });

  it('does not compare with other namespaces or organizations', async () => {
    const episode = await brain.putMemory({
      organizationId: org,
      namespace: E,
      key: 'vpn/setup',
      title: 'VPN setup',
      content: 'Install WireGuard and import the office profile from the wiki.',
    });
    expect(episode.outcome).toBe(WriteOutcome.CREATED);
    const other = await brain.putMemory({
      organizationId: 'org-dup-2',
      namespace: K,
      key: 'x',
      title: 'VPN setup',
      content: 'Install WireGuard and import the office profile from the wiki.',
    });
    expect(other.outcome).toBe(WriteOutcome.CREATED);
    expect(other.duplicates).toEqual([]);
  });
});

describe('contradictions', () => {
  const org = 'org-ctr';
  let detectedId = '';

  it('flags a write that disagrees with a close memory, and stores the write', async () => {
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'ci/timeout',
      title: 'CI timeout',
      content: 'The integration test job times out after 30 minutes.',
      source: alice,
    });
    const res = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'ci/timeout-new',
      title: 'CI timeout',
      content: 'The integration test job times out after 45 minutes.',
      source: bob,
    });
    expect(res.outcome).toBe(WriteOutcome.CREATED);
    expect(res.contradictions).toHaveLength(1);
    const c = res.contradictions[0];
    expect(c.id).toMatch(/^ctr_[a-z2-7]{20}$/);
    expect(c.status).toBe(ItemStatus.OPEN);
    expect(c.flaggedBy).toBe('DETECTOR');
    expect(c.memories.map((m) => m.ref?.key).sort()).toEqual(['ci/timeout', 'ci/timeout-new']);
    expect(c.reason).toContain('30 minutes');
    expect(c.reason).toContain('45 minutes');
    detectedId = c.id;
  });

  it('flags negations and opposite words, updates included', async () => {
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'flags/dark-mode',
      content: 'The dark mode feature flag is enabled for all customers.',
    });
    const opposite = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'flags/dark-mode-2',
      content: 'The dark mode feature flag is disabled for all customers.',
    });
    expect(opposite.contradictions[0]?.reason).toMatch(/enabled.*disabled|disabled.*enabled/);
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'backup/rule',
      content: 'Nightly backups run on the replica database server.',
    });
    const negated = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'backup/rule-2',
      content: 'Nightly backups never run on the replica database server.',
    });
    expect(negated.contradictions).toHaveLength(1);
    // An update of an existing key is checked too.
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'cache/ttl',
      content: 'Cache entries for product pages expire after 5 minutes.',
    });
    const neutral = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'cache/notes',
      content: 'The checkout page is never cached.',
    });
    expect(neutral.contradictions).toEqual([]);
    const updated = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'cache/notes',
      content: 'Cache entries for product pages expire after 10 minutes.',
      expectedVersion: 1n,
    });
    expect(updated.outcome).toBe(WriteOutcome.UPDATED);
    expect(updated.contradictions.map((c) => c.memories.map((m) => m.ref?.key).sort())).toEqual([['cache/notes', 'cache/ttl']]);
  });

  it('does not flag agreeing or unrelated memories', async () => {
    const res = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'ci/cache',
      content: 'The integration test job caches node modules between runs.',
    });
    expect(res.contradictions).toEqual([]);
    // Same sentence shape, different subjects named as entities: not a contradiction.
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'svc/billing-port',
      content: 'billing-api listens on port 8080.',
      entities: ['billing-api'],
    });
    const other = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'svc/search-port',
      content: 'search-api listens on port 9090.',
      entities: ['search-api'],
    });
    expect(other.contradictions).toEqual([]);
  });

  it('lists, fetches by id and resolves contradictions', async () => {
    const byId = await brain.listContradictions({ organizationId: org, ids: [detectedId, 'ctr_aaaaaaaaaaaaaaaaaaaa'] });
    expect(byId.contradictions.map((c) => c.id)).toEqual([detectedId]);
    expect(byId.missingIds).toEqual(['ctr_aaaaaaaaaaaaaaaaaaaa']);
    const touching = await brain.listContradictions({ organizationId: org, memories: [ref('ci/timeout')] });
    expect(touching.contradictions.map((c) => c.id)).toEqual([detectedId]);
    const resolved = await brain.resolveContradiction({
      organizationId: org,
      id: detectedId,
      status: ItemStatus.RESOLVED,
      resolution: 'It is 45 minutes since the runner upgrade.',
      source: alice,
    });
    expect(resolved.contradiction).toMatchObject({ status: ItemStatus.RESOLVED, resolution: 'It is 45 minutes since the runner upgrade.' });
    expect(resolved.contradiction?.resolvedBy?.clientId).toBe('client-alice');
    const open = await brain.listContradictions({ organizationId: org, status: ItemStatus.OPEN });
    expect(open.contradictions.map((c) => c.id)).not.toContain(detectedId);
    expect(
      await code(brain.resolveContradiction({ organizationId: org, id: detectedId, status: ItemStatus.DISMISSED, resolution: 'again' })),
    ).toBe(Code.FailedPrecondition);
  });

  it('accepts explicit flags once per set of memories', async () => {
    const first = await brain.flagContradiction({
      organizationId: org,
      memories: [ref('ci/cache'), ref('backup/rule')],
      reason: 'They name different runners.',
      source: bob,
    });
    expect(first.created).toBe(true);
    expect(first.contradiction?.flaggedBy).toBe('CLIENT');
    const again = await brain.flagContradiction({
      organizationId: org,
      memories: [ref('backup/rule'), ref('ci/cache')],
      reason: 'duplicate flag',
    });
    expect(again.created).toBe(false);
    expect(again.contradiction?.id).toBe(first.contradiction?.id);
    const missing = await errorOf(brain.flagContradiction({ organizationId: org, memories: [ref('ci/cache'), ref('nope')], reason: 'x' }));
    expect(missing.code).toBe(Code.NotFound);
    expect(missing.rawMessage).toContain('knowledge/nope');
  });
});

describe('open questions', () => {
  const org = 'org-q';
  it('asks, lists by memory and entity, and resolves', async () => {
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'billing/retries',
      content: 'Failed card payments are retried three times.',
      entities: ['Stripe'],
    });
    const asked = await brain.askQuestion({
      organizationId: org,
      question: 'Does Stripe retry on weekends?',
      memories: [ref('billing/retries')],
      entities: ['Stripe'],
      source: alice,
    });
    const q = asked.question!;
    expect(q.id).toMatch(/^q_[a-z2-7]{20}$/);
    expect(q.status).toBe(ItemStatus.OPEN);
    expect((await brain.listQuestions({ organizationId: org, entities: ['stripe'] })).questions.map((x) => x.id)).toEqual([q.id]);
    expect((await brain.listQuestions({ organizationId: org, memories: [ref('billing/retries')] })).questions.map((x) => x.id)).toEqual([
      q.id,
    ]);
    const done = await brain.resolveQuestion({ organizationId: org, id: q.id, status: ItemStatus.RESOLVED, resolution: 'Yes, every day.' });
    expect(done.question).toMatchObject({ status: ItemStatus.RESOLVED, resolution: 'Yes, every day.' });
    expect((await brain.listQuestions({ organizationId: org, status: ItemStatus.OPEN })).questions).toEqual([]);
  });
});

describe('feedback and ranking', () => {
  const org = 'org-fb';
  const text = 'Restart the cache service with systemctl restart redis after changing its configuration.';

  it('promotes what worked, demotes what failed, and warns who failed and why', async () => {
    await brain.putMemory({ organizationId: org, namespace: K, key: 'cache/restart-a', content: text });
    await brain.putMemory({ organizationId: org, namespace: K, key: 'cache/restart-b', content: text, allowDuplicate: true });
    const query = { organizationId: org, namespace: K, query: 'how do I restart the redis cache' };
    const before = await brain.searchMemories(query);
    expect(before.results.map((r) => r.memory?.key)).toEqual(['cache/restart-a', 'cache/restart-b']);
    expect(before.results[0].warning).toBeUndefined();

    const failed = await brain.recordFeedback({
      organizationId: org,
      memories: [ref('cache/restart-a'), ref('gone')],
      outcome: Outcome.FAILED,
      note: 'redis is managed by the operator now',
      source: bob,
    });
    expect(failed.memories[0].stats).toMatchObject({
      failed: 1,
      worked: 0,
      // Who reported, by the client's registered name (the client id only when no name is known).
      lastFailedBy: 'Bob agent',
      lastFailedNote: 'redis is managed by the operator now',
    });
    expect(failed.memories[0].version).toBe(1n);
    expect(failed.missing.map((m) => m.key)).toEqual(['gone']);
    await brain.recordFeedback({ organizationId: org, memories: [ref('cache/restart-b')], outcome: Outcome.WORKED, source: alice });

    const after = await brain.searchMemories(query);
    expect(after.results.map((r) => r.memory?.key)).toEqual(['cache/restart-b', 'cache/restart-a']);
    const [worked, bad] = after.results;
    expect(worked.scores!.feedback).toBeGreaterThan(0);
    expect(bad.scores!.feedback).toBeLessThan(0);
    // Only feedback moved it: the failed one is at least as relevant by text.
    expect(bad.scores!.relevance).toBeGreaterThanOrEqual(worked.scores!.relevance);
    expect(worked.warning).toBeUndefined();
    expect(bad.warning).toMatchObject({ clientId: 'Bob agent', note: 'redis is managed by the operator now', failed: 1 });
    expect(bad.warning!.message).toContain('by Bob agent: redis is managed');
    expect(bad.warning!.failedAt).toBeDefined();
  });

  it('rejects malformed feedback', async () => {
    for (const req of [
      { organizationId: org, memories: [], outcome: Outcome.WORKED },
      { organizationId: org, memories: [ref('a')], outcome: Outcome.UNSPECIFIED },
      { organizationId: org, memories: [ref('a')], outcome: Outcome.FAILED, note: 'x'.repeat(1_001) },
      { organizationId: org, memories: [ref('bad key')], outcome: Outcome.FAILED },
      { organizationId: org, memories: [ref('a', Namespace.UNSPECIFIED)], outcome: Outcome.FAILED },
    ]) {
      expect(await code(brain.recordFeedback(req))).toBe(Code.InvalidArgument);
    }
  });
});

describe('hybrid search', () => {
  const org = 'org-hybrid';
  beforeAll(async () => {
    const put = (key: string, content: string, extra: object = {}) =>
      brain.putMemory({ organizationId: org, namespace: K, key, content, ...extra });
    await put('errors/e4021', 'Error E4021 from the payment gateway means the merchant account is suspended.', {
      tags: ['payments'],
      entities: ['Adyen'],
    });
    await put('ops/kafka', 'Kafka consumers lag when the partition count is lower than the consumer count.', {
      tags: ['ops'],
      entities: ['Kafka'],
    });
    await put('ops/dns', 'Internal DNS changes take up to an hour to propagate to every office.', { tags: ['ops', 'network'] });
    await put('team/lunch', 'The team lunch is on Fridays at the Thai place around the corner.', { tags: ['social'] });
  });

  it('finds rare words by BM25 and paraphrases by meaning, and says why', async () => {
    const code = await brain.searchMemories({ organizationId: org, namespace: K, query: 'E4021', limit: 2 });
    expect(code.results[0].memory?.key).toBe('errors/e4021');
    expect(code.results[0].scores!.lexical).toBeGreaterThan(0);
    expect(code.results[0].scores!.final).toBeGreaterThan(code.results[1].scores!.final);
    expect(code.searchedMemories).toBe(4);
    expect(code.organizationId).toBe(org);
    const meaning = await brain.searchMemories({
      organizationId: org,
      namespace: K,
      query: 'where do we eat together at the end of the week',
      limit: 1,
    });
    expect(meaning.results[0].memory?.key).toBe('team/lunch');
    expect(meaning.results[0].scores!.semantic).toBeGreaterThan(0);
    const s = meaning.results[0].scores!;
    expect(s.final).toBeCloseTo(s.relevance + 0.2 * s.feedback + 0.05 * s.recency, 6);
  });

  it('filters by tags, entities and time', async () => {
    const tagged = await brain.searchMemories({ organizationId: org, namespace: K, query: 'propagation lag', tags: ['ops', 'network'] });
    expect(tagged.results.map((r) => r.memory?.key)).toEqual(['ops/dns']);
    const entity = await brain.searchMemories({ organizationId: org, namespace: K, query: 'consumers', entities: ['kafka'] });
    expect(entity.results.map((r) => r.memory?.key)).toEqual(['ops/kafka']);
    const future = await brain.searchMemories({
      organizationId: org,
      namespace: K,
      query: 'dns',
      updatedAfter: timestampFromMs(Date.now() + 60_000),
    });
    expect(future.results).toEqual([]);
    const past = await brain.searchMemories({
      organizationId: org,
      namespace: K,
      query: 'dns',
      updatedBefore: timestampFromMs(Date.now() + 60_000),
      limit: 1,
    });
    expect(past.results.map((r) => r.memory?.key)).toEqual(['ops/dns']);
  });

  it('stops before the token budget', async () => {
    const all = await brain.searchMemories({ organizationId: org, namespace: K, query: 'ops', limit: 4 });
    expect(all.results).toHaveLength(4);
    const cut = await brain.searchMemories({ organizationId: org, namespace: K, query: 'ops', limit: 4, tokenBudget: 100 });
    expect(cut.truncated).toBe(true);
    expect(cut.results.length).toBeLessThan(4);
    expect(cut.results.length).toBeGreaterThan(0);
  });

  it('rejects malformed searches with the field to fix', async () => {
    for (const [req, field] of [
      [{ organizationId: org, namespace: K, query: 'x', tokenBudget: 5 }, 'token_budget'],
      [{ organizationId: org, namespace: K, query: 'x', tags: [''] }, 'tags[0]'],
      [
        { organizationId: org, namespace: K, query: 'x', updatedAfter: timestampFromMs(2), updatedBefore: timestampFromMs(1) },
        'updated_after',
      ],
      [{ organizationId: org, namespace: K, query: 'x'.repeat(2_001) }, 'query'],
    ] as [Parameters<typeof brain.searchMemories>[0], string][]) {
      const err = await errorOf(brain.searchMemories(req));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toContain(field);
    }
  });
});

describe('recall_context', () => {
  const org = 'org-recall';
  let contradiction = '';
  beforeAll(async () => {
    const put = (namespace: Namespace, key: string, title: string, content: string, entities: string[] = []) =>
      brain.putMemory({ organizationId: org, namespace, key, title, content, entities, source: alice });
    await put(
      K,
      'deploy/api',
      'Deploying the API',
      'Deploy the API with the release pipeline; it runs database migrations before traffic shifts.',
      ['API'],
    );
    await put(K, 'db/migrations', 'Migrations', 'Database migrations must be backwards compatible for one release.', ['Postgres']);
    await put(
      E,
      'incident/2026-10-02',
      'Failed deploy',
      'The API deploy of October 2 failed because a migration locked the orders table for 9 minutes.',
      ['API', 'Postgres'],
    );
    await put(K, 'office/plants', 'Plants', 'Water the office plants every Tuesday.');
    const res = await put(K, 'db/migrations-2', 'Migrations', 'Database migrations must not be backwards compatible for one release.');
    contradiction = res.contradictions[0].id;
    await brain.askQuestion({ organizationId: org, question: 'Who owns the Postgres upgrade?', entities: ['Postgres'] });
  });

  it('composes keys, entity matches and task search with open items', async () => {
    const res = await brain.recallContext({
      organizationId: org,
      task: 'deploy the API with a database migration',
      keys: [ref('office/plants'), ref('missing/key')],
      entities: ['Postgres'],
    });
    const keys = res.memories.map((m) => m.memory?.key);
    expect(keys[0]).toBe('office/plants');
    expect(res.memories[0].reasons[0]).toBe('KEY');
    expect(keys).toContain('deploy/api');
    expect(keys).toContain('incident/2026-10-02');
    const incident = res.memories.find((m) => m.memory?.key === 'incident/2026-10-02')!;
    expect(incident.reasons).toEqual(expect.arrayContaining(['SEARCH', 'ENTITY']));
    expect(res.missing.map((m) => m.key)).toEqual(['missing/key']);
    expect(res.contradictions.map((c) => c.id)).toContain(contradiction);
    expect(res.questions.map((q) => q.question)).toEqual(['Who owns the Postgres upgrade?']);
    expect(res.context).toContain('### knowledge/deploy/api');
    expect(res.context).toContain(contradiction);
    expect(res.context).toContain('Who owns the Postgres upgrade?');
    expect(res.estimatedTokens).toBeLessThanOrEqual(2_000);
  });

  it('keeps within a small token budget and says it truncated', async () => {
    const res = await brain.recallContext({ organizationId: org, task: 'deploy the API with a database migration', tokenBudget: 200 });
    expect(res.estimatedTokens).toBeLessThanOrEqual(200);
    expect(res.truncated).toBe(true);
    expect(res.memories.length).toBeGreaterThan(0);
  });

  it('rejects malformed requests', async () => {
    for (const [req, field] of [
      [{ organizationId: org }, 'task'],
      [{ organizationId: org, task: 'x', tokenBudget: 10 }, 'token_budget'],
      [{ organizationId: org, task: 'x', limit: 51 }, 'limit'],
      [{ organizationId: org, keys: [ref('a b')] }, 'keys[0].key'],
      [{ organizationId: org, task: 'x', namespaces: [Namespace.UNSPECIFIED] }, 'namespaces[0]'],
    ] as [Parameters<typeof brain.recallContext>[0], string][]) {
      const err = await errorOf(brain.recallContext(req));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toContain(field);
    }
  });
});

describe('replicas sharing one records store', () => {
  it("see each other's creates, updates and deletions in search", async () => {
    // A second brain module over the same stores stands for a second replica.
    const replica = createClient(
      BrainService,
      createRouterTransport(brainRoutes(createBrainContext(platform.ctx.stores, createLogger({ level: 'silent' })))),
    );
    const org = 'org-replicas';
    const search = async (c: Client<typeof BrainService>, query: string) =>
      (await c.searchMemories({ organizationId: org, namespace: K, query, limit: 5 })).results
        .filter((r) => r.scores!.lexical > 0)
        .map((r) => r.memory?.key);
    await brain.putMemory({ organizationId: org, namespace: K, key: 'a', content: 'The zebra dashboard shows queue depth.' });
    expect(await search(replica, 'zebra')).toEqual(['a']);
    await brain.putMemory({ organizationId: org, namespace: K, key: 'a', content: 'The giraffe dashboard shows queue depth.' });
    await replica.putMemory({ organizationId: org, namespace: K, key: 'b', content: 'Zebra crossings are painted white.' });
    expect(await search(replica, 'giraffe')).toEqual(['a']);
    expect(await search(replica, 'zebra')).toEqual(['b']);
    expect(await search(brain, 'zebra')).toEqual(['b']);
    await brain.deleteMemory({ organizationId: org, namespace: K, key: 'b' });
    expect(await search(replica, 'zebra')).toEqual([]);
    // A deleted key can be created again, starting at version 1.
    const again = await replica.putMemory({
      organizationId: org,
      namespace: K,
      key: 'b',
      content: 'Zebra stripes are unique.',
      expectedVersion: 0n,
    });
    expect(again.memory?.version).toBe(1n);
    expect(await search(brain, 'zebra')).toEqual(['b']);
  });
});

describe('tenant isolation on every RPC', () => {
  const a = 'org-iso-a';
  const b = 'org-iso-b';
  let ctrId = '';
  let qId = '';
  beforeAll(async () => {
    await brain.putMemory({ organizationId: a, namespace: K, key: 'secret', content: 'The launch code word is pelican.' });
    await brain.putMemory({ organizationId: a, namespace: K, key: 'secret-2', content: 'The launch code word is not pelican.' });
    ctrId = (await brain.listContradictions({ organizationId: a })).contradictions[0].id;
    qId = (await brain.askQuestion({ organizationId: a, question: 'Who chose pelican?', memories: [ref('secret')], entities: ['Pelican'] }))
      .question!.id;
  });

  it('keeps every read, write and item of one organization out of another', async () => {
    expect((await brain.getMemories({ organizationId: b, namespace: K, keys: ['secret'] })).missingKeys).toEqual(['secret']);
    const search = await brain.searchMemories({ organizationId: b, namespace: K, query: 'launch code word pelican' });
    expect(search.results).toEqual([]);
    expect(search.searchedMemories).toBe(0);
    expect(await code(brain.deleteMemory({ organizationId: b, namespace: K, key: 'secret' }))).toBe(Code.NotFound);
    const fb = await brain.recordFeedback({ organizationId: b, memories: [ref('secret')], outcome: Outcome.FAILED });
    expect(fb.missing.map((m) => m.key)).toEqual(['secret']);
    expect(await code(brain.flagContradiction({ organizationId: b, memories: [ref('secret'), ref('secret-2')], reason: 'x' }))).toBe(
      Code.NotFound,
    );
    expect((await brain.listContradictions({ organizationId: b, ids: [ctrId] })).missingIds).toEqual([ctrId]);
    expect((await brain.listContradictions({ organizationId: b })).contradictions).toEqual([]);
    expect(await code(brain.resolveContradiction({ organizationId: b, id: ctrId, status: ItemStatus.RESOLVED, resolution: 'x' }))).toBe(
      Code.NotFound,
    );
    expect((await brain.listQuestions({ organizationId: b, ids: [qId] })).missingIds).toEqual([qId]);
    expect((await brain.listQuestions({ organizationId: b, entities: ['pelican'] })).questions).toEqual([]);
    expect(await code(brain.resolveQuestion({ organizationId: b, id: qId, status: ItemStatus.RESOLVED, resolution: 'x' }))).toBe(
      Code.NotFound,
    );
    const recall = await brain.recallContext({
      organizationId: b,
      task: 'launch code word pelican',
      keys: [ref('secret')],
      entities: ['Pelican'],
    });
    expect(recall.memories).toEqual([]);
    expect(recall.questions).toEqual([]);
    expect(recall.contradictions).toEqual([]);
    expect(recall.missing.map((m) => m.key)).toEqual(['secret']);
    const put = await brain.putMemory({ organizationId: b, namespace: K, key: 'mine', content: 'The launch code word is pelican.' });
    expect(put.outcome).toBe(WriteOutcome.CREATED);
    expect(put.duplicates).toEqual([]);
    expect(put.contradictions).toEqual([]);
    // And organization A is untouched.
    const still = await brain.getMemories({ organizationId: a, namespace: K, keys: ['secret'] });
    expect(still.memories[0].stats?.failed).toBe(0);
    expect((await brain.listContradictions({ organizationId: a, ids: [ctrId] })).contradictions[0].status).toBe(ItemStatus.OPEN);
  });
});

describe('malformed contradiction and question requests', () => {
  it.each([
    ['flag with one memory', () => brain.flagContradiction({ organizationId: 'o', memories: [ref('a')], reason: 'r' }), 'memories'],
    [
      'flag the same memory twice',
      () => brain.flagContradiction({ organizationId: 'o', memories: [ref('a'), ref('a')], reason: 'r' }),
      'memories',
    ],
    ['flag without reason', () => brain.flagContradiction({ organizationId: 'o', memories: [ref('a'), ref('b')], reason: ' ' }), 'reason'],
    ['list with a bad id', () => brain.listContradictions({ organizationId: 'o', ids: ['q_aaaaaaaaaaaaaaaaaaaa'] }), 'ids[0]'],
    ['list with a bad status', () => brain.listContradictions({ organizationId: 'o', status: 9 as ItemStatus }), 'status'],
    ['list with a huge limit', () => brain.listQuestions({ organizationId: 'o', limit: 101 }), 'limit'],
    [
      'resolve as open',
      () => brain.resolveContradiction({ organizationId: 'o', id: 'ctr_aaaaaaaaaaaaaaaaaaaa', status: ItemStatus.OPEN, resolution: 'r' }),
      'status',
    ],
    [
      'resolve without resolution',
      () => brain.resolveQuestion({ organizationId: 'o', id: 'q_aaaaaaaaaaaaaaaaaaaa', status: ItemStatus.RESOLVED, resolution: '' }),
      'resolution',
    ],
    [
      'resolve without id',
      () => brain.resolveQuestion({ organizationId: 'o', id: '', status: ItemStatus.RESOLVED, resolution: 'r' }),
      'id',
    ],
    ['ask nothing', () => brain.askQuestion({ organizationId: 'o', question: '' }), 'question'],
    ['ask for no organization', () => brain.askQuestion({ organizationId: '', question: 'q' }), 'organization_id'],
  ])('rejects %s as INVALID_ARGUMENT', async (_name, call, field) => {
    const err = await errorOf(call());
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toContain(field);
  });
});
