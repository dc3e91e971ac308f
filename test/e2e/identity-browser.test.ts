// The sign-up → consent flow in headless Chromium, with JavaScript disabled (the pages must work
// without it), driven through labels (so every field has one). Screenshots of the sign-up and
// consent pages are kept in test-results/identity/.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTestUser, pkcePair, registerClient, startOAuthTestPlatform, tokenRequest } from '../support/oauth-client.ts';
import { findTool, type TestPlatform } from '../support/platform.ts';

const chromiumPath = findTool('chromium', ['/usr/bin/chromium']);
const SHOTS = path.resolve('test-results/identity');

function isPng(buffer: Buffer): { width: number; height: number } | undefined {
  if (buffer.length < 24 || buffer.toString('latin1', 1, 4) !== 'PNG') return undefined;
  return { width: buffer.readUInt32BE(16), height: buffer.readUInt32BE(20) };
}

describe.skipIf(!chromiumPath)('sign-up and consent in a browser', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let callbackServer: http.Server;
  let callbackUrl: string;

  beforeAll(async () => {
    platform = await startOAuthTestPlatform();
    callbackServer = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Client</title><p>Signed in.</p>');
    });
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', () => resolve()));
    callbackUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    fs.mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (callbackServer ? callbackServer.close(() => resolve()) : resolve()));
    await platform?.stop();
  });

  it('creates an account and an organization, consents, and returns a code to the client', async () => {
    const auth = platform.ctx.config.publicUrls.auth;
    const api = platform.ctx.config.publicUrls.api;
    const client = await registerClient(auth, { client_name: 'Screenshot Client', redirect_uris: [callbackUrl] });
    const { verifier, challenge } = pkcePair();
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: callbackUrl,
      scope: 'openid email profile offline_access',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'browser-state',
      resource: api,
    });
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 800, height: 900 } });
    const page = await context.newPage();
    try {
      await page.goto(`${auth}/authorize?${params}`);
      await expect(page.getByRole('heading', { name: /Sign in to continue to Screenshot Client/ }).count()).resolves.toBe(1);
      await page.getByRole('link', { name: 'Create an account' }).click();

      const user = newTestUser('browser');
      await page.getByLabel('Your name').fill('Browser User');
      await page.getByLabel('E-mail address').fill(user.email);
      await page.getByLabel('Password').fill(user.password);
      await page.getByLabel('Organization name').fill('Browser Org');
      const signUpShot = await page.screenshot({ path: path.join(SHOTS, 'sign-up.png'), fullPage: true });
      expect(isPng(signUpShot)?.width).toBe(800);
      await page.getByRole('button', { name: 'Create account' }).click();

      await expect(page.getByRole('heading', { name: /Allow Screenshot Client to act for your organization/ }).count()).resolves.toBe(1);
      const selected = await page.getByLabel('Organization it acts for').locator('option').allTextContents();
      expect(selected).toEqual(['Browser Org']);
      const consentShot = await page.screenshot({ path: path.join(SHOTS, 'consent.png'), fullPage: true });
      const size = isPng(consentShot);
      expect(size?.width).toBe(800);
      expect(size!.height).toBeGreaterThan(300);
      expect(consentShot.length).toBeGreaterThan(10_000);

      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL((url) => url.href.startsWith(callbackUrl));
      const back = new URL(page.url());
      expect(back.searchParams.get('state')).toBe('browser-state');
      const res = await tokenRequest(auth, {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        client_id: client.client_id,
        redirect_uri: callbackUrl,
        code_verifier: verifier,
      });
      expect(res.status).toBe(200);
      const tokens = (await res.json()) as { access_token: string; refresh_token?: string };
      expect(tokens.refresh_token).toBeTruthy();
      const orgs = await fetch(`${api}/organizations`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(((await orgs.json()) as { organizations: { name: string }[] }).organizations[0].name).toBe('Browser Org');
    } finally {
      await context.close();
    }
  }, 120_000);

  // Browsers apply form-action to every redirect after a form post: the sign-in must reach a
  // native app's private-use scheme (RFC 8252 §7.1), and so must the sign-out.
  it('sends a native app its code, and its sign-out, at its private-use scheme', async () => {
    const auth = platform.ctx.config.publicUrls.auth;
    const redirect = 'com.example.app:/callback';
    const loggedOut = 'com.example.app:/logged-out';
    const client = await registerClient(auth, {
      client_name: 'Native App',
      redirect_uris: [redirect],
      post_logout_redirect_uris: [loggedOut],
    });
    const { verifier, challenge } = pkcePair();
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirect,
      scope: 'openid offline_access',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'native-state',
      resource: platform.ctx.config.publicUrls.api,
    });
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    const violations: string[] = [];
    const appUrls: string[] = [];
    await cdp.send('Log.enable');
    await cdp.send('Network.enable');
    cdp.on('Log.entryAdded', ({ entry }) => entry.text.includes('Content Security Policy') && violations.push(entry.text));
    cdp.on('Network.requestWillBeSent', ({ request }) => request.url.startsWith('com.example.app:') && appUrls.push(request.url));
    const reachedApp = async (prefix: string) => {
      await expect.poll(() => appUrls.find((u) => u.startsWith(prefix)), { timeout: 20_000 }).toBeTruthy();
      return new URL(appUrls.find((u) => u.startsWith(prefix))!);
    };
    try {
      await page.goto(`${auth}/authorize?${params}`);
      await page.getByRole('link', { name: 'Create an account' }).click();
      const user = newTestUser('native');
      await page.getByLabel('Your name').fill('Native User');
      await page.getByLabel('E-mail address').fill(user.email);
      await page.getByLabel('Password').fill(user.password);
      await page.getByLabel('Organization name').fill('Native Org');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByRole('button', { name: 'Allow' }).click();
      const back = await reachedApp(`${redirect}?`);
      expect(back.searchParams.get('state')).toBe('native-state');
      const res = await tokenRequest(auth, {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        client_id: client.client_id,
        redirect_uri: redirect,
        code_verifier: verifier,
      });
      expect(res.status).toBe(200);

      // Sign-out starts in a new tab, as an app opening the URL would: in the tab that just handed a
      // URL to the app's scheme, this Chromium no longer submits forms (nothing is sent at all).
      const logout = await context.newPage();
      const logoutCdp = await context.newCDPSession(logout);
      await logoutCdp.send('Network.enable');
      await logoutCdp.send('Log.enable');
      logoutCdp.on('Log.entryAdded', ({ entry }) => entry.text.includes('Content Security Policy') && violations.push(entry.text));
      logoutCdp.on('Network.requestWillBeSent', ({ request }) => request.url.startsWith('com.example.app:') && appUrls.push(request.url));
      await logout.goto(
        `${auth}/session/end?${new URLSearchParams({ client_id: client.client_id, post_logout_redirect_uri: loggedOut, state: 'bye' })}`,
      );
      await logout.getByRole('button', { name: 'Yes, sign me out' }).click();
      expect((await reachedApp(loggedOut)).searchParams.get('state')).toBe('bye');
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
