// The memory graph over the real REST API: entities listed, searched, read with their cited
// relationships, changed under If-Match and merged; relationships listed, asserted citing a memory
// and retracted; paths and affected entities. Every operation refuses another organization's
// credentials (403) and finds nothing of another organization under its own (404 or empty).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemType } from '../../edge/api/problems.ts';
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
const g = (p: string, o = org) => `/organizations/${o}/graph${p}`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  const put = (key: string, content: string, entities: string[]) =>
    platform.ctx.clients.brain.putMemory({ organizationId: org, namespace: Namespace.KNOWLEDGE, key, title: key, content, entities });
  await put('services/checkout', 'Checkout depends on the Payments API.', ['Checkout', 'Payments API']);
  await put('services/payments', 'The Payments API runs on k8s-prod.', ['Payments API', 'k8s-prod']);
  await put('notes/payments', 'payments is owned by the payments team.', ['payments', 'payments team']);
}, 180_000);
afterAll(async () => {
  await platform?.stop();
});

describe('memory graph', () => {
  it('lists, searches and reads entities with their cited relationships', async () => {
    const t = owner.access_token;
    const listed = await call(g('/entities?page_size=2'), { token: t });
    expect(listed.status).toBe(200);
    expect(listed.json.entities).toHaveLength(2);
    expect(listed.json.next_page_token).toEqual(expect.any(String));
    const found = await call(g('/entities/search?q=paymnts%20api'), { token: t });
    expect(found.json.matches[0]).toMatchObject({ entity: { id: 'payments-api' }, matched: 'Payments API' });
    const got = await call(g('/entities/payments-api'), { token: t });
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe('"1"');
    expect(got.json.incoming[0]).toMatchObject({
      subject_id: 'checkout',
      predicate: 'depends_on',
      citations: [{ namespace: 'knowledge', key: 'services/checkout', version: 1, origin: 'extracted' }],
    });
    expect(got.json.outgoing[0]).toMatchObject({ object_id: 'k8s-prod', predicate: 'runs_on' });
    expect((await call(g('/entities/nothing-here'), { token: t })).status).toBe(404);
    expect((await call(g('/entities/Bad%20Id'), { token: t })).status).toBe(422);
  });

  it('changes an entity under If-Match and merges another into it', async () => {
    const t = owner.access_token;
    const changed = await call(g('/entities/payments-api'), {
      token: t,
      method: 'PATCH',
      body: { kind: 'service', description: 'Takes card payments' },
      headers: { 'if-match': '"1"' },
    });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ kind: 'service', description: 'Takes card payments', version: 2 });
    const stale = await call(g('/entities/payments-api'), {
      token: t,
      method: 'PATCH',
      body: { description: 'x' },
      headers: { 'if-match': '"1"' },
    });
    expect(stale.status).toBe(412);
    expect(stale.json.type).toBe(problemType(412, 'etag-mismatch'));
    const taken = await call(g('/entities/checkout'), { token: t, method: 'PATCH', body: { aliases: ['k8s-prod'] } });
    expect(taken.status).toBe(409);
    const merged = await call(g('/entities/payments-api/merge'), { token: t, body: { source_entity_id: 'payments' } });
    expect(merged.status).toBe(200);
    expect(merged.json).toMatchObject({ entity: { id: 'payments-api', aliases: ['payments'] }, moved_relationships: 1 });
    const owners = await call(g('/relationships?predicate=owned_by'), { token: t });
    expect(owners.json.relationships.map((r: Json) => `${r.subject_id}>${r.object_id}`)).toEqual(['payments-api>payments-team']);
    expect((await call(g('/entities/checkout/merge'), { token: t, body: { source_entity_id: 'checkout' } })).status).toBe(422);
  });

  it('asserts a relationship citing an existing memory, and retracts it', async () => {
    const t = owner.access_token;
    const body = {
      subject: 'Checkout',
      predicate: 'calls',
      object: 'Fraud service',
      memory: { namespace: 'knowledge', key: 'services/checkout' },
    };
    const asserted = await call(g('/relationships'), { token: t, body });
    expect(asserted.status).toBe(201);
    expect(asserted.json).toMatchObject({
      subject_id: 'checkout',
      predicate: 'calls',
      object_id: 'fraud-service',
      citations: [{ key: 'services/checkout', origin: 'manual' }],
    });
    const missing = await call(g('/relationships'), { token: t, body: { ...body, memory: { namespace: 'knowledge', key: 'no/such' } } });
    expect(missing.status).toBe(422);
    expect(missing.json.errors[0].loc).toEqual(['body', 'memory']);
    const byMemory = await call(g('/relationships?memory=knowledge/services/checkout'), { token: t });
    expect(byMemory.json.relationships.map((r: Json) => r.predicate).sort()).toEqual(['calls', 'depends_on']);
    expect((await call(g('/relationships?memory=services/checkout'), { token: t })).status).toBe(422);
    expect((await call(g('/relationships?predicate=-calls'), { token: t })).status).toBe(422);
    const rel = (query = '') => g(`/relationships/${asserted.json.id}${query}`);
    expect((await call(rel('?memory=knowledge/services/payments'), { token: t, method: 'DELETE' })).status).toBe(404);
    expect((await call(rel('?memory=knowledge/services/checkout'), { token: t, method: 'DELETE' })).status).toBe(204);
    expect((await call(rel(), { token: t, method: 'DELETE' })).status).toBe(404);
  });

  it("answers the service's refusal of a field as the 422 of that field", async () => {
    const t = owner.access_token;
    const memory = { namespace: 'knowledge', key: 'services/checkout' };
    const same = await call(g('/relationships'), {
      token: t,
      body: { subject: 'Checkout', predicate: 'calls', object: 'checkout', memory },
    });
    expect(same.status).toBe(422);
    expect(same.json.errors[0].loc).toEqual(['body', 'object']);
    const blank = await call(g('/relationships'), { token: t, body: { subject: ' ', predicate: 'calls', object: 'Checkout', memory } });
    expect(blank.status).toBe(422);
    expect(blank.json.errors[0].loc).toEqual(['body', 'subject']);
  });

  it('answers paths and affected entities with cited steps', async () => {
    const t = owner.access_token;
    const paths = await call(g('/paths?from=Checkout&to=k8s-prod'), { token: t });
    expect(paths.status).toBe(200);
    expect(paths.json.paths[0].entity_ids).toEqual(['checkout', 'payments-api', 'k8s-prod']);
    expect(paths.json.paths[0].steps[0].relationship.citations[0].key).toBe('services/checkout');
    const affected = await call(g('/entities/k8s-prod/affected'), { token: t });
    expect(affected.json.affected.map((a: Json) => `${a.entity.id}@${a.depth}`)).toEqual(['payments-api@1', 'checkout@2']);
    const deps = await call(g('/entities/checkout/affected?direction=dependencies&max_depth=1'), { token: t });
    expect(deps.json.affected.map((a: Json) => a.entity.id)).toEqual(['payments-api']);
    // A repeatable parameter given once is a list of one.
    const onlyRunsOn = await call(g('/entities/k8s-prod/affected?predicate=runs%20on'), { token: t });
    expect(onlyRunsOn.json.affected.map((a: Json) => a.entity.id)).toEqual(['payments-api']);
    const forward = await call(g('/paths?from=Checkout&to=k8s-prod&predicate=depends_on'), { token: t });
    expect(forward.status).toBe(200);
    expect(forward.json.paths).toEqual([]);
    expect((await call(g('/paths?from=Checkout'), { token: t })).status).toBe(422);
    expect((await call(g('/paths?from=Checkout&to=Nowhere'), { token: t })).status).toBe(404);
  });

  it("keeps every operation to the caller's organization", async () => {
    const o = other.access_token;
    const rel = (await call(g('/relationships'), { token: owner.access_token })).json.relationships[0].id;
    const mine = [
      ['GET', g('/entities')],
      ['GET', g('/entities/search?q=checkout')],
      ['GET', g('/entities/checkout')],
      ['PATCH', g('/entities/checkout'), { description: 'x' }],
      ['POST', g('/entities/checkout/merge'), { source_entity_id: 'k8s-prod' }],
      ['GET', g('/entities/checkout/affected')],
      ['GET', g('/relationships')],
      [
        'POST',
        g('/relationships'),
        { subject: 'a', predicate: 'calls', object: 'b', memory: { namespace: 'knowledge', key: 'services/checkout' } },
      ],
      ['DELETE', g(`/relationships/${rel}`)],
      ['GET', g('/paths?from=Checkout&to=k8s-prod')],
    ] as const;
    for (const [method, path, body] of mine) {
      const res = await call(path, { token: o, method, body });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    const theirs = (p: string) => g(p, other.organizationId);
    expect((await call(theirs('/entities'), { token: o })).json.entities).toEqual([]);
    expect((await call(theirs('/entities/search?q=checkout'), { token: o })).json.matches).toEqual([]);
    expect((await call(theirs('/entities/checkout'), { token: o })).status).toBe(404);
    expect((await call(theirs('/entities/checkout'), { token: o, method: 'PATCH', body: { description: 'x' } })).status).toBe(404);
    expect((await call(theirs('/entities/checkout/merge'), { token: o, body: { source_entity_id: 'k8s-prod' } })).status).toBe(404);
    expect((await call(theirs('/entities/checkout/affected'), { token: o })).status).toBe(404);
    expect((await call(theirs('/relationships'), { token: o })).json.relationships).toEqual([]);
    expect((await call(theirs(`/relationships/${rel}`), { token: o, method: 'DELETE' })).status).toBe(404);
    expect((await call(theirs('/paths?from=Checkout&to=k8s-prod'), { token: o })).status).toBe(404);
    const assert = await call(theirs('/relationships'), {
      token: o,
      body: { subject: 'a', predicate: 'calls', object: 'b', memory: { namespace: 'knowledge', key: 'services/checkout' } },
    });
    expect(assert.status).toBe(422);
    // Nothing of the first organization changed.
    expect((await call(g('/entities/checkout'), { token: owner.access_token })).json.description).toBe('');
  });
});
