// Invitations end to end over real HTTP: an owner invites an address through the Agents API, the
// e-mail (the outbox file) carries a link to the authorization server, where the invitee signs up
// or signs in and joins with the invited role; the link works once and only for its address, a
// resend replaces it, a revocation kills it, and each step is in the audit log.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import { joinAs, userIdOf } from '../support/members.ts';
import {
  browse,
  CookieJar,
  formField,
  newTestUser,
  obtainAccessToken,
  startOAuthTestPlatform,
  type ObtainedToken,
} from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let auth: string;
let owner: ObtainedToken;
let org: string;
const call = restClient(() => api);
const invitations = (p = '') => `/organizations/${org}/invitations${p}`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  auth = platform.ctx.config.publicUrls.auth;
  owner = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

/** The messages mailed to `email` so far (the outbox, without SMTP_URL). */
function mailsTo(email: string): { to: string; subject: string; text: string }[] {
  const outbox = path.join(platform.ctx.config.storage.dataDir, 'outbox.jsonl');
  return fs
    .readFileSync(outbox, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { to: string; subject: string; text: string })
    .filter((m) => m.to === email);
}

/** The last invitation link mailed to `email`. */
function linkFor(email: string): string {
  const last = mailsTo(email)
    .filter((m) => m.subject.includes('You are invited to join'))
    .at(-1)!;
  expect(last).toBeDefined();
  return /(http\S+\/invitations\/[A-Za-z0-9_-]{43})/.exec(last.text)![1];
}

async function accept(link: string, form: Record<string, string>) {
  const jar = new CookieJar();
  const page = await browse(jar, link);
  if (page.status !== 200) return page;
  return browse(jar, link, { form: { csrf: formField(page.body, 'csrf'), ...form } });
}

describe('inviting and joining', () => {
  it('lets a new colleague sign up from the link and land in the organization with the invited role', async () => {
    const colleague = newTestUser('colleague');
    const created = await call(invitations(), { token: owner.access_token, body: { email: colleague.email, role: 'admin' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ email: colleague.email, role: 'admin', state: 'pending', invited_by: userIdOf(owner) });
    expect(created.text).not.toMatch(/[A-Za-z0-9_-]{43}/);
    const link = linkFor(colleague.email);
    expect(link.startsWith(`${auth}/invitations/`)).toBe(true);

    const page = await browse(new CookieJar(), link);
    expect(page.body).toContain('I have an account');
    expect(page.body).toContain('I am new');
    const joined = await accept(link, { action: 'sign-up', name: colleague.name ?? '', password: colleague.password });
    expect(joined.status).toBe(200);
    expect(joined.body).toContain('Check your e-mail');
    expect(mailsTo(colleague.email).at(-1)!.subject).toContain('You joined');

    const token = await obtainAccessToken(platform, { resource: api, user: colleague, mode: 'sign-in', organizationId: org });
    const me = await call(`/organizations/${org}`, { token: token.access_token });
    expect(me.json.role).toBe('admin');
    const listed = await call(invitations(), { token: owner.access_token });
    expect(listed.json.invitations[0]).toMatchObject({ email: colleague.email, state: 'accepted', accepted_by: userIdOf(token) });

    expect((await accept(link, { action: 'sign-in', password: colleague.password })).status).toBe(404);
    const events = await call(`/organizations/${org}/audit-events?action=createInvitation`, { token: owner.access_token });
    expect(events.json.events).toHaveLength(1);
  });

  it('lets someone with an account sign in from the link, keeping a higher role they already hold', async () => {
    const existing = await obtainAccessToken(platform, { resource: api });
    await call(invitations(), { token: owner.access_token, body: { email: existing.user.email, role: 'viewer' } });
    const link = linkFor(existing.user.email);
    const wrong = await accept(link, { action: 'sign-in', password: 'not-the-password' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain('not correct');
    const joined = await accept(link, { action: 'sign-in', password: existing.user.password });
    expect(joined.status).toBe(200);
    const membership = await platform.ctx.clients.organizations.getMembership({ organizationId: org, userId: userIdOf(existing) });
    expect(membership.membership!.role).toBe(Role.VIEWER);
  });

  it('never reveals whether the invited address has an account: "I am new" and a wrong password answer alike', async () => {
    const existing = await obtainAccessToken(platform, { resource: api });
    const fresh = newTestUser('fresh');
    const answers = [];
    for (const email of [existing.user.email, fresh.email]) {
      await call(invitations(), { token: owner.access_token, body: { email, role: 'member' } });
      const link = linkFor(email);
      const jar = new CookieJar();
      const page = await browse(jar, link);
      const csrf = formField(page.body, 'csrf');
      const wrong = await browse(jar, link, { form: { csrf, action: 'sign-in', password: 'not-the-password-at-all' } });
      const signUp = await browse(jar, link, { form: { csrf, action: 'sign-up', name: 'Someone', password: fresh.password } });
      answers.push({ email, link, page, wrong, signUp });
    }
    // Status, headers and text, with what differs on every request masked: the address (and the
    // length, which follows it), the link's token, the date, the request id and random values.
    const random = /[A-Za-z0-9_-]{22,}|[0-9a-f-]{36}/g;
    const shape = (r: Awaited<ReturnType<typeof browse>>, email: string) => {
      const headers = Object.fromEntries(
        [...r.headers].filter(([k]) => k !== 'date' && k !== 'content-length').map(([k, v]) => [k, v.replace(random, '<random>')]),
      );
      expect(Number(r.headers.get('content-length'))).toBe(Buffer.byteLength(r.body));
      return { status: r.status, headers, body: r.body.replaceAll(email, '<address>').replace(random, '<random>') };
    };
    const [registered, created] = answers;
    for (const step of ['page', 'wrong', 'signUp'] as const) {
      expect(shape(registered![step], registered!.email), step).toEqual(shape(created![step], created!.email));
    }
    expect(registered!.signUp.status).toBe(200);
    expect(registered!.signUp.body).toContain('Check your e-mail');
    // What differs is in the e-mail, which only the address's owner reads.
    expect(mailsTo(created!.email).at(-1)!.subject).toContain('You joined');
    const notice = mailsTo(registered!.email).at(-1)!;
    expect(notice.subject).toContain('you already have an account');
    expect(notice.text).toContain(registered!.link);
    expect(notice.text).not.toContain(fresh.password);
    // Nothing changed for the existing account: its password stands, and the link still lets it join.
    await expect(platform.ctx.clients.organizations.getMembership({ organizationId: org, userId: userIdOf(existing) })).rejects.toThrow();
    const joined = await accept(registered!.link, { action: 'sign-in', password: existing.user.password });
    expect(joined.status).toBe(200);
    expect(joined.body).toContain('You joined');
  });

  it('accepts only for the invited address', async () => {
    const invited = newTestUser('invited');
    await call(invitations(), { token: owner.access_token, body: { email: invited.email, role: 'member' } });
    const token = linkFor(invited.email).split('/').at(-1)!;
    const other = await obtainAccessToken(platform, { resource: api });
    await expect(
      platform.ctx.clients.invitations.acceptInvitation({ token, userId: userIdOf(other), userEmail: other.user.email }),
    ).rejects.toThrow(/another e-mail address/);
  });
});

describe('invitations with teams', () => {
  it('puts the new member in the invited teams on accepting, and audits the joining with role and teams', async () => {
    const robots = await call(`/organizations/${org}/teams`, { token: owner.access_token, body: { name: 'Invited robots' } });
    const docs = await call(`/organizations/${org}/teams`, { token: owner.access_token, body: { name: 'Invited docs' } });
    const person = newTestUser('teamed');
    const created = await call(invitations(), {
      token: owner.access_token,
      body: { email: person.email, role: 'member', team_ids: [robots.json.id, docs.json.id] },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ team_ids: [robots.json.id, docs.json.id], email_delivery: 'sent' });
    // A team deleted before the invitation is accepted is skipped.
    await call(`/organizations/${org}/teams/${docs.json.id}`, { token: owner.access_token, method: 'DELETE' });
    const joined = await accept(linkFor(person.email), { action: 'sign-up', name: 'Teamed', password: person.password });
    expect(joined.status).toBe(200);
    const token = await obtainAccessToken(platform, { resource: api, user: person, mode: 'sign-in', organizationId: org });
    const members = await call(`/organizations/${org}/teams/${robots.json.id}/members`, { token: owner.access_token });
    expect(members.json.members.map((m: Json) => m.user_id)).toEqual([userIdOf(token)]);
    const events = await call(`/organizations/${org}/audit-events?action=acceptInvitation&actor_id=${userIdOf(token)}`, {
      token: owner.access_token,
    });
    expect(events.json.events).toHaveLength(1);
    expect(events.json.events[0]).toMatchObject({
      actor: { kind: 'user', id: userIdOf(token) },
      target: `/organizations/${org}/members/${userIdOf(token)}`,
      outcome: 'success',
      details: { role: 'member', team_ids: robots.json.id, invitation_id: created.json.id, account: 'created' },
    });
  });

  it('refuses teams of another organization (404) and malformed team ids (422)', async () => {
    const stranger = await obtainAccessToken(platform, { resource: api });
    const theirs = await call(`/organizations/${stranger.organizationId}/teams`, {
      token: stranger.access_token,
      body: { name: 'Theirs' },
    });
    const person = newTestUser('misteamed');
    const foreign = await call(invitations(), {
      token: owner.access_token,
      body: { email: person.email, role: 'member', team_ids: [theirs.json.id] },
    });
    expect(foreign.status).toBe(404);
    expect(foreign.json.detail).toContain(theirs.json.id);
    const malformed = await call(invitations(), {
      token: owner.access_token,
      body: { email: person.email, role: 'member', team_ids: ['nope'] },
    });
    expect(malformed.status).toBe(422);
    expect(malformed.json.errors[0].loc).toEqual(['body', 'team_ids', 0]);
    const listed = await call(invitations(), { token: owner.access_token });
    expect(listed.json.invitations.map((i: Json) => i.email)).not.toContain(person.email);
  });
});

describe('managing invitations', () => {
  it('replaces the link on resend and kills it on revoke', async () => {
    const person = newTestUser('resent');
    const created = await call(invitations(), { token: owner.access_token, body: { email: person.email, role: 'member' } });
    const first = linkFor(person.email);
    const resent = await call(invitations(`/${created.json.id}/resend`), { token: owner.access_token, method: 'POST' });
    expect(resent.status).toBe(200);
    const second = linkFor(person.email);
    expect(second).not.toBe(first);
    expect((await browse(new CookieJar(), first)).status).toBe(404);
    expect((await browse(new CookieJar(), second)).status).toBe(200);
    expect((await call(invitations(`/${created.json.id}`), { token: owner.access_token, method: 'DELETE' })).status).toBe(204);
    expect((await browse(new CookieJar(), second)).status).toBe(404);
    expect((await call(invitations(`/${created.json.id}/resend`), { token: owner.access_token, method: 'POST' })).status).toBe(412);
  });

  it('refuses a second pending invitation, an admin inviting an owner, members, and malformed input', async () => {
    const person = newTestUser('twice');
    await call(invitations(), { token: owner.access_token, body: { email: person.email, role: 'member' } });
    const again = await call(invitations(), { token: owner.access_token, body: { email: person.email.toUpperCase(), role: 'member' } });
    expect(again.status).toBe(409);
    const admin = await joinAs(platform, org, 'admin');
    const ownerInvite = await call(invitations(), { token: admin.access_token, body: { email: newTestUser().email, role: 'owner' } });
    expect(ownerInvite.status).toBe(403);
    const member = await joinAs(platform, org, 'member');
    expect((await call(invitations(), { token: member.access_token })).status).toBe(403);
    for (const body of [
      { email: 'not-an-address', role: 'member' },
      { email: 'a@example.test', role: 'god' },
      { email: 'a@example.test' },
    ]) {
      expect((await call(invitations(), { token: owner.access_token, body })).status, JSON.stringify(body)).toBe(422);
    }
    expect((await browse(new CookieJar(), `${auth}/invitations/short`)).status).toBe(404);
    expect((await call(invitations('/inv_missing'), { token: owner.access_token, method: 'DELETE' })).status).toBe(404);
  });

  it('lists invitations newest first with their state', async () => {
    const r = await call(invitations('?page_size=2'), { token: owner.access_token });
    expect(r.json.invitations).toHaveLength(2);
    expect(r.json.next_page_token).toEqual(expect.any(String));
    const states = new Set((r.json.invitations as Json[]).map((i) => i.state));
    for (const state of states) expect(['pending', 'accepted', 'revoked', 'expired']).toContain(state);
  });
});
