// Accepting an invitation with a social identity, against a second oidc-provider instance acting
// as the social identity provider (test/support/social-idp.ts; a login whose name starts with
// "unverified" gets an unverified address): the identity joins when its provider verified the
// invited address, for a new account or the existing verified one with that address; another
// address, an unverified one, a forged state or a callback carried to another browser is refused
// with nothing created or joined, and the link still works.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import {
  browse,
  CookieJar,
  formAction,
  formField,
  newTestUser,
  obtainAccessToken,
  type BrowserResponse,
  type ObtainedToken,
} from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { startSocialTestPlatform, type SocialTestPlatform } from '../support/social-idp.ts';
import { restClient } from '../support/rest.ts';

let social: SocialTestPlatform;
let idpUrl: string;
let platform: TestPlatform;
let authUrl: string;
let owner: ObtainedToken;
const call = restClient(() => platform.ctx.config.publicUrls.api);

beforeAll(async () => {
  social = await startSocialTestPlatform();
  ({ platform, authUrl, idpUrl } = social);
  owner = await obtainAccessToken(platform, { resource: platform.ctx.config.publicUrls.api });
}, 120_000);

afterAll(async () => {
  await social?.stop();
});

const login = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

/** Invites the address into the owner's organization and answers the link mailed to it. */
async function invite(email: string, role: string): Promise<string> {
  const created = await call(`/organizations/${owner.organizationId}/invitations`, { token: owner.access_token, body: { email, role } });
  expect(created.status).toBe(201);
  const outbox = path.join(platform.ctx.config.storage.dataDir, 'outbox.jsonl');
  const mail = fs
    .readFileSync(outbox, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { to: string; text: string })
    .filter((m) => m.to === email)
    .at(-1)!;
  return /(http\S+\/invitations\/[A-Za-z0-9_-]{43})/.exec(mail.text)![1]!;
}

async function run(jar: CookieJar, first: BrowserResponse, stop = '\0'): Promise<BrowserResponse> {
  let page = first;
  for (let i = 0; i < 30 && page.location && !page.location.startsWith(stop); i++) page = await browse(jar, page.location);
  return page;
}

/** Presses "Continue with Example ID" on the invitation page and signs in at the provider as `sub`; stops before `stop`. */
async function continueWithSocial(jar: CookieJar, link: string, sub: string, stop?: string): Promise<BrowserResponse> {
  const page = await browse(jar, link);
  expect(page.body).toContain('Continue with Example ID');
  let answer = await browse(jar, new URL(formAction(page.body, '/social'), link).href, { form: { csrf: formField(page.body, 'csrf') } });
  expect(answer.location!.startsWith(idpUrl)).toBe(true);
  expect(new URL(answer.location!).searchParams.get('code_challenge_method')).toBe('S256');
  answer = await run(jar, answer, stop);
  answer = await browse(jar, new URL(formAction(answer.body, '/interaction/'), idpUrl).href, {
    form: { prompt: 'login', login: sub, password: 'any' },
  });
  answer = await run(jar, answer, stop);
  if (/name="prompt" value="consent"/.test(answer.body)) {
    answer = await browse(jar, new URL(formAction(answer.body, '/interaction/'), idpUrl).href, { form: { prompt: 'consent' } });
    answer = await run(jar, answer, stop);
  }
  return answer;
}

/** The invitation of `email`, as the owner lists it. */
async function listed(email: string): Promise<{ state: string; accepted_by?: string }> {
  const res = await call(`/organizations/${owner.organizationId}/invitations`, { token: owner.access_token });
  return (res.json.invitations as { email: string; state: string; accepted_by?: string }[]).find((i) => i.email === email)!;
}

/** Accepts with "I am new" and a password: the link still works and the new account joins. */
async function joinWithPassword(link: string, email: string): Promise<void> {
  const jar = new CookieJar();
  const page = await browse(jar, link);
  expect(page.status).toBe(200);
  const user = newTestUser('pw');
  const joined = await browse(jar, link, {
    form: { csrf: formField(page.body, 'csrf'), action: 'sign-up', name: 'Someone', password: user.password },
  });
  expect(joined.body).toContain('Check your e-mail');
  expect(await listed(email)).toMatchObject({ state: 'accepted' });
}

describe('accepting an invitation with a social identity', () => {
  it('makes a new account for the verified invited address a member with the invited role, and uses the link up', async () => {
    const sub = login('new');
    const link = await invite(`${sub}@social.test`, 'admin');
    const page = await continueWithSocial(new CookieJar(), link, sub);
    expect(page.status, page.body).toBe(200);
    expect(page.body).toContain('You joined');
    const invitation = await listed(`${sub}@social.test`);
    expect(invitation.state).toBe('accepted');
    const { membership } = await platform.ctx.clients.organizations.getMembership({
      organizationId: owner.organizationId,
      userId: invitation.accepted_by!,
    });
    expect(membership!.role).toBe(Role.ADMIN);
    const { user } = await platform.ctx.clients.users.getUser({ userId: invitation.accepted_by! });
    expect(user).toMatchObject({ email: `${sub}@social.test`, emailVerified: true });
    expect((await browse(new CookieJar(), link)).status).toBe(404);
    const events = await call(`/organizations/${owner.organizationId}/audit-events?action=acceptInvitation`, { token: owner.access_token });
    expect(events.json.events.some((e: { target: string }) => e.target.endsWith(`/members/${invitation.accepted_by}`))).toBe(true);
  });

  it('lets the existing verified account with the invited address join', async () => {
    const sub = login('existing');
    const email = `${sub}@social.test`;
    const { user } = await platform.ctx.clients.users.createUser({
      email,
      password: `pw-${sub}-long-enough`,
      name: sub,
      emailVerified: true,
    });
    const link = await invite(email, 'viewer');
    const page = await continueWithSocial(new CookieJar(), link, sub);
    expect(page.status, page.body).toBe(200);
    expect(page.body).toContain('You joined');
    expect(await listed(email)).toMatchObject({ state: 'accepted', accepted_by: user!.userId });
    const { membership } = await platform.ctx.clients.organizations.getMembership({
      organizationId: owner.organizationId,
      userId: user!.userId,
    });
    expect(membership!.role).toBe(Role.VIEWER);
  });

  it('does not link an existing account whose address is not verified: nothing joined, and the link still works', async () => {
    const sub = login('unlinked');
    const email = `${sub}@social.test`;
    const password = `pw-${sub}-long-enough`;
    const { user } = await platform.ctx.clients.users.createUser({ email, password, name: sub, emailVerified: false });
    const link = await invite(email, 'member');
    const page = await continueWithSocial(new CookieJar(), link, sub);
    expect(page.status).toBe(409);
    expect(page.body).toContain('Sign in with your password');
    expect(await listed(email)).toMatchObject({ state: 'pending' });
    const jar = new CookieJar();
    const form = await browse(jar, link);
    const joined = await browse(jar, link, { form: { csrf: formField(form.body, 'csrf'), action: 'sign-in', password } });
    expect(joined.body).toContain('You joined');
    expect(await listed(email)).toMatchObject({ state: 'accepted', accepted_by: user!.userId });
  });

  it('refuses an identity with another address: nothing created or joined, and the link still works', async () => {
    const sub = login('other');
    const invited = newTestUser('invited').email;
    const link = await invite(invited, 'member');
    const page = await continueWithSocial(new CookieJar(), link, sub);
    expect(page.status).toBe(403);
    expect(page.body).toContain('another e-mail address');
    expect(await listed(invited)).toMatchObject({ state: 'pending' });
    // No account was made for the identity's own address.
    await platform.ctx.clients.users.createUser({
      email: `${sub}@social.test`,
      password: `pw-${sub}-long-enough`,
      name: sub,
      emailVerified: false,
    });
    await joinWithPassword(link, invited);
  });

  it('refuses an identity whose provider has not verified the invited address, and the link still works', async () => {
    const sub = login('unverified');
    const email = `${sub}@social.test`;
    const link = await invite(email, 'member');
    const page = await continueWithSocial(new CookieJar(), link, sub);
    expect(page.status).toBe(403);
    expect(page.body).toContain('has not verified');
    expect(await listed(email)).toMatchObject({ state: 'pending' });
    // "I am new" joins at once only when no account has the address: none was created.
    await joinWithPassword(link, email);
  });

  it('refuses a forged state, and a callback carried to another browser (which also ends it)', async () => {
    const forged = await browse(new CookieJar(), `${authUrl}/social/callback?code=abc&state=forged`);
    expect(forged.status).toBe(400);
    expect(forged.body).toContain('Sign-in expired');

    const sub = login('carried');
    const email = `${sub}@social.test`;
    const link = await invite(email, 'member');
    const jar = new CookieJar();
    const before = await continueWithSocial(jar, link, sub, `${authUrl}/social/callback`);
    const callback = before.location!;
    expect(callback.startsWith(`${authUrl}/social/callback?`)).toBe(true);
    const elsewhere = await browse(new CookieJar(), callback);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body).toContain('another browser');
    const replayed = await browse(jar, callback);
    expect(replayed.status).toBe(400);
    expect(replayed.body).toContain('Sign-in expired');
    expect(await listed(email)).toMatchObject({ state: 'pending' });
    // The link still works, with the identity too.
    const page = await continueWithSocial(new CookieJar(), link, sub);
    expect(page.body).toContain('You joined');
  });
});
