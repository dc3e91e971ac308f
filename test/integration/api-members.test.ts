// Members of an organization over the real REST API, with tokens from the real authorization
// server: listing a page at a time, roles changed under If-Match, the owner rules, leaving, and
// refusals in the API's problem types.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemType } from '../../edge/api/problems.ts';
import { joinAs, userIdOf, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
let admin: TestMember;
let member: TestMember;
let viewer: TestMember;
const call = restClient(() => api);
const members = (path = '') => `/organizations/${org}/members${path}`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  admin = await joinAs(platform, org, 'admin');
  member = await joinAs(platform, org, 'member');
  viewer = await joinAs(platform, org, 'viewer');
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('listing members', () => {
  it('lists every member with their role, in the order they joined', async () => {
    const r = await call(members(), { token: viewer.access_token });
    expect(r.status).toBe(200);
    expect(r.json.members.map((m: Json) => [m.user_id, m.role])).toEqual([
      [userIdOf(owner), 'owner'],
      [admin.userId, 'admin'],
      [member.userId, 'member'],
      [viewer.userId, 'viewer'],
    ]);
    expect(r.json.next_page_token).toBeNull();
    // Each member named from their account, which the agents service joins.
    expect(r.json.members.map((m: Json) => [m.name, m.email])).toEqual(
      [owner, admin, member, viewer].map((t) => [t.user.name ?? 'Test user', t.user.email]),
    );
    const one = await call(members(`/${admin.userId}`), { token: viewer.access_token });
    expect([one.json.name, one.json.email]).toEqual([admin.user.name ?? 'Test user', admin.user.email]);
  });

  it('pages with page_size and page_token, each member once', async () => {
    const first = await call(members('?page_size=3'), { token: owner.access_token });
    expect(first.json.members).toHaveLength(3);
    expect(first.json.next_page_token).toEqual(expect.any(String));
    const second = await call(members(`?page_size=3&page_token=${first.json.next_page_token}`), { token: owner.access_token });
    expect(second.json.members).toHaveLength(1);
    expect(second.json.next_page_token).toBeNull();
    const ids = [...first.json.members, ...second.json.members].map((m: Json) => m.user_id);
    expect(new Set(ids).size).toBe(4);
  });

  it('refuses a page token of another listing, or a malformed one, with 422 on the query', async () => {
    const keys = await call(`/organizations/${org}/api-keys?page_size=1`, { token: owner.access_token });
    expect(keys.status).toBe(200);
    await call(`/organizations/${org}/api-keys`, { token: owner.access_token, body: { name: 'one' } });
    await call(`/organizations/${org}/api-keys`, { token: owner.access_token, body: { name: 'two' } });
    const page = await call(`/organizations/${org}/api-keys?page_size=1`, { token: owner.access_token });
    expect(page.json.next_page_token).toEqual(expect.any(String));
    for (const token of [page.json.next_page_token, 'bm90LWEtdG9rZW4', '%%%']) {
      const r = await call(members(`?page_token=${token}`), { token: owner.access_token });
      expect(r.status).toBe(422);
      expect(r.json.type).toBe(problemType(422));
      expect(r.json.errors[0].loc).toEqual(['query', 'page_token']);
    }
    for (const size of ['0', '101', 'x']) {
      expect((await call(members(`?page_size=${size}`), { token: owner.access_token })).status).toBe(422);
    }
  });

  it("refuses another organization's token and lets an API key read", async () => {
    const r = await call(members(), { token: other.access_token });
    expect(r.status).toBe(403);
    expect(r.json.type).toBe(problemType(403));
    const key = await call(`/organizations/${org}/api-keys`, { token: owner.access_token, body: { name: 'reader' } });
    expect((await call(members(), { apiKey: key.json.secret })).status).toBe(200);
    const patch = await call(members(`/${viewer.userId}`), { apiKey: key.json.secret, method: 'PATCH', body: { role: 'member' } });
    expect(patch.status).toBe(403);
  });
});

describe('changing roles', () => {
  it('updates under If-Match and refuses a stale ETag with 412', async () => {
    const got = await call(members(`/${viewer.userId}`), { token: admin.access_token });
    expect(got.status).toBe(200);
    const etag = got.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9]+"$/);
    const changed = await call(members(`/${viewer.userId}`), {
      token: admin.access_token,
      method: 'PATCH',
      body: { role: 'member' },
      headers: { 'if-match': etag },
    });
    expect(changed.status).toBe(200);
    expect(changed.json.role).toBe('member');
    expect(changed.headers.get('etag')).not.toBe(etag);
    const stale = await call(members(`/${viewer.userId}`), {
      token: admin.access_token,
      method: 'PATCH',
      body: { role: 'viewer' },
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(412);
    expect(stale.json.type).toBe(problemType(412, 'etag-mismatch'));
    const malformed = await call(members(`/${viewer.userId}`), {
      token: admin.access_token,
      method: 'PATCH',
      body: { role: 'viewer' },
      headers: { 'if-match': 'W/"1", "2"' },
    });
    expect(malformed.status).toBe(412);
    const back = await call(members(`/${viewer.userId}`), { token: admin.access_token, method: 'PATCH', body: { role: 'viewer' } });
    expect(back.json.role).toBe('viewer');
  });

  it('lets only an owner grant or take away the owner role, and never the last one', async () => {
    const byAdmin = await call(members(`/${member.userId}`), { token: admin.access_token, method: 'PATCH', body: { role: 'owner' } });
    expect(byAdmin.status).toBe(403);
    const onOwner = await call(members(`/${userIdOf(owner)}`), { token: admin.access_token, method: 'PATCH', body: { role: 'member' } });
    expect(onOwner.status).toBe(403);
    const last = await call(members(`/${userIdOf(owner)}`), { token: owner.access_token, method: 'PATCH', body: { role: 'admin' } });
    expect(last.status).toBe(409);
    expect(last.json.type).toBe(problemType(409, 'last-owner'));
    const leave = await call(members(`/${userIdOf(owner)}`), { token: owner.access_token, method: 'DELETE' });
    expect(leave.status).toBe(409);
  });

  it('refuses a viewer or member below the role the matrix asks for, saying which', async () => {
    const r = await call(members(`/${admin.userId}`), { token: viewer.access_token, method: 'PATCH', body: { role: 'viewer' } });
    expect(r.status).toBe(403);
    expect(r.json.detail).toBe('this needs the admin role or higher; you are viewer');
    expect((await call(members(`/${viewer.userId}`), { token: member.access_token, method: 'DELETE' })).status).toBe(403);
  });

  it('answers malformed input with 422, 415 and 404 problems', async () => {
    const t = owner.access_token;
    expect((await call(members('/not%20an%20id'), { token: t })).status).toBe(422);
    const badRole = await call(members(`/${viewer.userId}`), { token: t, method: 'PATCH', body: { role: 'god' } });
    expect(badRole.status).toBe(422);
    expect(badRole.json.errors[0].loc).toEqual(['body', 'role']);
    expect((await call(members(`/${viewer.userId}`), { token: t, method: 'PATCH', body: { role: 'viewer', x: 1 } })).status).toBe(422);
    const text = await call(members(`/${viewer.userId}`), { token: t, method: 'PATCH', rawBody: 'role=viewer', contentType: 'text/plain' });
    expect(text.status).toBe(415);
    const missing = await call(members('/usr_nobody'), { token: t });
    expect(missing.status).toBe(404);
    expect(missing.json.type).toBe(problemType(404));
  });
});

describe('leaving and removing', () => {
  it('lets a member leave, after which their token is refused here at once', async () => {
    const leaver = await joinAs(platform, org, 'member');
    expect((await call(`/organizations/${org}`, { token: leaver.access_token })).status).toBe(200);
    expect((await call(members(`/${leaver.userId}`), { token: leaver.access_token, method: 'DELETE' })).status).toBe(204);
    const after = await call(`/organizations/${org}`, { token: leaver.access_token });
    expect(after.status).toBe(403);
    expect(after.json.detail).toBe('you are not a member of this organization');
  });

  it('lets an admin remove a member but not an owner', async () => {
    const removed = await joinAs(platform, org, 'member');
    expect((await call(members(`/${removed.userId}`), { token: admin.access_token, method: 'DELETE' })).status).toBe(204);
    expect((await call(members(`/${removed.userId}`), { token: admin.access_token })).status).toBe(404);
    expect((await call(members(`/${userIdOf(owner)}`), { token: admin.access_token, method: 'DELETE' })).status).toBe(403);
  });

  it('lets an owner hand over: make another owner, then step down', async () => {
    const t = owner.access_token;
    expect((await call(members(`/${admin.userId}`), { token: t, method: 'PATCH', body: { role: 'owner' } })).json.role).toBe('owner');
    const down = await call(members(`/${userIdOf(owner)}`), { token: t, method: 'PATCH', body: { role: 'admin' } });
    expect(down.status).toBe(200);
    expect(down.json.role).toBe('admin');
    const restore = await call(members(`/${userIdOf(owner)}`), { token: admin.access_token, method: 'PATCH', body: { role: 'owner' } });
    expect(restore.json.role).toBe('owner');
  });
});
