// The "Done when", in headless Chromium against a fresh platform: a new user signs up
// through the dashboard, creates an API key (its secret shown once, copied to the clipboard),
// connects the MCP SDK's client with exactly the configuration the dashboard shows for it, sees
// the memories the client writes on the Overview and the Memories screen, revokes the key in the
// browser, and the client is refused (401). The same with OAuth: an SDK client authorized in the
// browser appears under Connected applications, and revoking it there refuses its next call. And
// the dashboard's own session: refreshed silently with rotation past the access token's expiry
// (ACCESS_TOKEN_TTL=30, the shortest the platform allows), no token in localStorage,
// sessionStorage or document.cookie, and a reused refresh token ends it. Screenshots go to
// test-results/dashboard-mcp/.
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { InvalidGrantError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { decodeJwt } from 'jose';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardDriver, signUpThroughDashboard, type DashboardDriver } from '../support/dashboard-browser.ts';
import { MemoryOAuthProvider } from '../support/memory-oauth-provider.ts';
import { newTestUser, startOAuthTestPlatform, tokenRequest } from '../support/oauth-client.ts';
import { findTool, type TestPlatform } from '../support/platform.ts';

const chromiumPath = findTool('chromium', ['/usr/bin/chromium']);
const REDIRECT = 'http://127.0.0.1:9/mcp-callback';

/** A memory written through the Brain's manage_memories tool. */
function create(namespace: string, key: string, title: string, content: string) {
  return { name: 'manage_memories', arguments: { action: 'create', namespace, key, title, content } };
}

/** A raw tools/call with these headers: the status the Brain answers. */
async function statusOf(url: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search_memories', arguments: { namespace: 'knowledge', query: 'x' } },
    }),
  });
  await res.body?.cancel();
  return res.status;
}

/** The snippet the page shows for `client` and the authentication picked. */
async function snippet(
  scope: Page | ReturnType<Page['locator']>,
  client: string,
  auth: 'Sign in (OAuth)' | 'API key header',
): Promise<string> {
  await scope.getByLabel('MCP client').selectOption({ label: client });
  await scope.getByLabel(auth).check();
  return (await scope.getByTestId('mcp-snippet').textContent())!;
}

describe.skipIf(!chromiumPath)('from sign-up to an MCP client, in a browser', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let driver: DashboardDriver;
  let context: BrowserContext;
  let page: Page;
  let web: string;
  let mcpUrl: string;

  beforeAll(async () => {
    platform = await startOAuthTestPlatform({ ACCESS_TOKEN_TTL: '30' });
    web = platform.ctx.config.publicUrls.web;
    mcpUrl = `${platform.ctx.config.publicUrls.gateway}/brain/mcp`;
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    driver = dashboardDriver({
      authUrl: platform.ctx.config.publicUrls.auth,
      shots: path.resolve('test-results/dashboard-mcp'),
      expected: /^$/,
    });
    context = await browser.newContext({ viewport: { width: 1200, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
    page = await driver.newPage(context);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it('signs up, creates a key, connects an MCP client with the snippet shown, sees its memories, revokes the key and the client is refused', async () => {
    await signUpThroughDashboard(page, web, newTestUser('mcp-founder'), 'Mia Founder', 'Connect Labs');
    await driver.screen(page, 'overview-new', 'Overview');
    await page.getByText('No memories yet').waitFor();
    // Every client has both variants on the Overview; Claude Code's OAuth one is its documented command.
    expect(await snippet(page, 'Claude Code', 'Sign in (OAuth)')).toBe(`claude mcp add --transport http mindgate ${mcpUrl}`);
    expect(JSON.parse(await snippet(page, 'VS Code', 'Sign in (OAuth)'))).toEqual({ servers: { mindgate: { type: 'http', url: mcpUrl } } });
    expect(await snippet(page, 'Cursor', 'API key header')).toContain('YOUR_API_KEY');
    await driver.screen(page, 'overview-snippet', 'Overview');

    // A key: its secret shown once, copied to the clipboard with the button.
    await driver.open(page, 'API keys', 'API keys', 'api-keys');
    await page.getByLabel('Key name').fill('laptop agent');
    await page.getByLabel('Scope').selectOption('write');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('secret').textContent())!;
    await page.getByRole('button', { name: 'Copy the secret' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied.' }).first().waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(secret);

    // The snippets beside it carry the key; Cursor's mcp.json, as shown, connects the SDK client.
    const panel = page.getByRole('region', { name: 'New secret' });
    expect(await snippet(panel, 'Claude Code', 'API key header')).toBe(
      `claude mcp add --transport http mindgate ${mcpUrl} --header "X-Api-Key: ${secret}"`,
    );
    const cursor = await snippet(panel, 'Cursor', 'API key header');
    await panel.getByRole('button', { name: 'Copy the Cursor configuration' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(cursor);
    await driver.screen(page, 'api-key-snippets', 'API keys');
    const server = (JSON.parse(cursor) as { mcpServers: { mindgate: { url: string; headers: Record<string, string> } } }).mcpServers
      .mindgate;
    expect(server.url).toBe(mcpUrl);
    const client = new Client({ name: 'laptop-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }));
    const wrote = await client.callTool(
      create('knowledge', 'release/checklist', 'Release checklist <b>v2</b>', 'Tag, build, then promote the canary.'),
    );
    expect(wrote.isError).toBeFalsy();
    expect(
      (await client.callTool(create('episodes', 'incident/0412', 'Checkout outage', 'The payment timeout was 2 s.'))).isError,
    ).toBeFalsy();
    await page.getByRole('button', { name: 'I have stored it' }).click();

    // What it wrote, on the Overview (newest first, markup as text) and on the Memories screen.
    await driver.open(page, 'Overview', 'Overview', 'overview-memories');
    const recent = page.getByTestId('recent-memories');
    await expect
      .poll(() => recent.locator('li').allTextContents())
      .toEqual([
        expect.stringMatching(/^Checkout outage episodes\/incident\/0412 version 1/),
        expect.stringMatching(/^Release checklist <b>v2<\/b> knowledge\/release\/checklist version 1/),
      ]);
    await expect(recent.locator('b').count()).resolves.toBe(0);
    await recent.getByRole('link', { name: 'Checkout outage' }).click();
    await driver.screen(page, 'memories-episodes', 'Memories');
    await page.getByRole('article', { name: 'Checkout outage' }).waitFor();
    await expect(page.getByLabel('Namespace').inputValue()).resolves.toBe('episodes');
    await page.getByLabel('Namespace').selectOption('knowledge');
    await page.getByRole('article', { name: 'Release checklist <b>v2</b>' }).getByText('Tag, build, then promote the canary.').waitFor();

    // Revoked in the browser, after a confirmation: the client is refused.
    await driver.open(page, 'API keys', 'API keys', 'api-keys-before-revoke');
    await page.getByRole('button', { name: 'Revoke laptop agent' }).click();
    await page.getByRole('status').filter({ hasText: 'Key laptop agent revoked.' }).waitFor();
    expect(driver.dialogs.at(-1)).toBe('Revoke laptop agent? Anything using it is refused from now on.');
    await expect(client.callTool(create('knowledge', 'after/revoke', 'Too late', 'Refused.'))).rejects.toMatchObject({ code: 401 });
    expect(await statusOf(server.url, server.headers)).toBe(401);
    await client.close();
    expect(driver.consoleErrors).toEqual([]);
  }, 240_000);

  it('authorizes an MCP client with OAuth in the browser, lists it under Connected applications, and revoking it there refuses the client', async () => {
    await driver.open(page, 'Overview', 'Overview', 'overview-oauth');
    const url = (JSON.parse(await snippet(page, 'Cursor', 'Sign in (OAuth)')) as { mcpServers: { mindgate: { url: string } } }).mcpServers
      .mindgate.url;
    const provider = new MemoryOAuthProvider('Laptop MCP client', REDIRECT);
    const first = new Client({ name: 'laptop', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);

    // The browser step: signed in already, one consent; the code comes back to the client's redirect URI.
    const consent = await driver.newPage(context);
    await consent.route(`${REDIRECT}**`, (route) =>
      route.fulfill({ status: 200, contentType: 'text/plain', body: 'You can close this page.' }),
    );
    const back = consent.waitForRequest((r) => r.url().startsWith(REDIRECT));
    await consent.goto(provider.authorizationUrl!.href);
    await consent.getByRole('heading', { name: 'Allow Laptop MCP client to act for your organization?' }).waitFor();
    await consent.getByRole('button', { name: 'Allow' }).click();
    const code = new URL((await back).url()).searchParams.get('code')!;
    await consent.close();
    await transport.finishAuth(code);
    const client = new Client({ name: 'laptop', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
    expect(
      (await client.callTool(create('knowledge', 'oauth/written', 'Written over OAuth', 'By the laptop client.'))).isError,
    ).toBeFalsy();

    await driver.open(page, 'Memories', 'Memories', 'memories-oauth');
    await page.getByRole('article', { name: 'Written over OAuth' }).getByText('Laptop MCP client').waitFor();
    await driver.open(page, 'Connected applications', 'Connected applications', 'connected-apps-mcp');
    const app = page.getByRole('region', { name: 'Laptop MCP client' });
    await app.locator('tbody tr', { hasText: '(you)' }).waitFor();
    await app.getByRole('button', { name: 'Revoke Laptop MCP client for everyone' }).click();
    await page.getByRole('status').filter({ hasText: 'Laptop MCP client: 1 grant(s) revoked.' }).waitFor();
    expect(driver.dialogs.at(-1)).toMatch(/^Revoke every grant of Laptop MCP client\?/);
    await expect.poll(() => app.count()).toBe(0);

    // Its access token is refused, and so is the SDK client (its refresh is refused too).
    expect(await statusOf(url, { authorization: `Bearer ${provider.saved!.access_token}` })).toBe(401);
    const refused = await client.callTool(create('knowledge', 'oauth/after', 'Too late', 'Refused.')).catch((err: unknown) => err);
    expect(refused instanceof UnauthorizedError || refused instanceof InvalidGrantError, String(refused)).toBe(true);
    await client.close();
    expect(driver.consoleErrors).toEqual([]);
  }, 180_000);

  it('refreshes its tokens silently with rotation past the access token’s expiry, keeps none in storage, and a reused refresh token ends the session', async () => {
    const authUrl = platform.ctx.config.publicUrls.auth;
    const apiUrl = platform.ctx.config.publicUrls.api;
    // Its own driver: the end of this test provokes the refused refresh (400) and the API's 401.
    const own = dashboardDriver({ authUrl, shots: path.resolve('test-results/dashboard-mcp'), expected: /status of (400|401)/ });
    const fresh = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    try {
      const tab = await own.newPage(fresh);
      const tokens: { grant: string; sent: string | null; body: { access_token: string; refresh_token: string } }[] = [];
      tab.on('response', async (res) => {
        if (res.url() !== `${authUrl}/token` || res.status() !== 200) return;
        const form = new URLSearchParams(res.request().postData() ?? '');
        tokens.push({ grant: form.get('grant_type')!, sent: form.get('refresh_token'), body: await res.json() });
      });
      const calls: { at: number; token: string; status: number }[] = [];
      tab.on('response', (res) => {
        const token = res
          .request()
          .headers()
          .authorization?.replace(/^Bearer /, '');
        if (res.url().startsWith(apiUrl) && token) calls.push({ at: Date.now(), token, status: res.status() });
      });
      await signUpThroughDashboard(tab, web, newTestUser('mcp-refresh'), 'Ray Fresh', 'Refresh Labs');
      await own.screen(tab, 'refresh-overview', 'Overview');
      await expect.poll(() => tokens.length).toBe(1);
      const signedIn = tokens[0];
      expect(signedIn.grant).toBe('authorization_code');
      const expiresAt = decodeJwt(signedIn.body.access_token).exp! * 1000;

      // The dashboard refreshes before the expiry, sending the refresh token it holds and getting a new one.
      await expect.poll(() => tokens.length, { timeout: 60_000 }).toBe(2);
      const refreshed = tokens[1];
      expect(refreshed.grant).toBe('refresh_token');
      expect(refreshed.sent).toBe(signedIn.body.refresh_token);
      expect(refreshed.body.refresh_token).not.toBe(signedIn.body.refresh_token);
      expect(refreshed.body.access_token).not.toBe(signedIn.body.access_token);

      // Past the first access token's expiry, the screens still work, with the new token.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now() + 1_000)));
      const after = Date.now();
      await own.open(tab, 'Memories', 'Memories', 'refresh-memories');
      await own.open(tab, 'Members', 'Members', 'refresh-members');
      await tab.getByRole('cell', { name: 'Ray Fresh', exact: false }).first().waitFor();
      const later = calls.filter((c) => c.at >= after);
      expect(later.length).toBeGreaterThan(0);
      for (const c of later) {
        expect(c.status).toBe(200);
        expect(c.token).not.toBe(signedIn.body.access_token);
      }

      // No token where a script (or another tab) could read it.
      const stored = await tab.evaluate(() => ({
        local: JSON.stringify({ ...localStorage }),
        session: JSON.stringify({ ...sessionStorage }),
        cookie: document.cookie,
      }));
      for (const t of tokens.flatMap((x) => [x.body.access_token, x.body.refresh_token])) {
        expect(stored.local).not.toContain(t);
        expect(stored.session).not.toContain(t);
        expect(stored.cookie).not.toContain(t);
      }
      for (const cookie of await fresh.cookies()) for (const t of tokens) expect(cookie.value).not.toBe(t.body.refresh_token);

      // The first refresh token was rotated away: used again, it is refused, and the platform
      // revokes the whole grant (reuse detection), so the dashboard's session ends.
      const reused = await tokenRequest(authUrl, {
        grant_type: 'refresh_token',
        refresh_token: signedIn.body.refresh_token,
        client_id: 'mindgate-dashboard',
      });
      expect(reused.status).toBe(400);
      expect(((await reused.json()) as { error: string }).error).toBe('invalid_grant');
      const ended = tab.getByText('Your session has ended');
      await expect
        .poll(async () => {
          if (!(await ended.isVisible())) await tab.getByRole('link', { name: 'Teams' }).click();
          return ended.isVisible();
        })
        .toBe(true);
      expect(own.consoleErrors).toEqual([]);
    } finally {
      await fresh.close();
    }
  }, 180_000);
});
