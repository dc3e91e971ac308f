// The signed-in user's own account over the Agents API (/users/me): read, change the name and
// the password under If-Match, list memberships a page at a time, and delete the account (with
// its confirmation, refused while the only owner of an organization); only a user's token may do
// any of it; every change is in the audit log of each of the user's organizations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_ENUM } from '../../edge/api/access.ts';
import { joinAs, userIdOf } from '../support/members.ts';
import { hashPassword } from '../../services/agents/handlers/passwords.ts';
import { newTestUser, obtainAccessToken, startOAuthTestPlatform, tokenRequest, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let auth: string;
const call = restClient(() => api);
const PROBLEM = 'tag:mindgate.dev,2026:problem/';

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  auth = platform.ctx.config.publicUrls.auth;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

/** The events of `action` in `org`, read with a token of `user` acting for that organization. */
async function auditOf(user: ObtainedToken, org: string, action: string): Promise<any[]> {
  const token = (
    await obtainAccessToken(platform, { resource: api, user: user.user, mode: 'sign-in', organizationId: org, client: user.client })
  ).access_token;
  const res = await call(`/organizations/${org}/audit-events?action=${action}`, { token });
  expect(res.status).toBe(200);
  return res.json.events;
}

describe('my account', () => {
  it('reads it, with an ETag, and only with a user token', async () => {
    const owner = await obtainAccessToken(platform, { resource: api });
    const me = await call('/users/me', { token: owner.access_token });
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({
      id: userIdOf(owner),
      email: owner.user.email,
      name: owner.user.name,
      email_verified: false,
      has_password: true,
    });
    expect(me.headers.get('etag')).toBe('"1"');

    const key = await call(`/organizations/${owner.organizationId}/api-keys`, {
      token: owner.access_token,
      body: { name: 'k', scopes: ['admin'] },
    });
    expect((await call('/users/me', { apiKey: key.json.secret })).status).toBe(403);
    const client = await call(`/organizations/${owner.organizationId}/confidential-clients`, {
      token: owner.access_token,
      body: { name: 'm' },
    });
    const cc = await tokenRequest(
      auth,
      { grant_type: 'client_credentials', resource: api },
      { id: client.json.client.client_id, secret: client.json.client_secret },
    );
    const machine = ((await cc.json()) as { access_token: string }).access_token;
    for (const [method, path] of [
      ['GET', '/users/me'],
      ['GET', '/users/me/memberships'],
      ['PATCH', '/users/me'],
      ['DELETE', '/users/me'],
    ]) {
      const r = await call(path, { token: machine, method, ...(method === 'GET' ? {} : { body: { name: 'x' } }) });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.json.type).toBe(`${PROBLEM}forbidden`);
    }
    expect((await call('/users/me')).status).toBe(401);
  });

  it('changes the name under If-Match and the password only with the current one; audits both in every organization', async () => {
    const owner = await obtainAccessToken(platform, { resource: api });
    const second = await call('/organizations', { token: owner.access_token, body: { name: 'Second home' } });
    const renamed = await call('/users/me', {
      token: owner.access_token,
      method: 'PATCH',
      body: { name: 'Ada L.' },
      headers: { 'if-match': '"1"' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.json.name).toBe('Ada L.');
    expect(renamed.headers.get('etag')).toBe('"2"');
    const stale = await call('/users/me', {
      token: owner.access_token,
      method: 'PATCH',
      body: { name: 'Again' },
      headers: { 'if-match': '"1"' },
    });
    expect(stale.status).toBe(412);
    expect(stale.json.type).toBe(`${PROBLEM}etag-mismatch`);

    const bad = [
      [{}, ['body']],
      [{ email: 'new@example.test' }, ['body']],
      [{ new_password: 'short' }, ['body', 'new_password']],
      [{ new_password: 'a-new-password-1' }, ['body', 'current_password']],
      [{ new_password: 'a-new-password-1', current_password: 'wrong-password' }, ['body', 'current_password']],
    ] as const;
    for (const [body, loc] of bad) {
      const r = await call('/users/me', { token: owner.access_token, method: 'PATCH', body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.errors[0].loc.slice(0, loc.length), JSON.stringify(body)).toEqual(loc);
    }
    const changed = await call('/users/me', {
      token: owner.access_token,
      method: 'PATCH',
      body: { new_password: 'a-new-password-1', current_password: owner.user.password },
    });
    expect(changed.status).toBe(200);
    const again = await obtainAccessToken(platform, {
      resource: api,
      user: { ...owner.user, password: 'a-new-password-1' },
      mode: 'sign-in',
    });
    expect(userIdOf(again)).toBe(userIdOf(owner));

    for (const org of [owner.organizationId, second.json.id]) {
      const events = await auditOf({ ...owner, user: again.user }, org, 'updateCurrentUser');
      expect(events.filter((e) => e.outcome === 'success').length, org).toBe(2);
      expect(events[0]).toMatchObject({ actor: { kind: 'user', id: userIdOf(owner) }, target: '/users/me' });
    }
  });

  it('lists my organizations with my role, a page at a time', async () => {
    const owner = await obtainAccessToken(platform, { resource: api });
    const member = await joinAs(platform, owner.organizationId, 'viewer');
    const seen: any[] = [];
    let token = '';
    do {
      const page = await call(`/users/me/memberships?page_size=1${token ? `&page_token=${token}` : ''}`, { token: member.access_token });
      expect(page.status).toBe(200);
      expect(page.json.memberships.length).toBeLessThanOrEqual(1);
      seen.push(...page.json.memberships);
      token = page.json.next_page_token ?? '';
    } while (token);
    expect(seen.map((m) => [m.role, m.current, m.operator])).toEqual([
      ['owner', false, false],
      ['viewer', true, false],
    ]);
    expect(seen[1]).toMatchObject({ organization_id: owner.organizationId, joined_at: expect.any(String) });

    // The operator's organization (OPERATOR_ORGANIZATION_ID) is marked, for its members only.
    const operatorBefore = platform.ctx.config.api.operatorOrganizationId;
    platform.ctx.config.api.operatorOrganizationId = owner.organizationId;
    try {
      const marked = await call('/users/me/memberships', { token: member.access_token });
      expect(marked.json.memberships.map((m: any) => m.operator)).toEqual([false, true]);
    } finally {
      platform.ctx.config.api.operatorOrganizationId = operatorBefore;
    }
    expect((await call('/users/me/memberships?page_token=!', { token: member.access_token })).status).toBe(422);
  });
});

describe('accounts written before the agents service owned them', () => {
  it('sign in and change as they are, with no migration', async () => {
    const owner = await obtainAccessToken(platform, { resource: api });
    // The records exactly as the authorization server used to write them: no version, no updatedAt.
    const records = platform.ctx.stores.records;
    const legacy = newTestUser('legacy');
    const id = 'usr_0123456789abcdef01234567';
    await records.collection('auth_user_emails').put({ _id: legacy.email, userId: id });
    await records.collection('auth_users').put({
      _id: id,
      email: legacy.email,
      emailVerified: true,
      name: 'Legacy',
      passwordHash: await hashPassword(legacy.password),
      createdAt: Date.UTC(2026, 0, 1),
    });
    await platform.ctx.clients.organizations.addMember({ organizationId: owner.organizationId, userId: id, role: ROLE_ENUM.member });
    const token = await obtainAccessToken(platform, { resource: api, user: legacy, mode: 'sign-in' });
    expect(userIdOf(token)).toBe(id);
    const me = await call('/users/me', { token: token.access_token });
    expect(me.json).toMatchObject({
      id,
      email: legacy.email,
      email_verified: true,
      name: 'Legacy',
      created_at: '2026-01-01T00:00:00.000Z',
    });
    expect(me.headers.get('etag')).toBe('"1"');
    const renamed = await call('/users/me', {
      token: token.access_token,
      method: 'PATCH',
      body: { name: 'Legacy II' },
      headers: { 'if-match': '"1"' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.headers.get('etag')).toBe('"2"');
  });
});

describe('deleting my account', () => {
  let owner: ObtainedToken;
  let leaver: ObtainedToken & { userId: string };
  let leaverOrg: string;

  beforeAll(async () => {
    owner = await obtainAccessToken(platform, { resource: api });
    leaver = await joinAs(platform, owner.organizationId, 'member');
    leaverOrg = (await call('/organizations', { token: leaver.access_token })).json.organizations.find((o: any) => o.role === 'owner').id;
    const team = await call(`/organizations/${owner.organizationId}/teams`, { token: owner.access_token, body: { name: 'Robots' } });
    await call(`/organizations/${owner.organizationId}/teams/${team.json.id}/members/${leaver.userId}`, {
      token: owner.access_token,
      method: 'PUT',
    });
  });

  it('needs the account’s address as confirmation', async () => {
    for (const body of [{}, { confirm: 'someone-else@example.test' }, { confirm: 3 }]) {
      const r = await call('/users/me', { token: leaver.access_token, method: 'DELETE', body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.errors[0].loc).toEqual(['body', 'confirm']);
    }
  });

  it('is refused with 409 last-owner while I am the only owner of an organization', async () => {
    const r = await call('/users/me', { token: leaver.access_token, method: 'DELETE', body: { confirm: leaver.user.email } });
    expect(r.status).toBe(409);
    expect(r.json.type).toBe(`${PROBLEM}last-owner`);
    expect(r.json.detail).toContain(leaverOrg);
    expect((await call('/users/me', { token: leaver.access_token })).status).toBe(200);
  });

  it('deletes memberships, team memberships and sign-in records, and revokes grants and sessions', async () => {
    // Another owner for the leaver's own organization lifts the refusal.
    await platform.ctx.clients.organizations.addMember({ organizationId: leaverOrg, userId: userIdOf(owner), role: ROLE_ENUM.owner });
    const r = await call('/users/me', { token: leaver.access_token, method: 'DELETE', body: { confirm: leaver.user.email.toUpperCase() } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      id: leaver.userId,
      team_memberships_removed: 1,
      social_identities_removed: 0,
      sessions_ended: expect.any(Number),
    });
    expect(r.json.organizations_left.sort()).toEqual([owner.organizationId, leaverOrg].sort());
    expect(r.json.grants_revoked).toBeGreaterThanOrEqual(2);

    expect((await call(`/organizations/${owner.organizationId}/members/${leaver.userId}`, { token: owner.access_token })).status).toBe(404);
    const teams = (await call(`/organizations/${owner.organizationId}/teams`, { token: owner.access_token })).json.teams;
    expect(teams[0].member_count).toBe(0);
    // The token stops working within the verifier's cache time; the refresh token at once.
    let status = 200;
    for (let i = 0; i < 40 && status !== 401; i++) {
      status = (await call('/users/me', { token: leaver.access_token })).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).toBe(401);
    const refreshed = await tokenRequest(auth, {
      grant_type: 'refresh_token',
      refresh_token: leaver.refresh_token!,
      client_id: leaver.clientId,
    });
    expect(refreshed.status).toBe(400);
    // The address is free again: signing in fails, signing up works.
    await expect(obtainAccessToken(platform, { resource: api, user: leaver.user, mode: 'sign-in' })).rejects.toThrow();
    const reborn = await obtainAccessToken(platform, { resource: api, user: leaver.user });
    expect(userIdOf(reborn)).not.toBe(leaver.userId);

    for (const org of [owner.organizationId, leaverOrg]) {
      const [event] = await auditOf(owner, org, 'deleteCurrentUser');
      expect(event, org).toMatchObject({ actor: { kind: 'user', id: leaver.userId }, outcome: 'success', status: 200 });
    }
  });
});

describe('DELETE /users/me after deleting my organization', () => {
  it('is not refused as the last owner of an organization deleted a moment ago, whose purge has not run', async () => {
    const founder = await obtainAccessToken(platform, { resource: api });
    const deletedOrg = founder.organizationId;
    // A second organization, shared with another owner, to sign in to once the first is gone.
    const kept = (await call('/organizations', { token: founder.access_token, body: { name: 'Kept' } })).json.id;
    const partner = await obtainAccessToken(platform, { resource: api });
    await platform.ctx.clients.organizations.addMember({ organizationId: kept, userId: userIdOf(partner), role: ROLE_ENUM.owner });
    const { slug } = (await call(`/organizations/${deletedOrg}`, { token: founder.access_token })).json;
    const deleted = await call(`/organizations/${deletedOrg}?confirm=${slug}`, { token: founder.access_token, method: 'DELETE' });
    expect(deleted.status).toBe(202);
    const again = await obtainAccessToken(platform, { resource: api, user: founder.user, mode: 'sign-in', organizationId: kept });
    const r = await call('/users/me', { token: again.access_token, method: 'DELETE', body: { confirm: founder.user.email } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.organizations_left.sort()).toEqual([deletedOrg, kept].sort());
  });
});
