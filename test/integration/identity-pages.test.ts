// The pages oidc-provider itself renders, over real HTTP: errors, form_post responses and
// RP-initiated logout carry the platform's page security headers, and logout redirects only to
// a post-logout redirect URI the client registered.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browse, CookieJar, startOAuthTestPlatform, postRegistration } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';

let platform: TestPlatform;
let auth: string;

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  auth = platform.ctx.config.publicUrls.auth;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

const register = (metadata: unknown, headers: Record<string, string> = {}) => postRegistration(auth, metadata, headers);

function expectPageSecurityHeaders(headers: Headers, what: string) {
  expect(headers.get('content-security-policy'), what).toContain("frame-ancestors 'none'");
  expect(headers.get('content-security-policy'), what).toContain("default-src 'none'");
  expect(headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(headers.get('x-frame-options'), what).toBe('DENY');
  expect(headers.get('referrer-policy'), what).toBe('no-referrer');
}

describe('RP-initiated logout', () => {
  it('redirects only to a post-logout redirect URI the client registered', async () => {
    const registered = 'https://client.example/logged-out';
    const client = await register({ redirect_uris: ['https://client.example/cb'], post_logout_redirect_uris: [registered] });
    expect(client.status).toBe(201);
    const clientId = client.json.client_id as string;
    const jar = new CookieJar();

    const foreign = await browse(
      jar,
      `${auth}/session/end?${new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: 'https://evil.example/' })}`,
    );
    expect(foreign.status).toBe(400);
    expect(foreign.location).toBeUndefined();
    expect(foreign.body).not.toContain('evil.example');
    expectPageSecurityHeaders(foreign.headers, 'refused logout');

    const page = await browse(
      jar,
      `${auth}/session/end?${new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: registered, state: 's1' })}`,
    );
    expect(page.status).toBe(200);
    expectPageSecurityHeaders(page.headers, 'logout confirmation');
    const action = /<form[^>]*action="([^"]+)"/.exec(page.body)?.[1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.body)?.[1];
    expect(action).toBeTruthy();
    const confirmed = await browse(jar, new URL(action!.replace(/&amp;/g, '&'), auth).href, { form: { xsrf: xsrf!, logout: 'yes' } });
    expect(confirmed.status).toBe(303);
    expect(confirmed.location).toBe(`${registered}?state=s1`);
  });

  it('serves the logout success page with the security headers', async () => {
    const jar = new CookieJar();
    const page = await browse(jar, `${auth}/session/end`);
    expect(page.status).toBe(200);
    const action = /<form[^>]*action="([^"]+)"/.exec(page.body)![1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.body)![1];
    const confirmed = await browse(jar, new URL(action.replace(/&amp;/g, '&'), auth).href, { form: { xsrf, logout: 'yes' } });
    expect(confirmed.location).toBe(`${auth}/session/end/success`);
    const success = await browse(jar, confirmed.location!);
    expect(success.status).toBe(200);
    expectPageSecurityHeaders(success.headers, 'logout success');
    expect(success.body).not.toMatch(/https?:\/\/fonts\./);
  });
});

describe("oidc-provider's own pages", () => {
  it('carry the platform page security headers on errors', async () => {
    const res = await fetch(`${auth}/authorize?client_id=nope&response_type=code&scope=openid`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expectPageSecurityHeaders(res.headers, 'authorize error');
    const unknown = await fetch(`${auth}/no/such/page`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('allow the inline script of a form_post response by its hash, and no other script', async () => {
    const client = await register({ redirect_uris: ['https://client.example/cb'] });
    const query = new URLSearchParams({
      client_id: client.json.client_id,
      redirect_uri: 'https://client.example/cb',
      response_type: 'code',
      response_mode: 'form_post',
      scope: 'openid',
      state: 's',
    });
    // No code_challenge: the error goes back to the client as a self-submitting form.
    const res = await fetch(`${auth}/authorize?${query}`);
    const html = await res.text();
    expect(html).toContain('action="https://client.example/cb"');
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1];
    const hash = createHash('sha256').update(script).digest('base64');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toMatch(new RegExp(`script-src 'sha256-${hash.replace(/[+/]/g, '\\$&')}'(;|$)`));
    expectPageSecurityHeaders(res.headers, 'form_post');
  });
});
