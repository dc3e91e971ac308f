// Memories over the real REST API, every operation through the Brain service: list, search, get,
// create, update at expected_version, delete, feedback, versions; contradictions and open
// questions listed in pages, flagged or asked, read and settled. Every operation refuses another
// organization's credentials (403) and finds nothing of another organization under its own; a
// member of a narrowed team sees and settles only what its team reaches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { joinAs } from '../support/members.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
const call = restClient(() => api);
const m = (p: string, o = org) => `/organizations/${o}${p}`;
const kref = (key: string, namespace = 'knowledge') => ({ namespace, key });

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
}, 180_000);
afterAll(async () => {
  await platform?.stop();
});

describe('memories', () => {
  it('creates, reads, lists, searches, updates at its version and deletes a memory', async () => {
    const t = owner.access_token;
    const body = {
      namespace: 'knowledge',
      key: 'deploy/api',
      title: 'Deploying the API',
      content: 'Deploy the API with the release pipeline; Checkout depends on the API.',
      tags: ['ops'],
      entities: ['Checkout', 'API'],
    };
    const created = await call(m('/memories'), { token: t, body });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      outcome: 'created',
      memory: { key: 'deploy/api', version: 1, written_by: { client_id: 'mindgate-api' } },
    });
    expect((await call(m('/memories'), { token: t, body })).status).toBe(412);
    const dup = await call(m('/memories'), { token: t, body: { ...body, key: 'deploy/api-copy' } });
    expect(dup.status).toBe(409);
    const got = await call(m('/memories/knowledge/deploy%2Fapi'), { token: t });
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe('"1"');
    const listed = await call(m('/memories?namespace=knowledge&tag=ops'), { token: t });
    expect(listed.json.memories.map((x: Json) => x.key)).toEqual(['deploy/api']);
    expect((await call(m('/memories?namespace=episodes'), { token: t })).json.memories).toEqual([]);
    const found = await call(m('/memories/search?q=release%20pipeline'), { token: t });
    expect(found.json.results[0].memory.key).toBe('deploy/api');
    const byTag = await call(m('/memories/search?q=release%20pipeline&tag=ops'), { token: t });
    expect(byTag.json.results.map((r: Json) => r.memory.key)).toEqual(['deploy/api']);
    const blankTag = await call(m('/memories/search?q=release&tag=ops&tag=%20'), { token: t });
    expect(blankTag.status).toBe(422);
    const blank = await call(m('/memories'), { token: t, body: { namespace: 'knowledge', key: 'blank', content: ' \n' } });
    expect(blank.status).toBe(422);
    const stale = await call(m('/memories/knowledge/deploy%2Fapi'), {
      token: t,
      method: 'PUT',
      body: { content: 'Use the new pipeline.', expected_version: 2 },
    });
    expect(stale.status).toBe(412);
    const updated = await call(m('/memories/knowledge/deploy%2Fapi'), {
      token: t,
      method: 'PUT',
      body: { content: 'Use the new pipeline.', expected_version: 1 },
    });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({ outcome: 'updated', memory: { version: 2 } });
    const feedback = await call(m('/memories/feedback'), {
      token: t,
      body: {
        outcome: 'failed',
        memories: [
          { namespace: 'knowledge', key: 'deploy/api' },
          { namespace: 'knowledge', key: 'gone' },
        ],
        note: 'no',
      },
    });
    expect(feedback.json).toEqual({
      updated: [{ namespace: 'knowledge', key: 'deploy/api', worked: 0, failed: 1 }],
      missing: ['knowledge/gone'],
    });
    expect((await call(m('/memories/knowledge/deploy%2Fapi?expected_version=1'), { token: t, method: 'DELETE' })).status).toBe(412);
    expect((await call(m('/memories/knowledge/deploy%2Fapi'), { token: t, method: 'DELETE' })).status).toBe(204);
    expect((await call(m('/memories/knowledge/deploy%2Fapi'), { token: t })).status).toBe(404);
    expect((await call(m('/memories/notes/x'), { token: t })).status).toBe(422);
  });

  it('reads and settles contradictions and open questions', async () => {
    const t = owner.access_token;
    const brain = platform.ctx.clients.brain;
    await brain.putMemory({ organizationId: org, namespace: Namespace.KNOWLEDGE, key: 'a', content: 'Backups run every night.' });
    await brain.putMemory({ organizationId: org, namespace: Namespace.KNOWLEDGE, key: 'b', content: 'Backups run every week.' });
    const flagged = await brain.flagContradiction({
      organizationId: org,
      memories: [
        { namespace: Namespace.KNOWLEDGE, key: 'a' },
        { namespace: Namespace.KNOWLEDGE, key: 'b' },
      ],
      reason: 'which schedule?',
    });
    const id = flagged.contradiction!.id;
    const got = await call(m(`/contradictions/${id}`), { token: t });
    expect(got.json).toMatchObject({ id, kind: 'contradiction', status: 'open', memories: ['knowledge/a', 'knowledge/b'] });
    const resolved = await call(m(`/contradictions/${id}/resolve`), { token: t, body: { status: 'resolved', resolution: 'nightly' } });
    expect(resolved.json).toMatchObject({ status: 'resolved', resolution: 'nightly' });
    expect((await call(m(`/contradictions/${id}/resolve`), { token: t, body: { status: 'dismissed', resolution: 'x' } })).status).toBe(412);
    const asked = await brain.askQuestion({ organizationId: org, question: 'Who owns backups?', entities: ['backups'] });
    const q = asked.question!.id;
    expect((await call(m(`/questions/${q}`), { token: t })).json).toMatchObject({
      kind: 'question',
      text: 'Who owns backups?',
      status: 'open',
    });
    expect(
      (await call(m(`/questions/${q}/resolve`), { token: t, body: { status: 'dismissed', resolution: 'not ours' } })).json.status,
    ).toBe('dismissed');
    expect((await call(m('/questions/q_aaaaaaaaaaaaaaaaaaaa'), { token: t })).status).toBe(404);
  });

  it("keeps every operation to the caller's organization", async () => {
    const brain = platform.ctx.clients.brain;
    await brain.putMemory({
      organizationId: org,
      namespace: Namespace.KNOWLEDGE,
      key: 'secret',
      content: 'The vault code is in the safe.',
    });
    const ctr = (
      await brain.flagContradiction({
        organizationId: org,
        memories: [
          { namespace: Namespace.KNOWLEDGE, key: 'secret' },
          { namespace: Namespace.KNOWLEDGE, key: 'a' },
        ],
        reason: 'r',
      })
    ).contradiction!.id;
    const q = (await brain.askQuestion({ organizationId: org, question: 'Where is the safe?' })).question!.id;
    const o = other.access_token;
    const ops = [
      ['GET', '/memories'],
      ['GET', '/memories/search?q=vault'],
      ['GET', '/memories/knowledge/secret'],
      ['POST', '/memories', { namespace: 'knowledge', key: 'x', content: 'x' }],
      ['PUT', '/memories/knowledge/secret', { content: 'y', expected_version: 1 }],
      ['DELETE', '/memories/knowledge/secret'],
      ['POST', '/memories/feedback', { outcome: 'worked', memories: [{ namespace: 'knowledge', key: 'secret' }] }],
      ['GET', `/contradictions/${ctr}`],
      ['POST', `/contradictions/${ctr}/resolve`, { status: 'dismissed', resolution: 'x' }],
      ['GET', `/questions/${q}`],
      ['POST', `/questions/${q}/resolve`, { status: 'dismissed', resolution: 'x' }],
      ['GET', '/contradictions'],
      ['POST', '/contradictions', { memories: [kref('secret'), kref('a')], reason: 'r' }],
      ['GET', '/questions'],
      ['POST', '/questions', { question: 'Where?' }],
      ['GET', '/memories/knowledge/secret/versions'],
      ['GET', '/memories/knowledge/secret/versions/1'],
    ] as const;
    for (const [method, path, body] of ops) expect((await call(m(path), { token: o, method, body })).status, `${method} ${path}`).toBe(403);
    const theirs = (p: string) => m(p, other.organizationId);
    expect((await call(theirs('/memories'), { token: o })).json.memories).toEqual([]);
    expect((await call(theirs('/memories/search?q=vault'), { token: o })).json.results).toEqual([]);
    expect((await call(theirs('/memories/knowledge/secret'), { token: o })).status).toBe(404);
    expect(
      (await call(theirs('/memories/knowledge/secret'), { token: o, method: 'PUT', body: { content: 'y', expected_version: 1 } })).status,
    ).toBe(412);
    expect((await call(theirs('/memories/knowledge/secret'), { token: o, method: 'DELETE' })).status).toBe(404);
    expect(
      (
        await call(theirs('/memories/feedback'), {
          token: o,
          body: { outcome: 'worked', memories: [{ namespace: 'knowledge', key: 'secret' }] },
        })
      ).json.missing,
    ).toEqual(['knowledge/secret']);
    expect((await call(theirs(`/contradictions/${ctr}`), { token: o })).status).toBe(404);
    expect(
      (await call(theirs(`/contradictions/${ctr}/resolve`), { token: o, body: { status: 'dismissed', resolution: 'x' } })).status,
    ).toBe(404);
    expect((await call(theirs(`/questions/${q}`), { token: o })).status).toBe(404);
    expect((await call(theirs(`/questions/${q}/resolve`), { token: o, body: { status: 'dismissed', resolution: 'x' } })).status).toBe(404);
    expect((await call(theirs('/contradictions'), { token: o })).json.contradictions).toEqual([]);
    expect((await call(theirs('/questions'), { token: o })).json.questions).toEqual([]);
    const flag = { memories: [kref('secret'), kref('a')], reason: 'r' };
    expect((await call(theirs('/contradictions'), { token: o, body: flag })).status).toBe(404);
    expect((await call(theirs('/memories/knowledge/secret/versions'), { token: o })).status).toBe(404);
    expect((await call(theirs('/memories/knowledge/secret/versions/1'), { token: o })).status).toBe(404);
    const mine = await call(m('/memories/knowledge/secret'), { token: owner.access_token });
    expect(mine.json).toMatchObject({ version: 1, feedback: { worked: 0 } });
  });
});

describe('If-Match', () => {
  it('applies an update or a deletion only at the ETag read, as expected_version does', async () => {
    const t = owner.access_token;
    const path = m('/memories/knowledge/etag%2Fnote');
    await call(m('/memories'), { token: t, body: { namespace: 'knowledge', key: 'etag/note', content: 'Rotate the TLS keys yearly.' } });
    const etag = (await call(path, { token: t })).headers.get('etag')!;
    expect(etag).toBe('"1"');
    const put = (headers: Record<string, string>, extra: Json = {}) =>
      call(path, { token: t, method: 'PUT', headers, body: { content: 'Rotate the TLS keys every 90 days.', ...extra } });
    const updated = await put({ 'if-match': etag });
    expect([updated.status, updated.headers.get('etag')]).toEqual([200, '"2"']);
    expect((await put({ 'if-match': etag })).status).toBe(412);
    expect((await put({ 'if-match': '"2"' }, { expected_version: 1 })).status).toBe(412);
    expect((await put({ 'if-match': 'W/"2"' })).status).toBe(412);
    const missing = await put({});
    expect([missing.status, missing.json.detail]).toEqual([412, expect.stringContaining('expected_version')]);
    expect((await call(path, { token: t, method: 'DELETE', headers: { 'if-match': '"1"' } })).status).toBe(412);
    expect((await call(path, { token: t, method: 'DELETE', headers: { 'if-match': '"2"' } })).status).toBe(204);
  });
});

describe('contradictions and open questions', () => {
  it('flags contradictions and lists them in pages, by status, namespace and key', async () => {
    const t = owner.access_token;
    const brain = platform.ctx.clients.brain;
    const put = (namespace: Namespace, key: string, content: string) =>
      brain.putMemory({ organizationId: org, namespace, key, content, allowDuplicate: true });
    // Texts the write-time detector finds nothing between: every contradiction here is flagged.
    await put(Namespace.KNOWLEDGE, 'cq/a', 'Team Orion maintains the billing queue consumers.');
    await put(Namespace.KNOWLEDGE, 'cq/b', 'Payroll exports are signed with the finance key.');
    await put(Namespace.KNOWLEDGE, 'cq/c', 'Grafana dashboards live in the observability repository.');
    await put(Namespace.EPISODES, 'cq/e', 'On Monday the staging cluster was upgraded to version 1.31.');
    const flag = (memories: Json[], reason = 'how many workers?') => call(m('/contradictions'), { token: t, body: { memories, reason } });
    const ab = await flag([kref('cq/a'), kref('cq/b')]);
    expect(ab.status).toBe(201);
    expect(ab.json).toMatchObject({ kind: 'contradiction', status: 'open', memories: ['knowledge/cq/a', 'knowledge/cq/b'] });
    const again = await flag([kref('cq/b'), kref('cq/a')]);
    expect([again.status, again.json.id]).toEqual([200, ab.json.id]);
    const ac = (await flag([kref('cq/a'), kref('cq/c')])).json.id;
    const ce = (await flag([kref('cq/c'), kref('cq/e', 'episodes')])).json.id;
    expect((await flag([kref('cq/a'), kref('cq/missing')])).status).toBe(404);
    expect((await flag([kref('cq/a')])).status).toBe(422);
    expect((await flag([kref('cq/a'), kref('cq/a')])).status).toBe(422);
    expect((await flag([kref('cq/a'), kref('cq/b')], ' ')).status).toBe(422);
    const ids = async (query: string) =>
      (await call(m(`/contradictions?${query}`), { token: t })).json.contradictions.map((x: Json) => x.id);
    expect(await ids('namespace=episodes')).toEqual([ce]);
    expect(await ids('namespace=knowledge&key=cq/a')).toEqual([ac, ab.json.id]);
    expect(await ids('key=cq/e')).toEqual([ce]);
    const first = await call(m('/contradictions?namespace=knowledge&key=cq/a&page_size=1'), { token: t });
    expect(first.json.contradictions.map((x: Json) => x.id)).toEqual([ac]);
    const second = await call(m(`/contradictions?namespace=knowledge&key=cq/a&page_size=1&page_token=${first.json.next_page_token}`), {
      token: t,
    });
    expect([second.json.contradictions.map((x: Json) => x.id), second.json.next_page_token]).toEqual([[ab.json.id], null]);
    const otherList = `/contradictions?namespace=episodes&page_token=${first.json.next_page_token}`;
    expect((await call(m(otherList), { token: t })).status).toBe(422);
    const dismissed = await call(m(`/contradictions/${ac}/resolve`), { token: t, body: { status: 'dismissed', resolution: 'both true' } });
    expect(dismissed.json).toMatchObject({ status: 'dismissed', resolution: 'both true' });
    expect(dismissed.json.resolved_at).toEqual(expect.any(String));
    expect(await ids('key=cq/a&namespace=knowledge&status=dismissed')).toEqual([ac]);
    expect(await ids('key=cq/a&namespace=knowledge&status=open')).toEqual([ab.json.id]);
    const audited = async (action: string) =>
      (await call(m(`/audit-events?action=${action}`), { token: t })).json.events.map((e: Json) => e.status);
    expect(await audited('flagContradiction')).toEqual(expect.arrayContaining([201, 200, 404]));
    expect(await audited('resolveContradiction')).toContain(200);
    expect((await call(m('/contradictions?status=closed'), { token: t })).status).toBe(422);
    expect((await call(m('/contradictions?key=has%20space'), { token: t })).status).toBe(422);
  });

  it('asks questions and lists them by status, memory and entity', async () => {
    const t = owner.access_token;
    const ask = (body: Json) => call(m('/questions'), { token: t, body });
    const asked = await ask({ question: 'Who scales the queue workers?', memories: [kref('cq/c')], entities: ['Queue'] });
    expect(asked.status).toBe(201);
    expect(asked.json).toMatchObject({ kind: 'question', status: 'open', memories: ['knowledge/cq/c'], entities: ['Queue'] });
    const loose = (await ask({ question: 'Is there a runbook for the queue?' })).json.id;
    const ids = async (query: string) => (await call(m(`/questions?${query}`), { token: t })).json.questions.map((x: Json) => x.id);
    expect(await ids('namespace=knowledge&key=cq/c')).toEqual([asked.json.id]);
    expect(await ids('entity=queue')).toEqual([asked.json.id]);
    expect(await ids('status=open&page_size=100')).toEqual(expect.arrayContaining([asked.json.id, loose]));
    await call(m(`/questions/${loose}/resolve`), { token: t, body: { status: 'resolved', resolution: 'docs/queue.md' } });
    expect(await ids('status=resolved&page_size=100')).toContain(loose);
    expect(await ids('status=open&page_size=100')).not.toContain(loose);
    expect((await ask({ question: '' })).status).toBe(422);
    expect((await ask({ question: 'x', entities: [' '] })).status).toBe(422);
    expect((await ask({ question: 'x', memories: [{ namespace: 'notes', key: 'a' }] })).status).toBe(422);
  });
});

describe('versions', () => {
  it("lists a memory's versions in pages and reads one, the deleted one included", async () => {
    const t = owner.access_token;
    const path = m('/memories/knowledge/history%2Fcache');
    const body = { namespace: 'knowledge', key: 'history/cache', content: 'The cache holds 10 GB.' };
    expect((await call(m('/memories'), { token: t, body })).status).toBe(201);
    const update = (content: string, v: number) => call(path, { token: t, method: 'PUT', body: { content, expected_version: v } });
    expect((await update('The cache holds 20 GB.', 1)).status).toBe(200);
    expect((await update('The cache holds 40 GB.', 2)).status).toBe(200);
    const listed = await call(`${path}/versions`, { token: t });
    expect(listed.status).toBe(200);
    expect(listed.json.versions.map((v: Json) => [v.version, v.state, v.memory.content])).toEqual([
      [3, 'current', 'The cache holds 40 GB.'],
      [2, 'replaced', 'The cache holds 20 GB.'],
      [1, 'replaced', 'The cache holds 10 GB.'],
    ]);
    expect(listed.json.versions[1].ended_by).toMatchObject({ client_id: 'mindgate-api' });
    const page = await call(`${path}/versions?page_size=1`, { token: t });
    expect(page.json.versions.map((v: Json) => v.version)).toEqual([3, 2]);
    const rest = await call(`${path}/versions?page_size=1&page_token=${page.json.next_page_token}`, { token: t });
    expect([rest.json.versions.map((v: Json) => v.version), rest.json.next_page_token]).toEqual([[1], null]);
    const one = await call(`${path}/versions/1`, { token: t });
    expect([one.status, one.json.memory.content, one.json.state]).toEqual([200, 'The cache holds 10 GB.', 'replaced']);
    expect((await call(`${path}/versions/9`, { token: t })).status).toBe(404);
    expect((await call(`${path}/versions/0`, { token: t })).status).toBe(422);
    expect((await call(`${path}/versions?page_token=%21`, { token: t })).status).toBe(422);
    expect((await call(path, { token: t, method: 'DELETE' })).status).toBe(204);
    const after = await call(`${path}/versions`, { token: t });
    expect(after.json.versions.map((v: Json) => `${v.version}:${v.state}`)).toEqual(['3:deleted', '2:replaced', '1:replaced']);
    expect((await call(m('/memories/knowledge/never/versions'), { token: t })).status).toBe(404);
  });
});

describe('a member of a narrowed team', () => {
  it('lists, reads and settles only the contradictions, questions and versions its team reaches', async () => {
    const t = owner.access_token;
    const brain = platform.ctx.clients.brain;
    const put = (key: string, content: string) =>
      brain.putMemory({ organizationId: org, namespace: Namespace.KNOWLEDGE, key, content, allowDuplicate: true });
    await put('support/sla', 'Support answers tickets within four hours.');
    await put('support/tone', 'Support writes to customers in plain words.');
    await put('deploy/freeze', 'Deploys freeze on Fridays after noon.');
    const flag = async (a: string, b: string) =>
      (await call(m('/contradictions'), { token: t, body: { memories: [kref(a), kref(b)], reason: 'check' } })).json.id as string;
    const inside = await flag('support/sla', 'support/tone');
    const across = await flag('support/sla', 'deploy/freeze');
    const question = (await call(m('/questions'), { token: t, body: { question: 'Who freezes?', memories: [kref('deploy/freeze')] } })).json
      .id as string;
    const member = await joinAs(platform, org, 'member');
    const team = (await call(m('/teams'), { token: t, body: { name: 'Support desk' } })).json.id;
    expect((await call(m(`/teams/${team}/members/${member.userId}`), { token: t, method: 'PUT' })).status).toBe(200);
    const access = { namespaces: ['knowledge'], key_prefixes: ['support/'] };
    expect((await call(m(`/teams/${team}/brain-access`), { token: t, method: 'PUT', body: access })).status).toBe(200);

    const mt = member.access_token;
    const listed = (await call(m('/contradictions?page_size=100&key=support/sla'), { token: mt })).json.contradictions;
    expect(listed.map((x: Json) => x.id)).toEqual([inside]);
    expect((await call(m(`/contradictions/${across}`), { token: mt })).status).toBe(404);
    expect((await call(m(`/contradictions/${inside}`), { token: mt })).status).toBe(200);
    const settle = { status: 'dismissed', resolution: 'not ours' };
    expect((await call(m(`/contradictions/${across}/resolve`), { token: mt, body: settle })).status).toBe(403);
    expect(
      (await call(m('/contradictions'), { token: mt, body: { memories: [kref('support/sla'), kref('deploy/freeze')], reason: 'x' } }))
        .status,
    ).toBe(403);
    const asked = (await call(m('/questions?page_size=100'), { token: mt })).json.questions.map((x: Json) => x.id);
    expect(asked).not.toContain(question);
    expect((await call(m(`/questions/${question}`), { token: mt })).status).toBe(404);
    expect((await call(m('/questions'), { token: mt, body: { question: 'Why?', memories: [kref('deploy/freeze')] } })).status).toBe(403);
    expect((await call(m('/memories/knowledge/support%2Fsla/versions'), { token: mt })).status).toBe(200);
    expect((await call(m('/memories/knowledge/deploy%2Ffreeze/versions'), { token: mt })).status).toBe(404);
    expect((await call(m('/memories/knowledge/deploy%2Ffreeze/versions/1'), { token: mt })).status).toBe(404);
    // The owner is not narrowed.
    expect((await call(m('/memories/knowledge/deploy%2Ffreeze/versions/1'), { token: t })).status).toBe(200);
    expect((await call(m(`/contradictions/${inside}/resolve`), { token: mt, body: settle })).json.status).toBe('dismissed');
  });
});
