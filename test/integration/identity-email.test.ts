// E-mail verification through a real SMTP server started here (smtp-server): sign-up sends the
// link through SMTP_URL, the link verifies the address once, and tokens then say so.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browse,
  CookieJar,
  follow,
  formAction,
  formField,
  obtainAccessToken,
  pkcePair,
  registerClient,
  reservePorts,
  startOAuthTestPlatform,
} from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { createSmtpInbox, readable, type ReceivedMail, type SmtpListener } from '../support/smtp-inbox.ts';

let smtp: SmtpListener;
let platform: TestPlatform;
const inbox = createSmtpInbox();

beforeAll(async () => {
  smtp = await inbox.listen();
  platform = await startOAuthTestPlatform({ SMTP_URL: smtp.url, MAIL_FROM: 'Mindgate <auth@mindgate.test>' });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await smtp?.close();
});

function linkIn(mail: ReceivedMail): string {
  const m = /(http:\/\/127\.0\.0\.1:\d+\/verify-email\?token=[A-Za-z0-9_-]{43})/.exec(readable(mail));
  if (!m) throw new Error(`no verification link in:\n${mail.raw}`);
  return m[1];
}

it('sends the verification link by SMTP at sign-up; the link verifies the address once', async () => {
  const api = platform.ctx.config.publicUrls.api;
  const arrived = inbox.next();
  const first = await obtainAccessToken(platform, { resource: api });
  await arrived;
  const mail = inbox.mails.find((m) => m.to.includes(first.user.email));
  expect(mail).toBeDefined();
  expect(mail!.from).toBe('auth@mindgate.test');
  expect(mail!.raw).toMatch(/Subject: Verify your e-mail address/);
  expect(decodeJwt(first.id_token!).email_verified).toBe(false);

  const link = linkIn(mail!);
  const jar = new CookieJar();
  const page = await browse(jar, link);
  expect(page.status).toBe(200);
  expect(page.body).toContain('<h1>Verify your e-mail address</h1>');
  // The GET only shows a button: nothing is verified until it is pressed.
  const verified = await browse(jar, `${platform.ctx.config.publicUrls.auth}/verify-email`, {
    form: { csrf: formField(page.body, 'csrf'), token: formField(page.body, 'token') },
  });
  expect(verified.status).toBe(200);
  expect(verified.body).toContain('is verified');
  const again = await browse(jar, `${platform.ctx.config.publicUrls.auth}/verify-email`, {
    form: { csrf: formField(page.body, 'csrf'), token: formField(page.body, 'token') },
  });
  expect(again.status).toBe(400);

  const later = await obtainAccessToken(platform, { resource: api, user: first.user, mode: 'sign-in' });
  expect(decodeJwt(later.id_token!).email_verified).toBe(true);
});

describe('when the SMTP server is down at sign-up', () => {
  let downPlatform: TestPlatform;
  let downPort: number;
  let late: SmtpListener | undefined;
  const logs: string[] = [];

  beforeAll(async () => {
    [downPort] = await reservePorts(1);
    downPlatform = await startOAuthTestPlatform({ SMTP_URL: `smtp://127.0.0.1:${downPort}`, MAIL_RETRY_SECONDS: '1' }, { logs });
  }, 120_000);

  afterAll(async () => {
    await downPlatform?.stop();
    await late?.close();
  });

  it('says at consent, right after signing up in an application, that the link is queued', async () => {
    const auth = downPlatform.ctx.config.publicUrls.auth;
    const client = await registerClient(auth);
    const { challenge } = pkcePair();
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: client.redirect_uris[0],
      scope: 'openid email',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const jar = new CookieJar();
    let page = await follow(jar, await browse(jar, `${auth}/authorize?${params}`), client.redirect_uris[0]);
    page = await browse(jar, new URL(/href="([^"]*\/sign-up)"/.exec(page.body)![1], auth).href);
    const email = `app-late-${Date.now()}@example.test`;
    page = await browse(jar, new URL(formAction(page.body, '/sign-up'), auth).href, {
      form: { csrf: formField(page.body, 'csrf'), name: 'App', email, password: 'a-long-password-2', organization: 'App Org' },
    });
    const consent = await follow(jar, page, client.redirect_uris[0]);
    expect(consent.body).toContain('/consent"');
    expect(consent.body).toContain(`We could not send the verification link to ${email} yet; we will keep trying`);
  }, 60_000);

  it('says the link is queued, retries until the server is up, and never logs the link', async () => {
    const auth = downPlatform.ctx.config.publicUrls.auth;
    const jar = new CookieJar();
    const form = await browse(jar, `${auth}/sign-up`);
    const email = `late-${Date.now()}@example.test`;
    const page = await browse(jar, `${auth}/sign-up`, {
      form: { csrf: formField(form.body, 'csrf'), email, password: 'a-long-password-1', name: 'Late', organization: 'Late Org' },
    });
    expect(page.status).toBe(201);
    expect(page.body).toContain(`We could not send the verification link to ${email} yet; we will keep trying`);
    expect(logs.some((l) => l.includes('mail not delivered yet'))).toBe(true);

    late = await inbox.listen(downPort);
    // The queue's worker retries (MAIL_RETRY_SECONDS=1, doubling) until the server takes it.
    await expect.poll(() => inbox.mails.some((m) => m.to.includes(email)), { timeout: 30_000, interval: 200 }).toBe(true);
    const mail = inbox.mails.find((m) => m.to.includes(email));
    expect(mail).toBeDefined();
    const link = linkIn(mail!);
    const verify = await browse(jar, link);
    const verified = await browse(jar, `${auth}/verify-email`, {
      form: { csrf: formField(verify.body, 'csrf'), token: formField(verify.body, 'token') },
    });
    expect(verified.status).toBe(200);
    const token = new URL(link).searchParams.get('token')!;
    // The platform logged at trace level, the verification request included; no line holds the link.
    expect(logs.some((l) => l.includes('/verify-email'))).toBe(true);
    expect(logs.filter((l) => l.includes(token) || l.includes('verify-email?token'))).toEqual([]);
  }, 60_000);
});
