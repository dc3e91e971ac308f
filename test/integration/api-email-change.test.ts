// Changing one's e-mail address (POST /users/me/email-change) end to end, through a real SMTP
// server: the link goes to the new address, the authorization server's /verify-email page makes
// the change (the old address gets a notice), the account then signs in with the new address
// only. An address another account has gets the same answer and a notice without a link; links
// work once and only while the account still has the address they were issued for; of two
// accounts confirming one address, exactly one gets it; an address entry left by a write that died
// midway names no account and is taken over, unless it was claimed a moment ago.
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REASON_KEY } from '../../services/common/rpc/reasons.ts';
import { userIdOf } from '../support/members.ts';
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
import { restClient } from '../support/rest.ts';
import { createSmtpInbox, readable, type ReceivedMail, type SmtpListener } from '../support/smtp-inbox.ts';

let smtp: SmtpListener;
let platform: TestPlatform;
let api: string;
let auth: string;
const inbox = createSmtpInbox();
const call = restClient(() => api);

beforeAll(async () => {
  smtp = await inbox.listen();
  platform = await startOAuthTestPlatform({ SMTP_URL: smtp.url, MAIL_FROM: 'Mindgate <auth@mindgate.test>' });
  api = platform.ctx.config.publicUrls.api;
  auth = platform.ctx.config.publicUrls.auth;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await smtp?.close();
});

const newAddress = (prefix: string) => newTestUser(prefix).email;

/** The latest mail to `to` whose subject matches, once it has arrived. */
async function mailTo(to: string, subject: RegExp): Promise<ReceivedMail> {
  const find = () => inbox.mails.filter((m) => m.to.includes(to) && subject.test(m.raw)).at(-1);
  await expect.poll(() => find() !== undefined, { timeout: 30_000, interval: 100 }).toBe(true);
  return find()!;
}

function linkIn(mail: ReceivedMail): string | undefined {
  return /(http:\/\/127\.0\.0\.1:\d+\/verify-email\?token=[A-Za-z0-9_-]{43}(?:&purpose=change)?)/.exec(readable(mail))?.[1];
}

/** Asks to move `owner`'s account to `email`; the link mailed to it. */
async function requestLink(owner: ObtainedToken, email: string): Promise<string> {
  const res = await call('/users/me/email-change', {
    token: owner.access_token,
    body: { new_email: email, current_password: owner.user.password },
  });
  expect(res.status).toBe(202);
  const link = linkIn(await mailTo(email, /Subject: Confirm your new e-mail address/));
  expect(link).toMatch(/&purpose=change$/);
  return link!;
}

/** Opens the link and presses its button, as a person would. */
async function confirm(link: string) {
  const jar = new CookieJar();
  const page = await browse(jar, link);
  expect(page.status).toBe(200);
  // The page says what the button does: an address change, or a sign-up's verification.
  const change = link.endsWith('&purpose=change');
  expect(page.body).toContain(change ? '<h1>Confirm your new e-mail address</h1>' : '<h1>Verify your e-mail address</h1>');
  expect(page.body).toContain(change ? '>Use this address</button>' : '>Verify my address</button>');
  return browse(jar, `${auth}/verify-email`, { form: { csrf: formField(page.body, 'csrf'), token: formField(page.body, 'token') } });
}

async function signInFails(email: string, password: string) {
  const err = await platform.ctx.clients.users.authenticateUser({ email, password }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(Code.Unauthenticated);
}

describe('changing my e-mail address', () => {
  it('mails a link to the new address; the link moves the account, the old address gets a notice and no longer signs in', async () => {
    const owner = await obtainAccessToken(platform, { resource: api });
    const before = await call('/users/me', { token: owner.access_token });
    const signUpLink = linkIn(await mailTo(owner.user.email, /Subject: Verify your e-mail address/));
    const target = newAddress('moved');

    const res = await call('/users/me/email-change', {
      token: owner.access_token,
      body: { new_email: target.toUpperCase(), current_password: owner.user.password },
    });
    expect(res.status).toBe(202);
    expect(Object.keys(res.json).sort()).toEqual(['expires_at', 'new_email']);
    expect(res.json.new_email).toBe(target);
    expect(Date.parse(res.json.expires_at)).toBeGreaterThan(Date.now());
    const link = linkIn(await mailTo(target, /Subject: Confirm your new e-mail address/))!;
    expect(link.startsWith(`${auth}/verify-email?token=`)).toBe(true);
    // Nothing changes until the link is used.
    expect((await call('/users/me', { token: owner.access_token })).json.email).toBe(owner.user.email);

    const done = await confirm(link);
    expect(done.status).toBe(200);
    expect(done.body).toContain(`is now ${target}`);

    // The token in hand keeps working: its subject is the user id.
    const after = await call('/users/me', { token: owner.access_token });
    expect(after.json).toMatchObject({ id: userIdOf(owner), email: target, email_verified: true });
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));

    const notice = await mailTo(owner.user.email, /Subject: Your Mindgate e-mail address was changed/);
    expect(readable(notice)).toContain(target);
    expect(linkIn(notice)).toBeUndefined();

    const again = await obtainAccessToken(platform, { resource: api, user: { ...owner.user, email: target }, mode: 'sign-in' });
    expect(userIdOf(again)).toBe(userIdOf(owner));
    await signInFails(owner.user.email, owner.user.password);

    // Used once; and the sign-up's verification link of the old address is dead too.
    expect((await confirm(link)).status).toBe(400);
    expect((await confirm(signUpLink!)).status).toBe(400);

    const events = await call(`/organizations/${owner.organizationId}/audit-events?action=requestEmailChange`, {
      token: again.access_token,
    });
    expect(events.status).toBe(200);
    expect(events.json.events).toHaveLength(1);
    expect(events.json.events[0]).toMatchObject({ outcome: 'success', target: '/users/me', actor: { kind: 'user', id: userIdOf(owner) } });
    expect(JSON.stringify(events.json.events[0])).not.toContain(new URL(link).searchParams.get('token'));
  });

  it('answers the same for an address another account has, and mails that address a notice without a link', async () => {
    const owner = await obtainAccessToken(platform, { resource: api });
    const other = await obtainAccessToken(platform, { resource: api });
    const free = await call('/users/me/email-change', {
      token: owner.access_token,
      body: { new_email: newAddress('free'), current_password: owner.user.password },
    });
    const taken = await call('/users/me/email-change', {
      token: owner.access_token,
      body: { new_email: other.user.email, current_password: owner.user.password },
    });
    expect(taken.status).toBe(free.status);
    expect(Object.keys(taken.json).sort()).toEqual(Object.keys(free.json).sort());
    expect(taken.json.new_email).toBe(other.user.email);
    const notice = await mailTo(other.user.email, /Subject: Someone asked to use this address/);
    expect(linkIn(notice)).toBeUndefined();
    expect(readable(notice)).not.toContain('token=');
    expect((await call('/users/me', { token: other.access_token })).json.email).toBe(other.user.email);
    expect((await call('/users/me', { token: owner.access_token })).json.email).toBe(owner.user.email);
  });

  it('refuses a wrong password (counted as a failed sign-in), malformed bodies, and machines', async () => {
    const owner = await obtainAccessToken(platform, { resource: api });
    const bad = [
      [{}, ['body']],
      [{ new_email: newAddress('x') }, ['body']],
      [{ new_email: 42, current_password: owner.user.password }, ['body', 'new_email']],
      [{ new_email: 'not an address', current_password: owner.user.password }, ['body', 'new_email']],
      [{ new_email: owner.user.email.toUpperCase(), current_password: owner.user.password }, ['body', 'new_email']],
      [{ new_email: newAddress('x'), current_password: owner.user.password, name: 'x' }, ['body']],
      [{ new_email: newAddress('x'), current_password: 'wrong-password' }, ['body', 'current_password']],
    ] as const;
    for (const [body, loc] of bad) {
      const r = await call('/users/me/email-change', { token: owner.access_token, body });
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.json.errors[0].loc.slice(0, loc.length), JSON.stringify(body)).toEqual(loc);
    }
    // The wrong guesses are throttled with the account's sign-ins (SIGN_IN_ATTEMPTS, 10 by default).
    let last = 0;
    for (let i = 0; i < 10 && last !== 429; i++) {
      last = (
        await call('/users/me/email-change', {
          token: owner.access_token,
          body: { new_email: newAddress('x'), current_password: 'wrong-password' },
        })
      ).status;
    }
    expect(last).toBe(429);
    await expect(
      platform.ctx.clients.users.authenticateUser({ email: owner.user.email, password: owner.user.password }),
    ).rejects.toMatchObject({ code: Code.ResourceExhausted });

    const key = await call(`/organizations/${owner.organizationId}/api-keys`, {
      token: owner.access_token,
      body: { name: 'k', scopes: ['admin'] },
    });
    const byKey = await call('/users/me/email-change', {
      apiKey: key.json.secret,
      body: { new_email: newAddress('x'), current_password: owner.user.password },
    });
    expect(byKey.status).toBe(403);
    expect((await call('/users/me/email-change', { body: { new_email: newAddress('x'), current_password: 'x' } })).status).toBe(401);
  });

  it('refuses an account without a password: set one first', async () => {
    const { user } = await platform.ctx.clients.users.signInWithSocialIdentity({
      issuer: 'https://idp.example.test',
      subject: `s-${Date.now()}`,
      email: newAddress('social'),
      emailVerified: true,
      name: 'Social',
    });
    const err = await platform.ctx.clients.users
      .createEmailChange({ userId: user!.userId, newEmail: newAddress('x'), currentPassword: '' })
      .catch((e: unknown) => e as ConnectError);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((err as ConnectError).metadata.get(REASON_KEY)).toBe('password-required');
  });

  it('refuses a link issued before the account moved to another address', async () => {
    const owner = await obtainAccessToken(platform, { resource: api });
    const first = await requestLink(owner, newAddress('first'));
    const second = newAddress('second');
    expect((await confirm(await requestLink(owner, second))).status).toBe(200);
    expect((await confirm(first)).status).toBe(400);
    expect((await call('/users/me', { token: owner.access_token })).json.email).toBe(second);
  });

  it('gives an address two accounts confirm at once to exactly one of them', async () => {
    const a = await obtainAccessToken(platform, { resource: api });
    const b = await obtainAccessToken(platform, { resource: api });
    const contested = newAddress('contested');
    const linkA = await requestLink(a, contested);
    inbox.mails.length = 0;
    const linkB = await requestLink(b, contested);
    const jars = [new CookieJar(), new CookieJar()];
    const forms = await Promise.all([browse(jars[0], linkA), browse(jars[1], linkB)]);
    const answers = await Promise.all(
      forms.map((page, i) =>
        browse(jars[i], `${auth}/verify-email`, { form: { csrf: formField(page.body, 'csrf'), token: formField(page.body, 'token') } }),
      ),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const loser = answers.find((r) => r.status === 409)!;
    expect(loser.body).toContain('was not changed');
    const emails = await Promise.all([a, b].map(async (t) => (await call('/users/me', { token: t.access_token })).json.email));
    expect(emails.filter((e) => e === contested)).toHaveLength(1);
    // The loser keeps its address and signs in with it.
    const [kept, keeper] = emails[0] === contested ? [emails[1], b] : [emails[0], a];
    expect(kept).toBe(keeper.user.email);
    const still = await platform.ctx.clients.users.authenticateUser({ email: keeper.user.email, password: keeper.user.password });
    expect(still.user?.userId).toBe(userIdOf(keeper));
  });

  it('takes over an address entry left by a write that died midway, but never one being claimed', async () => {
    const emails = platform.ctx.stores.records.collection<{ _id: string; userId: string; claimedAt?: number }>('auth_user_emails');
    const users = platform.ctx.clients.users;
    const create = (email: string) => users.createUser({ email, password: 'correct horse battery', name: 'Heir' });

    // An account that moved away, whose old entry a crash left behind: the old address neither
    // signs it in nor links a social identity to it, and a new account gets it.
    const mover = await obtainAccessToken(platform, { resource: api });
    const left = mover.user.email;
    expect((await confirm(await requestLink(mover, newAddress('moved')))).status).toBe(200);
    await emails.put({ _id: left, userId: userIdOf(mover) });
    await signInFails(left, mover.user.password);
    const social = await users.signInWithSocialIdentity({
      issuer: 'https://idp.example.test',
      subject: `left-${Date.now()}`,
      email: left,
      emailVerified: true,
      name: 'Someone else',
    });
    expect(social.created).toBe(true);
    expect(social.user?.userId).not.toBe(userIdOf(mover));

    // An entry whose account was never written (a sign-up that died), claimed long ago: taken over.
    const orphan = newAddress('orphan');
    await emails.put({ _id: orphan, userId: 'usr_000000000000000000000001', claimedAt: Date.now() - 3_600_000 });
    expect((await create(orphan)).user?.email).toBe(orphan);

    // The same, claimed a moment ago (a sign-up between its two writes): the address is taken.
    const pending = newAddress('pending');
    await emails.put({ _id: pending, userId: 'usr_000000000000000000000002', claimedAt: Date.now() });
    const err = await create(pending).catch((e: unknown) => e as ConnectError);
    expect((err as ConnectError).code).toBe(Code.AlreadyExists);
  });
});
