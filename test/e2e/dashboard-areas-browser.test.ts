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
  /** A write key made in the dashboard, for what agents do through the API. */
  let agentKey: string;

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
      // One attempt: a delivery the receiver refuses is failed at once, for the range redelivery.
      WEBHOOK_MAX_ATTEMPTS: '1',
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
    // A name the API refuses: its 422 problem, field by field.
    await byHand.getByLabel('Name').fill('no spaces allowed');
    await byHand.getByLabel('Backend URL').fill(backend.url);
    await byHand.getByRole('button', { name: 'Add server' }).click();
    const problem = byHand.getByRole('alert');
    await expect(problem.textContent()).resolves.toMatch(/\(422\).*body\.name/);
    await driver.screen(page, 'mcp-servers-problem', 'MCP servers');
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
    // The gateway learns of the change within GATEWAY_REGISTRY_POLL_MS: a test run meanwhile gets
    // through initialize and is refused at the next step.
    await expect
      .poll(async () => (await result.count()) && result.textContent())
      .toMatch(/The test failed at (initialize|tools\/list) \(HTTP 503\): The server is disabled/);
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

  it('creates a webhook endpoint whose secret, shown once, signs what arrives; tests, redelivers, rotates, disables and deletes it', async () => {
    await driver.open(page, 'Webhooks', 'Webhooks', 'webhooks-empty');
    await page.getByText('Add an endpoint').click();
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Description').fill('Audit sink <i>raw</i>');
    await page.getByRole('checkbox', { name: 'webhook.test' }).check();
    await page.getByRole('checkbox', { name: 'api_key.created' }).check();
    await driver.screen(page, 'webhooks-create', 'Webhooks');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const secret = (await page.getByTestId('secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    receiver.secrets.push(secret);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('link', { name: receiver.url }).click();
    await driver.screen(page, 'webhook', 'Webhook endpoint');
    await expect(page.locator('.facts').textContent()).resolves.toContain(secret.slice(0, 10));

    // A test event arrives signed with the secret shown; the log shows it delivered, with its attempt.
    await page.getByRole('button', { name: 'Send a test event' }).click();
    const [first] = await receiver.waitFor(1, (r) => r.verified?.type === 'webhook.test');
    expect(first.verifiedWith).toBe(0);
    const log = page.getByRole('table', { name: 'Deliveries, newest first' });
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh the log' }).click();
        return log.textContent();
      })
      .toContain('succeeded');
    await page.getByRole('button', { name: 'Attempts of webhook.test' }).click();
    await page
      .locator('.panel')
      .getByRole('cell', { name: /^HTTP 200/ })
      .waitFor();
    await driver.screen(page, 'webhook-deliveries', 'Webhook endpoint');

    // Redelivered: the same event (its webhook-id) arrives again.
    await page.getByRole('button', { name: 'Redeliver webhook.test' }).click();
    await page.getByRole('status').filter({ hasText: 'Delivery of webhook.test queued again.' }).waitFor();
    const again = await receiver.waitFor(2, (r) => r.verified?.type === 'webhook.test');
    expect(again[1].headers['webhook-id']).toBe(first.headers['webhook-id']);

    // More event types, saved with the version read.
    await page.getByText('Edit the endpoint').click();
    await page.getByRole('checkbox', { name: 'memory.created' }).check();
    await page.getByRole('button', { name: 'Save the endpoint' }).click();
    await page.getByRole('status').filter({ hasText: 'Endpoint saved.' }).waitFor();
    await expect.poll(() => page.locator('.facts').textContent()).toContain('memory.created');

    // Rotated: the new secret, shown once, signs the next test event.
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    const rotated = (await page.getByTestId('secret').textContent())!;
    expect(rotated).not.toBe(secret);
    receiver.secrets.unshift(rotated);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    const signed = await receiver.waitFor(3, (r) => r.verified?.type === 'webhook.test');
    expect(signed[2].headers['webhook-signature'].split(' ').length).toBe(2);

    // The receiver down: the next test event fails. Back up, the failures of the last day go again.
    receiver.status = 500;
    await page.getByRole('button', { name: 'Send a test event' }).click();
    const refused = await receiver.waitFor(4, (r) => r.verified?.type === 'webhook.test');
    expect(refused[3].status).toBe(500);
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh the log' }).click();
        return log.locator('tbody tr').first().textContent();
      })
      .toMatch(/^webhook\.testfailed1HTTP 500/);
    receiver.status = 200;
    await page.getByText('Redeliver failed deliveries over a time range').click();
    await page.getByRole('button', { name: 'Redeliver the failed ones' }).click();
    await page.getByRole('status').filter({ hasText: '1 failed delivery queued again.' }).waitFor();
    expect(driver.dialogs.at(-1)).toMatch(/^Send every failed delivery of events from .* until now again\?$/);
    const resent = await receiver.waitFor(5, (r) => r.verified?.type === 'webhook.test');
    expect(resent[4].status).toBe(200);
    expect(resent[4].headers['webhook-id']).toBe(refused[3].headers['webhook-id']);
    await driver.screen(page, 'webhook-redelivered', 'Webhook endpoint');

    // Disabled, then deleted.
    await page.getByRole('button', { name: 'Disable the endpoint' }).click();
    await page.getByRole('status').filter({ hasText: 'Endpoint disabled.' }).waitFor();
    await expect.poll(() => page.locator('.facts').textContent()).toContain('disabled');
    await page.getByRole('button', { name: 'Delete the endpoint' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByText('No endpoints yet.').waitFor();
    expect(driver.consoleErrors).toEqual([]);
  });

  it('shows the plan, trial and usage, checks out a paid plan on the payment page, cancels and resumes it, and changes its interval', async () => {
    await driver.open(page, 'Billing', 'Billing', 'billing-trial');
    const plan = page.getByTestId('subscription');
    await expect(plan.textContent()).resolves.toMatch(/Professional \(trialing\)Trial ends/);
    await expect(page.getByTestId('usage').textContent()).resolves.toMatch(/Memories0 of 2,000,000/);
    await page.getByRole('table', { name: 'Plans, prices in USD' }).waitFor();
    await page.getByRole('cell', { name: '$59.00' }).waitFor();

    // A checkout: the dashboard follows the answer's URL to the payment page, which returns to it.
    await page.getByLabel('Billing address country (two letters)').fill('de');
    await page.getByRole('button', { name: 'Choose Professional' }).click();
    await page.getByRole('heading', { level: 1, name: 'Subscribe to Professional' }).waitFor();
    await expect(page.locator('main').textContent()).resolves.toContain('€49.00 per month');
    await page.getByRole('button', { name: 'Subscribe to Professional' }).click();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${web}/app/billing`);
    await driver.screen(page, 'billing-subscribed', 'Billing');
    await expect.poll(() => plan.textContent()).toMatch(/€49.00 per month/);
    await page.getByRole('table', { name: 'Plans, prices in EUR' }).waitFor();

    // Cancelled at the end of the period, then resumed.
    await page.getByRole('button', { name: 'Cancel at the end of the period' }).click();
    await page.getByRole('status').filter({ hasText: 'Professional ends at the end of the period.' }).waitFor();
    await expect.poll(() => plan.textContent()).toMatch(/cancelled: ends at the end of the period/);
    await page.getByRole('button', { name: 'Resume Professional' }).click();
    await page.getByRole('status').filter({ hasText: 'Professional goes on.' }).waitFor();
    await expect.poll(() => plan.textContent()).toMatch(/Renewalrenews/);

    // Yearly now: a change of interval, no second checkout.
    await page.getByLabel('Billing interval').selectOption('year');
    await page.getByRole('button', { name: 'Choose Professional' }).click();
    await page.getByRole('status').filter({ hasText: 'Plan changed to Professional.' }).waitFor();
    await expect.poll(() => plan.textContent()).toMatch(/€490.00 per year/);
    await page.getByRole('table', { name: 'Invoices, newest first' }).waitFor();
    await driver.screen(page, 'billing-yearly', 'Billing');
    expect(driver.consoleErrors).toEqual([]);
  });

  it('opens an investigation, posts to it, starts, cancels and retries runs, and follows one an external agent works', async () => {
    // The external agent's credential: a write key, created in the dashboard.
    await driver.open(page, 'API keys', 'API keys', 'api-keys');
    await page.getByLabel('Key name').fill('oncall bot');
    await page.getByLabel('Scope').selectOption('write');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('secret').textContent())!;
    agentKey = key;
    await page.getByRole('button', { name: 'I have stored it' }).click();

    await driver.open(page, 'Investigations', 'Investigations', 'investigations-empty');
    await page.getByText('Open an investigation').click();
    await page.getByLabel('Title').fill('Checkout latency <b>doubled</b>');
    await page.getByLabel('First message').fill('p99 of /checkout doubled after the 09:35 deploy.');
    await page.getByRole('button', { name: 'Open the investigation' }).click();
    await page.getByRole('heading', { level: 1, name: 'Checkout latency <b>doubled</b>' }).waitFor();
    await page.getByText('p99 of /checkout doubled after the 09:35 deploy.').waitFor();
    await page.getByLabel('New message').fill('The deploy changed the payment client timeout.');
    await page.getByRole('button', { name: 'Post the message' }).click();
    await page.getByText('The deploy changed the payment client timeout.').waitFor();

    // A run for an external agent: queued, cancelled, retried.
    await page.getByLabel('Executor').selectOption('external');
    await page.getByRole('button', { name: 'Start a run' }).click();
    const first = page.locator('article.run').first();
    await expect.poll(() => first.locator('.run-status').textContent()).toBe('queued');
    await first.getByText('Following its events live.').waitFor();
    await first.getByRole('button', { name: /^Cancel run_/ }).click();
    await page.getByRole('status').filter({ hasText: 'Run cancelled.' }).waitFor();
    await expect.poll(() => first.locator('.run-status').textContent()).toBe('cancelled');
    await first.getByRole('button', { name: /^Retry run_/ }).click();
    await page.getByRole('status').filter({ hasText: 'Run retried.' }).waitFor();
    await expect.poll(() => page.locator('article.run').count()).toBe(2);
    await driver.screen(page, 'investigation-runs', 'Checkout latency <b>doubled</b>');

    // The agent claims the retry, records a step and concludes; the page follows it live.
    const api = platform.ctx.config.publicUrls.api;
    const orgs = (await (await fetch(`${api}/organizations`, { headers: { 'x-api-key': key } })).json()) as {
      organizations: { id: string }[];
    };
    const runs = `${api}/organizations/${orgs.organizations[0].id}/runs`;
    const post = (url: string, body: unknown) =>
      fetch(url, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const claim = await post(`${runs}/claim`, { agent_id: 'oncall-bot@host-7', lease_seconds: 120 });
    expect(claim.status).toBe(200);
    const claimed = (await claim.json()) as { run: { id: string }; lease_id: string };
    const step = { lease_id: claimed.lease_id, kind: 'tool_call', name: 'deploy_diff', ok: true, arguments: {}, result: {} };
    expect((await post(`${runs}/${claimed.run.id}/steps`, step)).status).toBeLessThan(300);
    const done = { lease_id: claimed.lease_id, status: 'succeeded', output: 'The 09:35 deploy cut the payment timeout to 2 s.' };
    expect((await post(`${runs}/${claimed.run.id}/complete`, done)).status).toBeLessThan(300);
    const retried = page.getByRole('article', { name: `Run ${claimed.run.id}` });
    await expect.poll(() => retried.locator('.run-status').textContent(), { timeout: 10_000 }).toBe('succeeded');
    await retried.getByText('The 09:35 deploy cut the payment timeout to 2 s.').waitFor();
    await expect(retried.textContent()).resolves.toContain('oncall-bot@host-7');
    await retried.getByRole('button', { name: `Steps of ${claimed.run.id}` }).click();
    await retried.getByText(/deploy_diff: ok/).waitFor();
    await page.getByRole('button', { name: 'Mark resolved' }).click();
    await page.getByRole('status').filter({ hasText: 'Investigation resolved.' }).waitFor();
    await driver.screen(page, 'investigation-done', 'Checkout latency <b>doubled</b>');

    await driver.open(page, 'Investigations', 'Investigations', 'investigations');
    await page.getByRole('cell', { name: 'resolved', exact: true }).waitFor();
    expect(driver.consoleErrors).toEqual([]);
  });

  it('lists and searches entities, and opens one with its relationships both ways and the memories citing them', async () => {
    const api = platform.ctx.config.publicUrls.api;
    const headers = { 'x-api-key': agentKey, 'content-type': 'application/json' };
    const orgs = (await (await fetch(`${api}/organizations`, { headers })).json()) as { organizations: { id: string }[] };
    const org = `${api}/organizations/${orgs.organizations[0].id}`;
    const send = async (url: string, body: unknown) => {
      const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).toBe(201);
    };
    await send(`${org}/memories`, {
      namespace: 'knowledge',
      key: 'arch/checkout',
      title: 'Checkout architecture',
      content: 'Checkout calls payments.',
    });
    await send(`${org}/memories`, {
      namespace: 'knowledge',
      key: 'runbook/bot',
      title: 'Incident bot runbook',
      content: 'The bot probes checkout.',
    });
    const memory = (key: string) => ({ namespace: 'knowledge', key });
    await send(`${org}/graph/relationships`, {
      subject: 'Checkout',
      predicate: 'depends_on',
      object: 'Payments API',
      memory: memory('arch/checkout'),
    });
    await send(`${org}/graph/relationships`, {
      subject: 'Payments API',
      predicate: 'owned_by',
      object: 'Team Payments',
      memory: memory('arch/checkout'),
    });
    await send(`${org}/graph/relationships`, {
      subject: 'Incident bot',
      predicate: 'calls',
      object: 'Checkout',
      memory: memory('runbook/bot'),
    });
    // The same service under another name, to merge.
    await send(`${org}/graph/relationships`, {
      subject: 'Payment svc',
      predicate: 'runs_on',
      object: 'Kubernetes',
      memory: memory('arch/checkout'),
    });

    await driver.open(page, 'Entities', 'Entities', 'entities');
    await page.getByRole('link', { name: 'Team Payments' }).waitFor();
    await page.getByLabel('Name or alias').fill('checkout');
    await page.getByRole('button', { name: 'Find entities' }).click();
    const found = page.getByRole('table', { name: 'Entities matching “checkout”' });
    await found.getByRole('link', { name: 'Checkout', exact: true }).click();
    await driver.screen(page, 'entity', 'Checkout');
    const from = page.getByRole('table', { name: /^Relationships from it/ });
    const to = page.getByRole('table', { name: /^Relationships to it/ });
    await expect(from.textContent()).resolves.toMatch(/depends_onPayments APIknowledge\/arch\/checkout/);
    await expect(to.textContent()).resolves.toMatch(/Incident botcallsknowledge\/runbook\/bot/);
    const citing = page.getByTestId('citing-memories');
    await citing.getByText('Checkout architecture').waitFor();
    await citing.getByText('Incident bot runbook').waitFor();

    // The entity at the other end, and from there onwards.
    await from.getByRole('link', { name: 'Payments API' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payments API' }).waitFor();
    await expect(page.getByRole('table', { name: /^Relationships to it/ }).textContent()).resolves.toContain('Checkout');
    await page
      .getByRole('table', { name: /^Relationships from it/ })
      .getByRole('link', { name: 'Team Payments' })
      .waitFor();
    await driver.screen(page, 'entity-next', 'Payments API');

    // The path finder: back through Checkout to the bot that calls it.
    await page.getByLabel('To (name, alias or id)').fill('Incident bot');
    await page.getByRole('button', { name: 'Find paths' }).click();
    await page.getByRole('status').filter({ hasText: '1 path(s) from Payments API to Incident bot, shortest first.' }).waitFor();
    const paths = page.getByTestId('entity-paths');
    await expect(paths.textContent()).resolves.toBe('Payments API ← depends_on — Checkout ← calls — Incident bot');
    await driver.screen(page, 'entity-paths', 'Payments API');

    // Edited at its version: aliases and a description (markup shown as text).
    await page.getByText('Edit the entity').click();
    // An alias that is another entity's name: the API's 409, saying to merge instead.
    await page.getByLabel('Also known as (comma-separated)').fill('Payments');
    await page.getByRole('button', { name: 'Save the entity' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Conflict \(409\).*merge them instead/);
    await page.getByLabel('Also known as (comma-separated)').fill('Payment gateway, PAPI');
    await page.getByLabel('Description').fill('The payment gateway <b>API</b>');
    await page.getByLabel('Kind').selectOption('service');
    await page.getByRole('button', { name: 'Save the entity' }).click();
    await page.getByRole('status').filter({ hasText: 'Payments API saved.' }).waitFor();
    const facts = page.locator('.facts');
    await expect
      .poll(() => facts.textContent())
      .toMatch(/^KindserviceAlso known asPayment gateway, PAPIDescriptionThe payment gateway <b>API<\/b>Updated/);
    await expect(facts.locator('b').count()).resolves.toBe(0);

    // Another name of the same service, merged in (confirmed): its relationship moves here.
    await page.getByText('Merge another entity into this one').click();
    await page.getByLabel("The other entity's name or alias").fill('Payment svc');
    await page.getByRole('button', { name: 'Find it' }).click();
    await page.getByRole('button', { name: 'Merge Payment svc into Payments API' }).click();
    await page.getByRole('status').filter({ hasText: 'Payment svc merged into Payments API: 1 relationship(s) moved.' }).waitFor();
    expect(driver.dialogs.at(-1)).toMatch(/^Merge Payment svc into Payments API\?/);
    await expect.poll(() => page.getByRole('table', { name: /^Relationships from it/ }).textContent()).toContain('runs_onKubernetes');
    await expect.poll(() => facts.textContent()).toContain('Payment svc');
    await driver.screen(page, 'entity-merged', 'Payments API');
    expect(driver.consoleErrors).toEqual([]);
  });
});
