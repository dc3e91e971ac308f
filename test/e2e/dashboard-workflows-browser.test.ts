// The dashboard's screens for what the Agents API gained since its automation areas, in headless
// Chromium against the real platform (the built-in playbook runner, a seeding source served here,
// a webhook receiver that verifies signatures): an alert rule that runs a playbook and notifies an
// address and an endpoint, changed in place; alerts filtered by severity and source; an
// investigation's linked alerts, attachments and the memories its run wrote (each opening on the
// Memories screen); scheduled jobs that start a playbook run and, changed, a seeding run; a
// playbook and a dataset's cases exported as files; a dataset renamed; an evaluation with chosen
// evaluators and results per case; relationships asserted and retracted by hand, and what a
// failure affects; runs in the usage. Names with markup are shown as text; destructive actions ask
// first; each screen passes axe-core with no serious violation and no console error; screenshots go
// to test-results/dashboard-workflows/.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AlertFormat } from '../../gen/mindgate/agents/v1/alerts_pb.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { dashboardDriver, signUpThroughDashboard, type DashboardDriver } from '../support/dashboard-browser.ts';
import { newTestUser, startOAuthTestPlatform } from '../support/oauth-client.ts';
import { findTool, type TestPlatform } from '../support/platform.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const chromiumPath = findTool('chromium', ['/usr/bin/chromium']);

/** A playbook whose one step writes what the alert (or the job) said to the Brain. */
const PLAYBOOK = {
  name: 'Checkout <b>triage</b>',
  description: 'Notes the alert in the Brain.',
  instructions: 'Record the alert.',
  inputs: [
    { name: 'labels', type: 'object', required: true },
    { name: 'note', type: 'string' },
  ],
  tools: [],
  namespaces: ['episodes'],
  steps: [
    {
      id: 'noted',
      kind: 'brain_write',
      namespace: 'episodes',
      key: 'alerts/{{ inputs.labels.service }}',
      content: '{{ inputs.note }} on {{ inputs.labels.service }}',
    },
  ],
};

describe.skipIf(!chromiumPath)('the dashboard workflows in a browser', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let driver: DashboardDriver;
  let receiver: WebhookReceiver;
  let runbook: http.Server;
  let runbookUrl: string;
  let page: Page;
  let web: string;
  let organizationId: string;

  beforeAll(async () => {
    runbook = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/markdown' });
      res.end('# Payments runbook\n\nWhen card authorisations fail, restart the card-vault pods one at a time.\n');
    });
    await new Promise<void>((resolve) => runbook.listen(0, '127.0.0.1', resolve));
    runbookUrl = `http://127.0.0.1:${(runbook.address() as AddressInfo).port}/runbooks/payments.md`;
    receiver = await startWebhookReceiver();
    platform = await startOAuthTestPlatform({
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      SEEDING_URL_HOSTS: '127.0.0.1',
      SEEDING_ALLOW_PRIVATE_URLS: 'true',
      SEEDING_POLL_MS: '50',
    });
    web = platform.ctx.config.publicUrls.web;
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    driver = dashboardDriver({
      authUrl: platform.ctx.config.publicUrls.auth,
      shots: path.resolve('test-results/dashboard-workflows'),
      // The refusals the test provokes on purpose.
      expected: /Failed to load resource: the server responded with a status of 422/,
    });
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, acceptDownloads: true });
    page = await driver.newPage(context);
    const orgs = new Set<string>();
    page.on('request', (r) => {
      const id = /\/organizations\/(org_[A-Za-z0-9]+)/.exec(r.url())?.[1];
      if (id) orgs.add(id);
    });
    await signUpThroughDashboard(page, web, newTestUser('workflows'), 'Wren Workflows', 'Workflow Labs');
    await driver.screen(page, 'overview', 'Overview');
    organizationId = [...orgs][0];
  }, 180_000);

  afterEach(async (test) => {
    // The screen as it was when a step failed, to see why.
    if (test.task.result?.state === 'fail')
      await page.screenshot({ path: path.resolve('test-results/dashboard-workflows/failed.png'), fullPage: true });
  });

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await receiver?.close();
    await new Promise((resolve) => runbook?.close(resolve));
  });

  /** Clicks `button` and answers the text of the file the page saves. */
  async function downloaded(button: ReturnType<Page['getByRole']>): Promise<{ name: string; text: string }> {
    const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
    return { name: download.suggestedFilename(), text: fs.readFileSync((await download.path())!, 'utf8') };
  }

  it('adds a rule that runs a playbook and notifies; an alert opens an investigation with the alert, attachments and memories', async () => {
    await driver.open(page, 'Playbooks', 'Playbooks', 'playbooks');
    await page.getByText('Import a playbook document').click();
    await page.getByLabel('Format').selectOption('json');
    await page.getByLabel('Document', { exact: true }).fill(JSON.stringify(PLAYBOOK));
    await page.getByLabel('Publish the imported version').check();
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Playbook Checkout <b>triage</b> imported.' }).waitFor();

    const alerts = platform.ctx.clients.alerts;
    const source = async (name: string) => {
      const created = await alerts.createAlertSource({ organizationId, name, format: AlertFormat.GENERIC, createdBy: 'usr_setup' });
      return { id: created.source!.sourceId, secret: created.secret };
    };
    const prod = await source('Prod');
    const staging = await source('Staging');
    const hook = await platform.ctx.clients.webhooks.createWebhookEndpoint({
      organizationId,
      url: receiver.url,
      description: 'Ops hook',
      eventTypes: ['job.backed_off'],
      createdBy: 'usr_setup',
    });
    receiver.secrets = [hook.secret];

    await driver.open(page, 'Alert rules', 'Alert rules', 'alert-rules-empty');
    await page.getByText('Add a rule').click();
    const add = page.getByRole('form', { name: 'Add rule' });
    await add.getByLabel('Rule name').fill('Checkout to triage');
    await add.getByLabel(/^Severities/).fill('critical');
    await add.getByLabel(/^Label matchers/).fill('service=checkout');
    await add
      .getByRole('group', { name: /^Sources/ })
      .getByLabel('Prod')
      .check();
    await add.getByLabel('runs a playbook').check();
    await add.getByRole('combobox', { name: 'Playbook', exact: true }).selectOption({ label: 'Checkout <b>triage</b>' });
    await add.getByLabel(/^note \(string\)/).fill('Paged <i>from</i> the rule');
    await add.getByLabel(/^E-mail when/).fill('oncall@example.com');
    await driver.screen(page, 'alert-rule-form', 'Alert rules');
    await add
      .getByRole('group', { name: 'Webhook endpoints told of it' })
      .getByLabel(/Ops hook/)
      .check();
    await add.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('status').filter({ hasText: 'Rule Checkout to triage added.' }).waitFor();
    const row = page.getByRole('row', { name: /^Checkout to triage/ });
    await expect
      .poll(() => row.textContent())
      .toBe(
        'Checkout to triagecriticalservice=checkoutProdenabledplaybook Checkout <b>triage</b>, the published version with {"note":"Paged <i>from</i> the rule"}' +
          `oncall@example.com, ${receiver.url}Change Checkout to triage Disable Checkout to triage Delete Checkout to triage`,
      );
    await driver.screen(page, 'alert-rules', 'Alert rules');

    const send = (to: { id: string; secret: string }, alert: object) =>
      fetch(`${platform.ctx.config.publicUrls.api}/alert-sources/${to.id}/alerts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${to.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(alert),
      }).then((r) => r.json() as Promise<{ opened: number; investigations_opened: number }>);
    await expect(
      send(prod, {
        title: 'Checkout <script>x</script> errors',
        severity: 'critical',
        labels: { service: 'checkout' },
        fingerprint: 'fp-c',
      }),
    ).resolves.toMatchObject({ opened: 1, investigations_opened: 1 });
    await expect(
      send(staging, { title: 'Search slow', severity: 'warning', labels: { service: 'search' }, fingerprint: 'fp-s' }),
    ).resolves.toMatchObject({ opened: 1, investigations_opened: 0 });

    // Filtered by severity, then by source.
    await driver.open(page, 'Alerts', 'Alerts', 'alerts');
    const list = page.getByRole('table', { name: 'Alert events, newest first' });
    await expect.poll(() => list.locator('tbody tr').count()).toBe(2);
    await page.getByLabel('Severity').fill('warning');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await expect
      .poll(() => list.locator('tbody tr').allTextContents())
      .toEqual([expect.stringMatching(/^Search slowStagingwarningfiring1/)]);
    await page.getByLabel('Severity').fill('');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.getByLabel('Source').selectOption({ label: 'Prod' });
    await expect
      .poll(() => list.locator('tbody tr').allTextContents())
      .toEqual([expect.stringMatching(/^Checkout <script>x<\/script> errorsProdcriticalfiring1/)]);
    await driver.screen(page, 'alerts-filtered', 'Alerts');

    // The investigation: the alert linked, the playbook's run done, the memory it wrote.
    await list.getByRole('link', { name: 'Investigation of Checkout <script>x</script> errors' }).click();
    const title = /Checkout <script>x<\/script> errors/;
    await page.getByRole('heading', { level: 1, name: title }).waitFor();
    await page
      .getByRole('table', { name: 'Alerts of this investigation, newest first' })
      .getByRole('link', { name: 'Checkout <script>x</script> errors' })
      .waitFor();
    await expect.poll(() => page.locator('.run-status').first().textContent(), { timeout: 60_000 }).toBe('succeeded');
    const memories = page.getByTestId('thread-memories');
    await memories.getByRole('link', { name: 'episodes/alerts/checkout' }).waitFor();
    await expect(memories.textContent()).resolves.toMatch(/^episodes\/alerts\/checkout version 1, by run run_\w+ \(step 0\)/);

    // A message with attachments: a URI the API refuses, then a link and a reference.
    await page.getByLabel('New message').fill('See the deploy log.');
    await page.getByRole('button', { name: 'Add an attachment' }).click();
    await page.getByLabel('URI of attachment 1').fill('javascript:alert(1)');
    await page.getByLabel('Media type of attachment 1').fill('text/plain');
    await page.getByRole('button', { name: 'Post the message' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\(422\).*body\.attachments\.0\.uri/);
    await page.getByLabel('URI of attachment 1').fill('https://logs.example.com/deploys/42');
    await page.getByLabel('Title of attachment 1').fill('Deploy <b>42</b> log');
    await page.getByLabel('Size in bytes of attachment 1 (if known)').fill('48213');
    await page.getByRole('button', { name: 'Add an attachment' }).click();
    await page.getByLabel('URI of attachment 2').fill('s3://ops-logs/deploys/42.log');
    await page.getByLabel('Media type of attachment 2').fill('text/plain');
    await page.getByRole('button', { name: 'Post the message' }).click();
    await page.getByRole('status').filter({ hasText: 'Message posted.' }).waitFor();
    const attached = page.getByRole('list', { name: 'Attachments' });
    await expect(attached.getByRole('link', { name: 'Deploy <b>42</b> log' }).getAttribute('href')).resolves.toBe(
      'https://logs.example.com/deploys/42',
    );
    await expect(attached.locator('li').allTextContents()).resolves.toEqual([
      'Deploy <b>42</b> log (text/plain, 47.1 KB) https://logs.example.com/deploys/42',
      's3://ops-logs/deploys/42.log (text/plain)',
    ]);
    await expect(attached.getByRole('link').count()).resolves.toBe(1);
    await expect(page.locator('main b, main script').count()).resolves.toBe(0);
    await driver.screen(page, 'investigation-linked', title);

    // The memory opens on the Memories screen, its content (with markup) as text.
    await memories.getByRole('link', { name: 'episodes/alerts/checkout' }).click();
    await driver.screen(page, 'memory-one', 'Memory episodes/alerts/checkout');
    await page.locator('.memory .content').filter({ hasText: 'Paged <i>from</i> the rule on checkout' }).waitFor();
    await expect(page.locator('main i').count()).resolves.toBe(0);

    // Told: the endpoint (signed) and the address.
    const told = () => receiver.received.filter((w) => w.verified).map((w) => w.verified!.type);
    await expect
      .poll(told, { timeout: 30_000 })
      .toEqual(expect.arrayContaining(['alert.investigation_opened', 'alert.investigation_finished']));
    const outbox = path.join(platform.ctx.config.storage.dataDir, 'outbox.jsonl');
    await expect
      .poll(() => (fs.existsSync(outbox) ? fs.readFileSync(outbox, 'utf8') : ''), { timeout: 30_000 })
      .toMatch(/"to":"oncall@example.com"/);

    // Changed in place: another severity, both sources, the version pinned.
    await driver.open(page, 'Alert rules', 'Alert rules', 'alert-rules-before-change');
    await page.getByRole('button', { name: 'Change Checkout to triage' }).click();
    const change = page.getByRole('form', { name: 'Save the rule' });
    await expect(change.getByLabel(/^Severities/).inputValue()).resolves.toBe('critical');
    await change.getByLabel(/^Severities/).fill('critical, page');
    await change
      .getByRole('group', { name: /^Sources/ })
      .getByLabel('Staging')
      .check();
    await change.getByRole('combobox', { name: 'Version', exact: true }).selectOption({ label: 'version 1 only' });
    await expect.poll(() => change.getByLabel(/^note \(string\)/).inputValue()).toBe('Paged <i>from</i> the rule');
    await driver.screen(page, 'alert-rule-change', 'Alert rules');
    await change.getByRole('button', { name: 'Save the rule' }).click();
    await page.getByRole('status').filter({ hasText: 'Rule Checkout to triage saved.' }).waitFor();
    await expect
      .poll(() => row.textContent())
      .toMatch(/^Checkout to triagecritical, pageservice=checkoutProd, Stagingenabledplaybook Checkout <b>triage<\/b>, version 1 with/);
    expect(driver.consoleErrors).toEqual([]);
  });

  it('schedules a job that runs a playbook, then changes it to seed the Brain from a page', async () => {
    await driver.open(page, 'Scheduled jobs', 'Scheduled jobs', 'jobs-empty');
    await page.getByText('Schedule a job').click();
    await page.getByLabel('Name', { exact: true }).fill('Payments <b>check</b>');
    await page.getByRole('textbox', { name: /^Schedule \(cron/ }).fill('0 * * * *');
    await page.getByLabel('Each occurrence starts').selectOption('playbook');
    await page.getByRole('combobox', { name: 'Playbook', exact: true }).selectOption({ label: 'Checkout <b>triage</b>' });
    await page.getByLabel(/^labels \(object, required\)/).fill('{"service": "payments"}');
    await page.getByLabel(/^note \(string\)/).fill('Hourly');
    await driver.screen(page, 'job-playbook-form', 'Scheduled jobs');
    await page.getByRole('button', { name: 'Schedule the job' }).click();
    const title = 'Job Payments <b>check</b>';
    await driver.screen(page, 'job-playbook', title);
    await expect
      .poll(() => page.locator('.facts').textContent())
      .toMatch(
        /Startsa run of the playbook Checkout <b>triage<\/b>, the version published when it fires with \{"labels":\{"service":"payments"\},"note":"Hourly"\}/,
      );
    await page.getByRole('button', { name: 'Fire it now' }).click();
    await page.getByRole('status').filter({ hasText: 'Fired: a run is queued.' }).waitFor();
    await page.getByRole('link', { name: 'Open the investigation it started' }).click();
    await page.getByRole('heading', { level: 1, name: /Checkout <b>triage<\/b>/ }).waitFor();
    await page.getByTestId('thread-memories').getByRole('link', { name: 'episodes/alerts/payments' }).waitFor({ timeout: 60_000 });
    await driver.screen(page, 'job-investigation', /Checkout <b>triage<\/b>/);
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: title }).waitFor();

    // Changed: its name, what it starts (a seeding run of a page), and missed occurrences run once.
    await page.getByText('Change the job').click();
    await page.getByLabel('Name', { exact: true }).fill('Payments runbook');
    await page.getByLabel('Occurrences missed while no replica ran').selectOption('run_once');
    await page.getByLabel('Each occurrence starts').selectOption('seeding');
    await page.getByLabel(/^Page to seed from/).fill(runbookUrl);
    await page.getByLabel('Key prefix').fill('runbooks/');
    await page.getByLabel(/^Tags/).fill('runbook, payments');
    await page.getByRole('button', { name: 'Save the job' }).click();
    await page.getByRole('status').filter({ hasText: 'Job saved.' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Job Payments runbook' }).waitFor();
    await expect
      .poll(() => page.locator('.facts').textContent())
      .toMatch(
        /\(missed occurrences: run once\).*Startsa seeding run of the Brain's knowledge from .*\/runbooks\/payments\.md \(keys under runbooks\/\), tagged runbook, payments/,
      );
    await page.getByRole('button', { name: 'Fire it now' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Fired/ })
      .waitFor();
    const executions = page.getByRole('table', { name: 'Executions, newest first' });
    await expect.poll(() => executions.locator('tbody tr').first().textContent()).toMatch(/manualsucceededseeding run \w+/);
    await driver.screen(page, 'job-seeding', 'Job Payments runbook');
    expect(driver.consoleErrors).toEqual([]);
  });

  it('exports a playbook and a dataset as files, renames the dataset, and evaluates it with the evaluators chosen', async () => {
    await driver.open(page, 'Playbooks', 'Playbooks', 'playbooks-list');
    await page.getByRole('link', { name: 'Checkout <b>triage</b>' }).click();
    await driver.screen(page, 'playbook', 'Playbook Checkout <b>triage</b>');
    await page.getByLabel('File format').selectOption('yaml');
    const yaml = await downloaded(page.getByRole('button', { name: 'Export as a file' }));
    expect(yaml.name).toMatch(/^pbk_\w+-v1\.yaml$/);
    expect(yaml.text).toMatch(/^name: Checkout <b>triage<\/b>$/m);
    expect(yaml.text).toMatch(/kind: brain_write/);
    await page.getByLabel('File format').selectOption('json');
    const json = await downloaded(page.getByRole('button', { name: 'Export as a file' }));
    expect(JSON.parse(json.text)).toMatchObject({ name: PLAYBOOK.name, steps: PLAYBOOK.steps });
    await page
      .getByRole('status')
      .filter({ hasText: /^Saved pbk_\w+-v1\.json \(\d+ bytes\)\.$/ })
      .waitFor();

    await platform.ctx.clients.brain.putMemory({
      organizationId,
      namespace: Namespace.KNOWLEDGE,
      key: 'services/checkout/db-pool',
      title: 'Checkout database pool',
      content: 'The checkout database connection pool holds 50 connections.',
      allowDuplicate: true,
    });
    await driver.open(page, 'Evaluation datasets', 'Evaluation datasets', 'evaluation-datasets');
    await page.getByLabel('Dataset name').fill('Ops <i>questions</i>');
    await page.getByRole('button', { name: 'Create dataset' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dataset Ops <i>questions</i>' }).waitFor();
    await page.getByText('Import cases (JSON Lines)').click();
    const line = {
      input: 'How many connections does the checkout pool hold?',
      expected_memories: [{ namespace: 'knowledge', key: 'services/checkout/db-pool' }],
    };
    await page.getByLabel('Cases, one JSON object a line').fill(JSON.stringify(line));
    await page.getByRole('button', { name: 'Import the cases' }).click();
    await page.getByRole('status').filter({ hasText: '1 case(s) imported' }).waitFor();

    await page.getByText('Rename the dataset').click();
    await page.getByLabel('New name').fill('Ops questions, <b>second</b>');
    await page.getByLabel('New description').fill('Asked by the on-call.');
    await page.getByRole('button', { name: 'Save the name' }).click();
    const renamed = 'Dataset Ops questions, <b>second</b>';
    await page.getByRole('heading', { level: 1, name: renamed }).waitFor();
    await page.getByText('Asked by the on-call. 1 case(s).').waitFor();
    const cases = await downloaded(page.getByRole('button', { name: 'Export the cases (JSON Lines)' }));
    expect(cases.name).toMatch(/^evd_\w+\.jsonl$/);
    expect(cases.text).toBe(`${JSON.stringify(line)}\n`);
    await driver.screen(page, 'evaluation-dataset-renamed', renamed);

    await page.getByText('Start an evaluation').click();
    await page.getByLabel('Results per case').fill('3');
    for (const name of ['exact', 'contains', 'regex']) await page.getByRole('checkbox', { name: new RegExp(`^${name}\\b`) }).uncheck();
    await page.getByLabel('Evaluation label').fill('retrieval only');
    await driver.screen(page, 'evaluation-start', renamed);
    await page.getByRole('button', { name: "Evaluate the Brain's search" }).click();
    await page.getByRole('heading', { level: 1, name: 'Evaluation retrieval only' }).waitFor();
    await expect.poll(() => page.getByTestId('evaluation-status').textContent(), { timeout: 60_000 }).toBe('succeeded');
    await expect(page.locator('.facts').textContent()).resolves.toMatch(
      /EvaluatedThe Brain's search, 3 results per caseEvaluatorsretrieval/i,
    );
    await driver.screen(page, 'evaluation-chosen', 'Evaluation retrieval only');
    expect(driver.consoleErrors).toEqual([]);
  });

  it("asserts and retracts relationships by hand, shows what a failure affects, and counts the month's runs", async () => {
    const put = await platform.ctx.clients.brain.putMemory({
      organizationId,
      namespace: Namespace.KNOWLEDGE,
      key: 'services/checkout',
      title: 'Checkout',
      content: 'Checkout keeps its orders in the payments database.',
      allowDuplicate: true,
    });
    await platform.ctx.clients.entityGraph.assertRelationship({
      organizationId,
      subject: 'Checkout',
      predicate: 'stores_data_in',
      object: 'Payments DB',
      memoryNamespace: 'knowledge',
      memoryKey: 'services/checkout',
      memoryVersion: put.memory!.version,
      memoryTitle: 'Checkout',
    });
    await driver.open(page, 'Entities', 'Entities', 'entities');
    await page.getByRole('link', { name: 'Checkout', exact: true }).click();
    await driver.screen(page, 'entity', 'Checkout');

    // By hand: a memory that does not exist is the API's 422; then one that does.
    await page.getByText('Relate it to another entity').click();
    await page.getByLabel('Which way').selectOption({ label: 'the other → Checkout' });
    await page.getByLabel(/^Predicate/).fill('depends_on');
    await page.getByRole('textbox', { name: /^The other entity \(name/ }).fill('Checkout <b>web</b>');
    await page.getByLabel('Key of the memory that states it').fill('services/nowhere');
    await page.getByRole('button', { name: 'Assert the relationship' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\(422\).*body\.memory/);
    await page.getByLabel('Key of the memory that states it').fill('services/checkout');
    await page.getByRole('button', { name: 'Assert the relationship' }).click();
    await page.getByRole('status').filter({ hasText: 'Related: Checkout <b>web</b> depends_on Checkout.' }).waitFor();
    const to = page.getByRole('table', { name: /^Relationships to it/ });
    await expect.poll(() => to.textContent()).toMatch(/Checkout <b>web<\/b>depends_onknowledge\/services\/checkout/);
    await driver.screen(page, 'entity-related', 'Checkout');

    // What breaks if the database fails: Checkout, then what depends on it.
    await page
      .getByRole('table', { name: /^Relationships from it/ })
      .getByRole('link', { name: 'Payments DB' })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Payments DB' }).waitFor();
    await page.getByRole('button', { name: 'Show the affected entities' }).click();
    const affected = page.getByTestId('affected-entities');
    await expect
      .poll(() => affected.locator('tbody tr').allTextContents())
      .toEqual([
        'Checkout1Checkout stores_data_in Payments DB',
        'Checkout <b>web</b>2Checkout stores_data_in Payments DB; Checkout <b>web</b> depends_on Checkout',
      ]);
    await page
      .getByRole('status')
      .filter({ hasText: /^2 entities, nearest first/ })
      .waitFor();
    await driver.screen(page, 'entity-affected', 'Payments DB');
    await page.getByLabel('Show').selectOption('dependencies');
    await page.getByRole('button', { name: 'Show the affected entities' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Nothing found within 5 hop/ })
      .waitFor();

    // Retracted (confirmed): gone from Checkout's relationships.
    await page.getByLabel('Show').selectOption('impact');
    await page.getByRole('button', { name: 'Show the affected entities' }).click();
    await affected.getByRole('link', { name: 'Checkout', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Checkout' }).waitFor();
    await page.getByRole('button', { name: 'Retract Checkout <b>web</b> depends_on Checkout' }).click();
    await page.getByRole('status').filter({ hasText: 'Retracted: Checkout <b>web</b> depends_on Checkout.' }).waitFor();
    expect(driver.dialogs.at(-1)).toMatch(/^Retract “Checkout <b>web<\/b> depends_on Checkout”\?/);
    await expect.poll(() => to.textContent()).not.toMatch(/web/);
    await expect(page.locator('main b').count()).resolves.toBe(0);

    // The runs the alert and the job queued this month, against the plan.
    await driver.open(page, 'Overview', 'Overview', 'overview-runs');
    await expect(page.locator('.facts').nth(1).textContent()).resolves.toMatch(/Runs since .+?[1-9]\d* of \d+/);
    await driver.open(page, 'Billing', 'Billing', 'billing-runs');
    await expect(page.getByTestId('usage').textContent()).resolves.toMatch(/Runs queued this month[1-9]\d* of [\d,]+/);
    expect(driver.consoleErrors).toEqual([]);
  });
});
