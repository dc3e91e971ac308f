// Teams over the real REST API: created, listed, renamed under If-Match and deleted by owners and
// admins; members put in and taken out; a user who leaves the organization leaves its teams.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { problemType } from '../../edge/api/problems.ts';
import { joinAs, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
let member: TestMember;
let viewer: TestMember;
const call = restClient(() => api);
const teams = (p = '') => `/organizations/${org}/teams${p}`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  member = await joinAs(platform, org, 'member');
  viewer = await joinAs(platform, org, 'viewer');
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('teams', () => {
  it('creates, lists, renames under If-Match and deletes a team', async () => {
    const t = owner.access_token;
    const created = await call(teams(), { token: t, body: { name: 'Platform', description: 'Runs the platform' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'Platform', description: 'Runs the platform', member_count: 0 });
    const id = created.json.id;
    expect((await call(teams(), { token: t, body: { name: 'platform' } })).status).toBe(409);
    const listed = await call(teams(), { token: viewer.access_token });
    expect(listed.json.teams.map((x: Json) => x.id)).toContain(id);
    const etag = created.headers.get('etag')!;
    const renamed = await call(teams(`/${id}`), { token: t, method: 'PATCH', body: { name: 'Infra' }, headers: { 'if-match': etag } });
    expect(renamed.status).toBe(200);
    expect(renamed.json.name).toBe('Infra');
    const stale = await call(teams(`/${id}`), { token: t, method: 'PATCH', body: { name: 'Ops' }, headers: { 'if-match': etag } });
    expect(stale.status).toBe(412);
    expect(stale.json.type).toBe(problemType(412, 'etag-mismatch'));
    expect((await call(teams(`/${id}`), { token: t, method: 'DELETE' })).status).toBe(204);
    expect((await call(teams(`/${id}`), { token: t })).status).toBe(404);
  });

  it('puts members in and out, only members of the organization, and a member who leaves leaves the team', async () => {
    const t = owner.access_token;
    const team = (await call(teams(), { token: t, body: { name: 'Research' } })).json;
    expect((await call(teams(`/${team.id}/members/${member.userId}`), { token: t, method: 'PUT' })).status).toBe(200);
    expect((await call(teams(`/${team.id}/members/${member.userId}`), { token: t, method: 'PUT' })).status).toBe(200);
    expect((await call(teams(`/${team.id}/members/${viewer.userId}`), { token: t, method: 'PUT' })).status).toBe(200);
    const outsider = await call(teams(`/${team.id}/members/usr_outsider`), { token: t, method: 'PUT' });
    expect(outsider.status).toBe(412);
    const listed = await call(teams(`/${team.id}/members`), { token: member.access_token });
    expect(listed.json.members.map((m: Json) => m.user_id)).toEqual([member.userId, viewer.userId]);
    expect(listed.json.members.map((m: Json) => m.email)).toEqual([member.user.email, viewer.user.email]);
    expect(listed.json.members[0].name).toBe(member.user.name ?? 'Test user');
    expect((await call(teams(`/${team.id}`), { token: t })).json.member_count).toBe(2);
    expect((await call(teams(`/${team.id}/members/${viewer.userId}`), { token: t, method: 'DELETE' })).status).toBe(204);
    expect((await call(teams(`/${team.id}/members/${viewer.userId}`), { token: t, method: 'DELETE' })).status).toBe(404);
    expect((await call(`/organizations/${org}/members/${member.userId}`, { token: member.access_token, method: 'DELETE' })).status).toBe(
      204,
    );
    expect((await call(teams(`/${team.id}/members`), { token: t })).json.members).toEqual([]);
  });

  it('keeps teams to their organization and their changes to owners and admins', async () => {
    const team = (await call(teams(), { token: owner.access_token, body: { name: 'Private' } })).json;
    expect((await call(teams(`/${team.id}`), { token: other.access_token })).status).toBe(403);
    const foreign = await call(`/organizations/${other.organizationId}/teams/${team.id}`, { token: other.access_token });
    expect(foreign.status).toBe(404);
    expect((await call(teams(), { token: viewer.access_token, body: { name: 'Nope' } })).status).toBe(403);
    for (const body of [{ name: '' }, { name: 'x'.repeat(101) }, { name: 'ok', extra: true }, { description: 'no name' }]) {
      expect((await call(teams(), { token: owner.access_token, body })).status, JSON.stringify(body)).toBe(422);
    }
    expect((await call(teams(`/${team.id}`), { token: owner.access_token, method: 'PATCH', body: {} })).status).toBe(422);
    expect((await call(teams('/not-a-team'), { token: owner.access_token })).status).toBe(422);
  });
});
