// The people-and-access story end to end, over real HTTP with a real SMTP server: a new user signs
// up (onboarding creates their first organization), creates a second organization, creates a team
// there and a scoped API key, invites a colleague into the team as a member; the colleague accepts
// from the e-mailed link, and lands in the right organization with the right role and team. Every
// step is in the audit log.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { userIdOf } from '../support/members.ts';
import { browse, CookieJar, formField, newTestUser, obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';
import { createSmtpInbox, readable, type SmtpListener } from '../support/smtp-inbox.ts';

let smtp: SmtpListener;
let platform: TestPlatform;
let api: string;
const inbox = createSmtpInbox();
const call = restClient(() => api);

beforeAll(async () => {
  smtp = await inbox.listen();
  platform = await startOAuthTestPlatform({ SMTP_URL: smtp.url });
  api = platform.ctx.config.publicUrls.api;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await smtp?.close();
});

/** The invitation link in the last message to `email`, as a mail client would show it. */
function invitationLink(email: string): string {
  const mail = inbox.mails.filter((m) => m.to.includes(email)).at(-1);
  expect(mail, `no mail to ${email}`).toBeDefined();
  const text = readable(mail!);
  return /(http:\/\/127\.0\.0\.1:\d+\/invitations\/[A-Za-z0-9_-]{43})/.exec(text)![1];
}

async function events(token: string, org: string): Promise<Json[]> {
  const res = await call(`/organizations/${org}/audit-events?page_size=1000`, { token });
  expect(res.status).toBe(200);
  return res.json.events;
}

it('signs up, opens a second organization, builds a team and a key, and brings a colleague in, all audited', async () => {
  // 1. A new user signs up: onboarding creates their first organization, and mails a verification link.
  const founder = await obtainAccessToken(platform, { resource: api });
  const founderId = userIdOf(founder);
  expect(inbox.mails.some((m) => m.to.includes(founder.user.email) && m.raw.includes('Verify your e-mail address'))).toBe(true);

  // 2. A second organization, then a token acting for it.
  const second = await call('/organizations', { token: founder.access_token, body: { name: 'Second Robotics' } });
  expect(second.status).toBe(201);
  const org = second.json.id as string;
  const owner = await obtainAccessToken(platform, {
    resource: api,
    user: founder.user,
    mode: 'sign-in',
    organizationId: org,
    client: founder.client,
  });
  expect((await call(`/organizations/${org}`, { token: owner.access_token })).json.role).toBe('owner');

  // 3. A team and a read-only key of that team.
  const team = await call(`/organizations/${org}/teams`, { token: owner.access_token, body: { name: 'Field robots' } });
  expect(team.status).toBe(201);
  const key = await call(`/organizations/${org}/api-keys`, {
    token: owner.access_token,
    body: { name: 'dashboards', scopes: ['read'], team_id: team.json.id },
  });
  expect(key.status).toBe(201);
  expect(key.json.api_key).toMatchObject({ scopes: ['read'], team_id: team.json.id });
  expect((await call(`/organizations/${org}/members`, { apiKey: key.json.secret })).status).toBe(200);
  expect((await call(`/organizations/${org}/teams`, { apiKey: key.json.secret, body: { name: 'nope' } })).status).toBe(403);

  // 4. The colleague is invited into the team, as a member.
  const colleague = newTestUser('colleague');
  const invited = await call(`/organizations/${org}/invitations`, {
    token: owner.access_token,
    body: { email: colleague.email, role: 'member', team_ids: [team.json.id] },
  });
  expect(invited.status).toBe(201);
  expect(invited.json.email_delivery).toBe('sent');

  // 5. The colleague opens the e-mailed link and creates an account there.
  const link = invitationLink(colleague.email);
  const jar = new CookieJar();
  const page = await browse(jar, link);
  expect(page.body).toContain('Second Robotics');
  const joined = await browse(jar, link, {
    form: { csrf: formField(page.body, 'csrf'), action: 'sign-up', name: 'Colleague', password: colleague.password },
  });
  expect(joined.status).toBe(200);
  expect(joined.body).toContain('Check your e-mail');
  expect(joined.body).toContain('about joining Second Robotics');

  // 6. Signed in from an application, the colleague acts in that organization, as a member of the team.
  const theirs = await obtainAccessToken(platform, { resource: api, user: colleague, mode: 'sign-in', organizationId: org });
  const colleagueId = userIdOf(theirs);
  expect((await call(`/organizations/${org}`, { token: theirs.access_token })).json.role).toBe('member');
  const memberships = await call('/users/me/memberships', { token: theirs.access_token });
  expect(memberships.json.memberships).toEqual([expect.objectContaining({ organization_id: org, role: 'member', current: true })]);
  const me = await call('/users/me', { token: theirs.access_token });
  expect(me.json).toMatchObject({ email: colleague.email, email_verified: true });
  const teamMembers = await call(`/organizations/${org}/teams/${team.json.id}/members`, { token: theirs.access_token });
  expect(teamMembers.json.members.map((m: Json) => m.user_id)).toEqual([colleagueId]);

  // 7. Every step is in the audit log: the sign-up in the first organization, the rest in the second.
  const first = await events(founder.access_token, founder.organizationId);
  expect(first).toContainEqual(
    expect.objectContaining({
      action: 'signUp',
      actor: { kind: 'user', id: founderId },
      details: expect.objectContaining({ role: 'owner' }),
    }),
  );
  const log = (await events(owner.access_token, org)).reverse();
  const steps = log.map((e) => [e.action, e.actor.id, e.outcome]);
  expect(steps).toEqual([
    ['createOrganization', founderId, 'success'],
    ['createTeam', founderId, 'success'],
    ['createApiKey', founderId, 'success'],
    ['createTeam', key.json.api_key.id, 'denied'],
    ['createInvitation', founderId, 'success'],
    ['acceptInvitation', colleagueId, 'success'],
  ]);
  expect(log.at(-1)).toMatchObject({
    target: `/organizations/${org}/members/${colleagueId}`,
    details: { role: 'member', team_ids: team.json.id, invitation_id: invited.json.id, account: 'created', email: colleague.email },
  });
}, 120_000);
