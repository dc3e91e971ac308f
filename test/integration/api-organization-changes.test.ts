// Organizations over the real REST API: a signed-in user creates more of them (slugs, retries
// with Idempotency-Key), changes one under If-Match, hands over its ownership, reads its usage;
// each change lands in the organization's audit log.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemType } from '../../edge/api/problems.ts';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { joinAs, userIdOf, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let org: string;
let admin: TestMember;
const call = restClient(() => api);

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  admin = await joinAs(platform, org, 'admin');
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('creating organizations', () => {
  it('creates another organization owned by the caller, with a slug from its name', async () => {
    const r = await call('/organizations', { token: owner.access_token, body: { name: 'Acme Robotics, Inc.' } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ name: 'Acme Robotics, Inc.', slug: 'acme-robotics-inc', role: 'owner', current: false });
    expect(r.json.settings).toEqual({ audit_retention_days: 365 });
    const list = await call('/organizations', { token: owner.access_token });
    expect(list.json.organizations.map((o: Json) => [o.id, o.role, o.current])).toEqual([
      [org, 'owner', true],
      [r.json.id, 'owner', false],
    ]);
    const again = await call('/organizations', { token: owner.access_token, body: { name: 'Acme Robotics, Inc.' } });
    expect(again.json.slug).toMatch(/^acme-robotics-inc-[0-9a-f]{6}$/);
  });

  it('records the creation in the new organization, seen once signed in to it', async () => {
    const created = await call('/organizations', { token: owner.access_token, body: { name: 'Audited' } });
    const inside = await obtainAccessToken(platform, {
      resource: api,
      user: owner.user,
      mode: 'sign-in',
      organizationId: created.json.id,
      client: owner.client,
    });
    const events = await call(`/organizations/${created.json.id}/audit-events`, { token: inside.access_token });
    expect(events.json.events).toEqual([
      expect.objectContaining({ action: 'createOrganization', outcome: 'success', target: `/organizations/${created.json.id}` }),
    ]);
  });

  it('pages the caller organizations', async () => {
    const first = await call('/organizations?page_size=2', { token: owner.access_token });
    expect(first.json.organizations).toHaveLength(2);
    const rest = await call(`/organizations?page_token=${first.json.next_page_token}`, { token: owner.access_token });
    expect(rest.json.organizations.length).toBeGreaterThan(0);
    expect(rest.json.organizations.map((o: Json) => o.id)).not.toContain(first.json.organizations[0].id);
  });

  it('answers a retry with the same Idempotency-Key with the first organization', async () => {
    const key = randomUUID();
    const a = await call('/organizations', { token: owner.access_token, body: { name: 'Once' }, headers: { 'idempotency-key': key } });
    const b = await call('/organizations', { token: owner.access_token, body: { name: 'Once' }, headers: { 'idempotency-key': key } });
    expect(b.json.id).toBe(a.json.id);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses a taken slug with 409, machines with 403 and malformed bodies with 422', async () => {
    await call('/organizations', { token: owner.access_token, body: { name: 'Slugged', slug: 'taken-slug' } });
    const taken = await call('/organizations', { token: owner.access_token, body: { name: 'Other', slug: 'taken-slug' } });
    expect(taken.status).toBe(409);
    const key = await call(`/organizations/${org}/api-keys`, { token: owner.access_token, body: { name: 'k' } });
    expect((await call('/organizations', { apiKey: key.json.secret, body: { name: 'By key' } })).status).toBe(403);
    for (const body of [{ name: '' }, { name: 'x', slug: 'AB' }, { name: 'x', slug: '-bad-' }, { name: 'x', extra: 1 }, []]) {
      const r = await call('/organizations', { token: owner.access_token, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
    }
  });
});

describe('changing an organization', () => {
  it('changes name, slug and retention under If-Match, and refuses a stale ETag', async () => {
    const got = await call(`/organizations/${org}`, { token: admin.access_token });
    const etag = got.headers.get('etag')!;
    const body = { name: 'Renamed', slug: `renamed-${randomUUID().slice(0, 8)}`, settings: { audit_retention_days: 90 } };
    const changed = await call(`/organizations/${org}`, {
      token: admin.access_token,
      method: 'PATCH',
      body,
      headers: { 'if-match': etag },
    });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ name: 'Renamed', slug: body.slug, settings: { audit_retention_days: 90 } });
    const stale = await call(`/organizations/${org}`, {
      token: admin.access_token,
      method: 'PATCH',
      body: { name: 'Again' },
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(412);
    expect(stale.json.type).toBe(problemType(412, 'etag-mismatch'));
    const events = await platform.ctx.stores.records
      .collection<{ _id: string; organizationId: string; action: string; createdAt: number; expiresAt?: number }>('audit_events')
      .find({ organizationId: org, action: 'updateOrganization' });
    const latest = events.sort((a, b) => b.createdAt - a.createdAt)[0];
    expect(latest.expiresAt! - latest.createdAt).toBe(90 * 86_400_000);
  });

  it('refuses members, empty changes and retention out of range', async () => {
    const member = await joinAs(platform, org, 'member');
    expect((await call(`/organizations/${org}`, { token: member.access_token, method: 'PATCH', body: { name: 'No' } })).status).toBe(403);
    for (const body of [{}, { settings: {} }, { settings: { audit_retention_days: 7 } }, { name: 'x', owner: 'y' }]) {
      const r = await call(`/organizations/${org}`, { token: owner.access_token, method: 'PATCH', body });
      expect(r.status, JSON.stringify(body)).toBe(422);
    }
  });
});

describe('handing over ownership', () => {
  it('makes the member an owner and the caller an admin; only an owner may', async () => {
    expect(
      (await call(`/organizations/${org}/transfer-ownership`, { token: admin.access_token, body: { user_id: admin.userId } })).status,
    ).toBe(403);
    const self = await call(`/organizations/${org}/transfer-ownership`, { token: owner.access_token, body: { user_id: userIdOf(owner) } });
    expect(self.status).toBe(409);
    expect(self.json.detail).toContain('you are an owner already');
    const missing = await call(`/organizations/${org}/transfer-ownership`, { token: owner.access_token, body: { user_id: 'usr_nobody' } });
    expect(missing.status).toBe(404);
    const r = await call(`/organizations/${org}/transfer-ownership`, { token: owner.access_token, body: { user_id: admin.userId } });
    expect(r.status).toBe(200);
    expect(r.json.from).toMatchObject({ user_id: userIdOf(owner), role: 'admin' });
    expect(r.json.to).toMatchObject({ user_id: admin.userId, role: 'owner' });
    const back = await call(`/organizations/${org}/transfer-ownership`, { token: admin.access_token, body: { user_id: userIdOf(owner) } });
    expect(back.status).toBe(200);
  });
});

describe('usage', () => {
  it("counts memories, members and this month's API calls against the plan", async () => {
    const before = await call(`/organizations/${org}/usage`, { token: owner.access_token });
    expect(before.status).toBe(200);
    expect(before.json.plan).toBe('professional');
    expect(before.json.members.used).toBeGreaterThanOrEqual(3);
    expect(before.json.memories).toEqual({ used: 0, limit: expect.any(Number) });
    expect(before.json.api_calls.used).toBeGreaterThan(5);
    const start = new Date(before.json.period.start);
    expect(start.getUTCDate()).toBe(1);
    await platform.ctx.clients.brain.putMemory({
      organizationId: org,
      namespace: Namespace.KNOWLEDGE,
      key: 'usage-test',
      title: 'Usage',
      content: 'One memory to count.',
      source: { clientId: 'usage-test', userId: userIdOf(owner) },
    });
    const after = await call(`/organizations/${org}/usage`, { token: owner.access_token });
    expect(after.json.memories.used).toBe(1);
    expect(after.json.api_calls.used).toBeGreaterThan(before.json.api_calls.used);
  });
});
