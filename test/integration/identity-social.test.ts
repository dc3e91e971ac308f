// Social sign-in against a second oidc-provider instance acting as the social identity provider
// (its development login and consent forms are answered over HTTP): the account is created on
// first sign-in, onboarding names the organization at consent, and the token acts for it (and,
// the account having no password, cannot move it to another e-mail address: 409).
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { browse, CookieJar, formAction, pkcePair, registerClient, tokenRequest, type BrowserResponse } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { startSocialTestPlatform, type SocialTestPlatform } from '../support/social-idp.ts';

let social: SocialTestPlatform;
let idpUrl: string;
let platform: TestPlatform;
let authUrl: string;

beforeAll(async () => {
  social = await startSocialTestPlatform();
  ({ platform, authUrl, idpUrl } = social);
}, 120_000);

afterAll(async () => {
  await social?.stop();
});

async function run(jar: CookieJar, first: BrowserResponse, stop: string): Promise<BrowserResponse> {
  let page = first;
  for (let i = 0; i < 30 && page.location && !page.location.startsWith(stop); i++) page = await browse(jar, page.location);
  return page;
}

it('signs a new user in with the social identity provider and onboards an organization at consent', async () => {
  const api = platform.ctx.config.publicUrls.api;
  const client = await registerClient(authUrl);
  const redirect = client.redirect_uris[0];
  const jar = new CookieJar();
  const { verifier, challenge } = pkcePair();
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirect,
    scope: 'openid email',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: api,
  });
  let page = await run(jar, await browse(jar, `${authUrl}/authorize?${params}`), redirect);
  expect(page.body).toContain('Continue with Example ID');
  page = await browse(jar, new URL(formAction(page.body, '/social'), authUrl).href);
  expect(page.location!.startsWith(idpUrl)).toBe(true);
  expect(new URL(page.location!).searchParams.get('code_challenge_method')).toBe('S256');
  page = await run(jar, page, redirect);
  // The identity provider's login form.
  page = await browse(jar, new URL(formAction(page.body, '/interaction/'), idpUrl).href, {
    form: { prompt: 'login', login: 'alice', password: 'any' },
  });
  page = await run(jar, page, redirect);
  if (/name="prompt" value="consent"/.test(page.body)) {
    page = await browse(jar, new URL(formAction(page.body, '/interaction/'), idpUrl).href, { form: { prompt: 'consent' } });
    page = await run(jar, page, redirect);
  }
  // Back at our consent page: a new user belongs to no organization yet and names one.
  expect(page.body, `${page.status} ${page.url}\n${page.body.replace(/<style>[\s\S]*<\/style>/, '')}`).toContain('name="new_organization"');
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1];
  page = await browse(jar, new URL(formAction(page.body, '/consent'), authUrl).href, { form: { csrf, new_organization: 'Alice Labs' } });
  page = await run(jar, page, redirect);
  const code = new URL(page.location!).searchParams.get('code')!;
  const res = await tokenRequest(authUrl, {
    grant_type: 'authorization_code',
    code,
    client_id: client.client_id,
    redirect_uri: redirect,
    code_verifier: verifier,
  });
  expect(res.status).toBe(200);
  const tokens = (await res.json()) as { access_token: string; id_token: string };
  expect(decodeJwt(tokens.id_token)).toMatchObject({ email: 'alice@social.test', email_verified: true });
  const orgs = await fetch(`${api}/organizations`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  const body = (await orgs.json()) as { organizations: { name: string; role: string; current: boolean }[] };
  expect(body.organizations).toEqual([expect.objectContaining({ name: 'Alice Labs', role: 'owner', current: true })]);

  // An account without a password cannot move to another address until it sets one.
  const change = await fetch(`${api}/users/me/email-change`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ new_email: 'alice.new@example.test', current_password: '' }),
  });
  expect(change.status).toBe(409);
  expect(change.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(((await change.json()) as { type: string }).type).toBe('tag:mindgate.dev,2026:problem/password-required');
});

it('refuses a forged or replayed social callback', async () => {
  const jar = new CookieJar();
  const forged = await browse(jar, `${authUrl}/social/callback?code=abc&state=forged`);
  expect(forged.status).toBe(400);
  expect(forged.body).toContain('Sign-in expired');
});
