// Memories over the real REST API, every operation through the Brain service: list, search, get,
// create, update at expected_version, delete, feedback; contradictions and open questions read
// and settled. Every operation refuses another organization's credentials (403) and finds nothing
// of another organization under its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
const call = restClient(() => api);
const m = (p: string, o = org) => `/organizations/${o}${p}`;

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
    const mine = await call(m('/memories/knowledge/secret'), { token: owner.access_token });
    expect(mine.json).toMatchObject({ version: 1, feedback: { worked: 0 } });
  });
});
