// Invitations end to end over real HTTP: an owner invites an address through the Agents API, the
// e-mail (the outbox file) carries a link to the authorization server, where the invitee signs up
// or signs in and joins with the invited role; the link works once and only for its address, a
// resend replaces it, a revocation kills it, and each step is in the audit log.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
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

/** The invitation link in a message's text. */
function linkIn(text: string): string {
  return /(http\S+\/invitations\/[A-Za-z0-9_-]{43})/.exec(text)![1]!;
}

/** max_members of the default catalogue's Starter plan. */
const STARTER_MAX_MEMBERS = 10;

/** Adds members (usr_filler0, usr_filler1...) until the organization has `count`. */
async function fill(organizationId: string, count: number): Promise<void> {
  const { members } = await platform.ctx.clients.organizations.listMembers({ organizationId, pageSize: 100 });
  for (let i = members.length; i < count; i++) {
    await platform.ctx.clients.organizations.addMember({ organizationId, userId: `usr_filler${i - members.length}`, role: Role.VIEWER });
  }
}

type Answer = Awaited<ReturnType<typeof browse>>;

/**
 * Invites each address into the organization, then on its link: opens it, signs in with a wrong
 * password, opens it again, chooses "I am new", and opens it again; checks that every answer is
 * the same for every address (status, headers and text, with what differs on every request
 * masked: the address, the link's token, the date, the request id and random values).
 */
async function compareAnswers(
  token: string,
  organizationId: string,
  emails: string[],
  password: string,
  options: { beforeAnswers?: () => Promise<void> } = {},
) {
  const links: string[] = [];
  for (const email of emails) {
    const invited = await call(`/organizations/${organizationId}/invitations`, { token, body: { email, role: 'member' } });
    expect(invited.status).toBe(201);
    links.push(linkFor(email));
  }
  await options.beforeAnswers?.();
  const answers = [];
  for (const [i, email] of emails.entries()) {
    const link = links[i]!;
    const jar = new CookieJar();
    const page = await browse(jar, link);
    const csrf = formField(page.body, 'csrf');
    const wrong = await browse(jar, link, { form: { csrf, action: 'sign-in', password: 'not-the-password-at-all' } });
    const afterWrong = await browse(jar, link);
    const signUp = await browse(jar, link, { form: { csrf, action: 'sign-up', name: 'Someone', password } });
    const afterSignUp = await browse(jar, link);
    answers.push({ email, link, page, wrong, afterWrong, signUp, afterSignUp });
  }
  const random = /[A-Za-z0-9_-]{22,}|[0-9a-f-]{36}/g;
  const shape = (r: Answer, email: string) => {
    const headers = Object.fromEntries(
      [...r.headers].filter(([k]) => k !== 'date' && k !== 'content-length').map(([k, v]) => [k, v.replace(random, '<random>')]),
    );
    expect(Number(r.headers.get('content-length'))).toBe(Buffer.byteLength(r.body));
    return { status: r.status, headers, body: r.body.replaceAll(email, '<address>').replace(random, '<random>') };
  };
  const [first, ...rest] = answers;
  for (const other of rest) {
    for (const step of ['page', 'wrong', 'afterWrong', 'signUp', 'afterSignUp'] as const) {
      expect(shape(other[step], other.email), step).toEqual(shape(first![step], first!.email));
    }
  }
  expect(first!.wrong.status).toBe(400);
  expect(first!.afterWrong.status).toBe(200);
  return answers;
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
    // Without social sign-in configured the page offers no identity provider, and its route is not there.
    expect(page.body).not.toContain('Continue with');
    const social = await browse(new CookieJar(), `${link}/social`, { form: { csrf: 'x' } });
    expect(social.status).toBe(404);
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

  it('never reveals whether the invited address has an account: "I am new", a wrong password and the link after each answer alike', async () => {
    const existing = await obtainAccessToken(platform, { resource: api });
    const fresh = newTestUser('fresh');
    const [registered, created] = await compareAnswers(owner.access_token, org, [existing.user.email, fresh.email], fresh.password);
    expect(registered!.signUp.status).toBe(200);
    expect(registered!.signUp.body).toContain('Check your e-mail');
    // The link the page was opened with is ended either way: used up by the account that joined,
    // replaced for the existing one (its new link is mailed to the address).
    expect(registered!.afterSignUp.status).toBe(404);
    // What differs is in the e-mail, which only the address's owner reads.
    expect(mailsTo(created!.email).at(-1)!.subject).toContain('You joined');
    const notice = mailsTo(registered!.email).at(-1)!;
    expect(notice.subject).toContain('you already have an account');
    expect(notice.text).not.toContain(fresh.password);
    const newLink = linkIn(notice.text);
    expect(newLink).not.toBe(registered!.link);
    // Nothing changed for the existing account: its password stands, and the new link lets it join.
    await expect(platform.ctx.clients.organizations.getMembership({ organizationId: org, userId: userIdOf(existing) })).rejects.toThrow();
    const joined = await accept(newLink, { action: 'sign-in', password: existing.user.password });
    expect(joined.status).toBe(200);
    expect(joined.body).toContain('You joined');
  });

  it('never reveals it when the organization is full either; the accounts join from the mailed links once there is room', async () => {
    const full = await obtainAccessToken(platform, { resource: api });
    await platform.ctx.clients.billing.setPlan({ organizationId: full.organizationId, plan: Plan.STARTER });
    const existing = await obtainAccessToken(platform, { resource: api });
    const fresh = newTestUser('full');
    // Invited while there is room; then members fill every seat the Starter plan has.
    const [registered, created] = await compareAnswers(
      full.access_token,
      full.organizationId,
      [existing.user.email, fresh.email],
      fresh.password,
      {
        beforeAnswers: () => fill(full.organizationId, STARTER_MAX_MEMBERS),
      },
    );
    for (const answer of [registered!, created!]) {
      expect(answer.signUp.status).toBe(200);
      expect(answer.signUp.body).toContain('Check your e-mail');
      expect(answer.afterSignUp.status).toBe(404);
    }
    // The e-mails say what happened: the new account was created and waits for room.
    const waiting = mailsTo(fresh.email).at(-1)!;
    expect(waiting.subject).toContain('full for now');
    const notice = mailsTo(existing.user.email).at(-1)!;
    expect(notice.subject).toContain('you already have an account');
    // A correct password is told the organization is full (it proves the address), and the link stays.
    const refused = await accept(linkIn(waiting.text), { action: 'sign-in', password: fresh.password });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('is full');
    await platform.ctx.clients.organizations.removeMember({
      organizationId: full.organizationId,
      userId: 'usr_filler0',
      actorRole: Role.OWNER,
      actorUserId: userIdOf(full),
    });
    expect((await accept(linkIn(waiting.text), { action: 'sign-in', password: fresh.password })).body).toContain('You joined');
    await platform.ctx.clients.organizations.removeMember({
      organizationId: full.organizationId,
      userId: 'usr_filler1',
      actorRole: Role.OWNER,
      actorUserId: userIdOf(full),
    });
    expect((await accept(linkIn(notice.text), { action: 'sign-in', password: existing.user.password })).body).toContain('You joined');
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
