// E-mail verification through a real SMTP server started here (smtp-server): sign-up sends the
// link through SMTP_URL, the link verifies the address once, and tokens then say so.
import { decodeJwt } from 'jose';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browse, CookieJar, formField, obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

let smtp: SMTPServer;
let platform: TestPlatform;
const inbox: Received[] = [];
let delivered: (() => void) | undefined;

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        delivered?.();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  const port = (smtp.server.address() as AddressInfo).port;
  platform = await startOAuthTestPlatform({ SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Mindgate <auth@mindgate.test>' });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  await new Promise<void>((resolve) => smtp?.close(() => resolve()));
});

function linkIn(raw: string): string {
  // Quoted-printable soft line breaks and =3D would hide the link; undo them.
  const text = raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const m = /(http:\/\/127\.0\.0\.1:\d+\/verify-email\?token=[A-Za-z0-9_-]{43})/.exec(text);
  if (!m) throw new Error(`no verification link in:\n${raw}`);
  return m[1];
}

it('sends the verification link by SMTP at sign-up; the link verifies the address once', async () => {
  const api = platform.ctx.config.publicUrls.api;
  const arrived = new Promise<void>((resolve) => (delivered = resolve));
  const first = await obtainAccessToken(platform, { resource: api });
  await arrived;
  const mail = inbox.find((m) => m.to.includes(first.user.email));
  expect(mail).toBeDefined();
  expect(mail!.from).toBe('auth@mindgate.test');
  expect(mail!.raw).toMatch(/Subject: Verify your e-mail address/);
  expect(decodeJwt(first.id_token!).email_verified).toBe(false);

  const link = linkIn(mail!.raw);
  const jar = new CookieJar();
  const page = await browse(jar, link);
  expect(page.status).toBe(200);
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
