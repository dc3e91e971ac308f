// The dashboard's automation areas in headless Chromium against the real platform: playbooks
// (written with the keyboard alone, checked, versioned, published, rolled back, run), scheduled
// jobs (a refused schedule's 422, fired now, paused, resumed, rescheduled, deleted), alerts (a
// rule, a source whose secret is shown once and receives an alert that opens an investigation,
// acknowledged, snoozed and resolved; the secret replaced), and evaluation (a dataset built from
// a form and JSON Lines, two evaluations followed to the end and compared). Names with markup are
// shown as text; destructive actions ask first; each screen passes axe-core with no serious
// violation and no console error; screenshots go to test-results/dashboard-automation/.
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { dashboardDriver, signUpThroughDashboard, type DashboardDriver } from '../support/dashboard-browser.ts';
import { newTestUser, startOAuthTestPlatform } from '../support/oauth-client.ts';
import { findTool, type TestPlatform } from '../support/platform.ts';

const chromiumPath = findTool('chromium', ['/usr/bin/chromium']);

/** The focused element: its tag and what a screen reader would call it (label, text or aria-label). */
async function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement & { labels?: NodeListOf<HTMLLabelElement> };
    const name = el.getAttribute('aria-label') ?? el.labels?.[0]?.textContent ?? el.textContent ?? '';
    return `${el.tagName.toLowerCase()} ${name.trim().replace(/\s+/g, ' ')}`;
  });
}

/** Presses Tab until `target` has the focus (at most `limit` times), answering how many it took. */
async function tabTo(page: Page, target: RegExp, limit = 40): Promise<number> {
  for (let i = 1; i <= limit; i++) {
    await page.keyboard.press('Tab');
    if (target.test(await focused(page))) return i;
  }
  throw new Error(`Tab never reached ${target}; the focus is on ${await focused(page)}`);
}

describe.skipIf(!chromiumPath)('the automation areas of the dashboard in a browser', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let driver: DashboardDriver;
  let page: Page;
  let web: string;
  let organizationId: string;

  beforeAll(async () => {
    platform = await startOAuthTestPlatform();
    web = platform.ctx.config.publicUrls.web;
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    driver = dashboardDriver({
      authUrl: platform.ctx.config.publicUrls.auth,
      shots: path.resolve('test-results/dashboard-automation'),
      // The refused schedule the test sends on purpose.
      expected: /Failed to load resource: the server responded with a status of 422/,
    });
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await driver.newPage(context);
    const orgs = new Set<string>();
    page.on('request', (r) => {
      const id = /\/organizations\/(org_[A-Za-z0-9]+)/.exec(r.url())?.[1];
      if (id) orgs.add(id);
    });
    await signUpThroughDashboard(page, web, newTestUser('automation'), 'Ada Automation', 'Automation Labs');
    await driver.screen(page, 'overview', 'Overview');
    organizationId = [...orgs][0];
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it('writes a playbook with the keyboard, checks, versions, publishes, rolls back and runs it', async () => {
    await driver.open(page, 'Playbooks', 'Playbooks', 'playbooks-empty');
    // Keyboard only: the skip link first, then into the page, the form, and Enter to submit.
    // From the top of the page (the header's brand, clicked): back one stop is the skip link.
    await page.locator('header .brand').click();
    await page.keyboard.press('Shift+Tab');
    expect(await focused(page)).toBe('a Skip to content');
    await page.keyboard.press('Enter');
    // Past the navigation: the next stop is the page's first control.
    expect(await tabTo(page, /^summary Write a playbook/)).toBe(1);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('input Name');
    await page.keyboard.type('Checkout latency <i>triage</i>');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('input Description');
    await page.keyboard.type('When checkout p99 rises.');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('textarea Instructions');
    await page.keyboard.type('Find the deploys of checkout in the last hour and what the Brain knows about them.');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('input Publish it at once');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('button Create playbook');
    await page.keyboard.press('Enter');
    const title = 'Playbook Checkout latency <i>triage</i>';
    await driver.screen(page, 'playbook', title);
    await expect(page.locator('main i').count()).resolves.toBe(0);
    await expect(page.locator('.facts').textContent()).resolves.toMatch(/Published version1, since/);

    // A document the service refuses: every problem, at its place.
    await page.getByText('Change the document').click();
    const editor = page.getByLabel('Document (JSON)');
    const document = {
      name: 'Checkout latency <i>triage</i>',
      description: 'When checkout p99 rises.',
      instructions: 'Look at the deploys of {{ inputs.service }}.',
      inputs: [{ name: 'service', type: 'string', required: true }],
      steps: [{ id: 'deploys', kind: 'tool_call', server: 'deploys', tool: 'list_deploys', arguments: {} }],
    };
    await editor.fill(JSON.stringify(document));
    await page.getByRole('button', { name: 'Check the document' }).click();
    const problems = page.getByRole('alert').filter({ hasText: 'The document has' });
    await expect.poll(() => problems.textContent()).toMatch(/\/steps\/0/);
    await driver.screen(page, 'playbook-problems', title);
    // Fixed (no steps): saved as version 2, not published.
    const { steps: _, ...fixed } = document;
    await editor.fill(JSON.stringify(fixed));
    await page.getByRole('button', { name: 'Check the document' }).click();
    await page.getByRole('status').filter({ hasText: 'The document is valid.' }).waitFor();
    await page.getByRole('button', { name: 'Save as a new version' }).click();
    await page.getByRole('status').filter({ hasText: 'Version 2 saved.' }).waitFor();
    // What was saved is the member's text (checking once reloaded the playbook, which put the
    // stored document back under the member's edits).
    await expect.poll(() => page.locator('p.content').textContent()).toBe(document.instructions);
    const versions = page.getByRole('table', { name: /^Versions of/ });
    await expect.poll(() => versions.locator('tbody tr').count()).toBe(2);

    // Published, then rolled back (confirmed) to version 1.
    await page.getByRole('button', { name: 'Publish version 2' }).click();
    await page.getByRole('status').filter({ hasText: 'Version 2 published.' }).waitFor();
    await page.getByRole('button', { name: 'Roll back to version 1' }).click();
    await page.getByRole('status').filter({ hasText: 'Rolled back to version 1.' }).waitFor();
    expect(driver.dialogs.at(-1)).toBe('Roll Checkout latency <i>triage</i> back to version 1? New runs use it from now on.');
    await expect.poll(() => page.locator('.facts').textContent()).toMatch(/Published version1, since/);
    await driver.screen(page, 'playbook-versions', title);

    // A run of version 1 (no inputs), by an external agent: it opens an investigation.
    await page.getByLabel('Investigation title').fill('Triage <b>now</b>');
    await page.getByLabel('Runs it').selectOption('external');
    await page.getByRole('button', { name: 'Run the playbook' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Run run_\w+ of version 1 queued\.$/ })
      .waitFor();
    await driver.screen(page, 'playbook-run', title);
    await page.getByRole('link', { name: 'Open the investigation' }).click();
    await driver.screen(page, 'playbook-investigation', 'Triage <b>now</b>');

    await driver.open(page, 'Playbooks', 'Playbooks', 'playbooks');
    const cells = page.getByRole('row', { name: /Checkout latency <i>triage<\/i>/ }).getByRole('cell');
    await expect(cells.allTextContents()).resolves.toEqual([
      'Checkout latency <i>triage</i> When checkout p99 rises.',
      '2',
      '1',
      expect.any(String),
    ]);
    expect(driver.consoleErrors).toEqual([]);
  });

  it('schedules a job (its refused cron shown as the 422), fires it now, pauses, resumes, reschedules and deletes it', async () => {
    await driver.open(page, 'Scheduled jobs', 'Scheduled jobs', 'jobs-empty');
    await page.getByText('Schedule a job').click();
    await page.getByLabel('Name').fill('Nightly <b>check</b>');
    await page.getByRole('textbox', { name: /^Schedule \(cron/ }).fill('every night');
    await page.getByLabel(/^Time zone/).fill('Europe/Berlin');
    await page.getByLabel(/^Investigation title/).fill('Nightly check {occurrence}');
    await page.getByLabel('First message').fill('Did anything fail overnight?');
    await page.getByLabel('Runs it').selectOption('external');
    await page.getByRole('button', { name: 'Schedule the job' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\(422\).*body\.schedule/);
    await driver.screen(page, 'jobs-refused', 'Scheduled jobs');
    await page.getByRole('textbox', { name: /^Schedule \(cron/ }).fill('30 2 * * *');
    await page.getByRole('button', { name: 'Schedule the job' }).click();
    const title = 'Job Nightly <b>check</b>';
    await driver.screen(page, 'job', title);
    await expect(page.locator('.facts').textContent()).resolves.toMatch(/30 2 \* \* \* in Europe\/Berlin.*Stateactive/);

    await page.getByRole('button', { name: 'Fire it now' }).click();
    await page.getByRole('status').filter({ hasText: 'Fired: a run is queued.' }).waitFor();
    const executions = page.getByRole('table', { name: 'Executions, newest first' });
    await expect.poll(() => executions.locator('tbody tr').first().textContent()).toMatch(/manualsucceeded/);
    await page.getByRole('button', { name: 'Pause the job' }).click();
    await page.getByRole('status').filter({ hasText: 'Job paused.' }).waitFor();
    await expect.poll(() => page.locator('.facts').textContent()).toMatch(/Statepaused/);
    await page.getByRole('button', { name: 'Resume the job' }).click();
    await page.getByRole('status').filter({ hasText: 'Job resumed.' }).waitFor();
    await expect.poll(() => page.locator('.facts').textContent()).toMatch(/Stateactive/);
    await page.getByText('Change the job').click();
    await page.getByRole('textbox', { name: /^Schedule \(cron/ }).fill('0 6 * * 1-5');
    await page.getByRole('button', { name: 'Save the job' }).click();
    await page.getByRole('status').filter({ hasText: 'Job saved.' }).waitFor();
    await expect.poll(() => page.locator('.facts').textContent()).toContain('0 6 * * 1-5');
    await driver.screen(page, 'job-executions', title);
    await executions.getByRole('link', { name: /^Investigation of exe_/ }).click();
    await page.getByRole('heading', { level: 1, name: /^Nightly check / }).waitFor();
    await page.goBack();
    await page.getByRole('button', { name: 'Delete the job' }).click();
    await page.getByRole('heading', { level: 1, name: 'Scheduled jobs' }).waitFor();
    expect(driver.dialogs.at(-1)).toBe('Delete the job Nightly <b>check</b>? It fires no more; the investigations it opened stay.');
    await page.getByText('No scheduled jobs yet.').waitFor();
    expect(driver.consoleErrors).toEqual([]);
  });

  it('adds an alert rule and a source whose secret, shown once, receives an alert that opens an investigation; handles the alert', async () => {
    await driver.open(page, 'Alert rules', 'Alert rules', 'alert-rules-empty');
    await page.getByText('Add a rule').click();
    await page.getByLabel('Rule name').fill('Checkout critical');
    await page.getByLabel(/^Severities/).fill('critical');
    await page.getByLabel(/^Label matchers/).fill('service checkout');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('is not a matcher');
    await page.getByLabel(/^Label matchers/).fill('service=checkout');
    await page.getByLabel(/^Instructions/).fill('Find what changed before it fired.');
    await page.getByLabel('Runs it').selectOption('external');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('status').filter({ hasText: 'Rule Checkout critical added.' }).waitFor();
    await page.getByRole('cell', { name: 'service=checkout' }).waitFor();
    await driver.screen(page, 'alert-rules', 'Alert rules');

    await driver.open(page, 'Alert sources', 'Alert sources', 'alert-sources-empty');
    await page.getByLabel('Source name').fill('Prod <b>monitor</b>');
    await page.getByLabel('Format').selectOption('generic');
    await page.getByRole('button', { name: 'Add source' }).click();
    const secret = (await page.getByTestId('secret').textContent())!;
    const receiveUrl = (await page.getByTestId('receive-url').textContent())!;
    expect(receiveUrl).toMatch(/\/alert-sources\/als_\w+\/alerts$/);
    await driver.screen(page, 'alert-source-secret', 'Alert sources');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    const send = (key: string) =>
      fetch(receiveUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          title: 'Checkout p99 <script>x</script> high',
          severity: 'critical',
          labels: { service: 'checkout' },
          fingerprint: 'fp-1',
        }),
      });
    const receipt = await send(secret);
    expect(receipt.status).toBe(200);
    expect(await receipt.json()).toMatchObject({ opened: 1, investigations_opened: 1 });

    await driver.open(page, 'Alerts', 'Alerts', 'alerts');
    const row = page.getByRole('row', { name: /Checkout p99/ });
    await expect(row.textContent()).resolves.toMatch(/criticalfiring1/);
    // Keyboard: the alert's link, then Enter.
    await page.getByRole('link', { name: 'Checkout p99 <script>x</script> high', exact: true }).focus();
    await page.keyboard.press('Enter');
    const title = 'Checkout p99 <script>x</script> high';
    await driver.screen(page, 'alert-event', title);
    await page.getByRole('button', { name: 'Acknowledge' }).focus();
    await page.keyboard.press('Space');
    await page.getByRole('status').filter({ hasText: 'Alert acknowledged.' }).waitFor();
    await expect.poll(() => page.locator('.facts').textContent()).toMatch(/Statusacknowledged \(acknowledged by/);
    await page.getByRole('button', { name: 'Snooze' }).click();
    await page.getByRole('status').filter({ hasText: 'Alert snoozed.' }).waitFor();
    await expect.poll(() => page.locator('.facts').textContent()).toMatch(/Statussnoozed until/);
    await page.getByRole('button', { name: 'Resolve' }).click();
    await page.getByRole('status').filter({ hasText: 'Alert resolved.' }).waitFor();
    expect(driver.dialogs.at(-1)).toMatch(/^Resolve “Checkout p99 <script>x<\/script> high” by hand\?/);
    await driver.screen(page, 'alert-event-resolved', title);
    await page.getByRole('link', { name: 'Open the investigation' }).click();
    await page.getByRole('heading', { level: 1, name: /Checkout p99/ }).waitFor();

    // The secret replaced (confirmed): the old one is refused, the new one shown once is taken.
    await driver.open(page, 'Alert sources', 'Alert sources', 'alert-sources');
    await page.getByRole('button', { name: 'Replace the secret of Prod <b>monitor</b>' }).click();
    await page.getByRole('status').filter({ hasText: 'Secret of Prod <b>monitor</b> replaced.' }).waitFor();
    const replaced = (await page.getByTestId('secret').textContent())!;
    expect((await send(secret)).status).toBe(401);
    expect((await send(replaced)).status).toBe(200);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('button', { name: 'Delete Prod <b>monitor</b>' }).click();
    await page.getByText('No alert sources yet.').waitFor();
    expect(driver.dialogs.at(-1)).toBe('Delete Prod <b>monitor</b>? Its URL refuses alerts from now on; its alerts stay.');
    expect((await send(replaced)).status).toBe(401);

    await driver.open(page, 'Alert rules', 'Alert rules', 'alert-rules-after');
    await page.getByRole('button', { name: 'Disable Checkout critical' }).click();
    await page.getByRole('status').filter({ hasText: 'Rule Checkout critical disabled.' }).waitFor();
    await page.getByRole('button', { name: 'Delete Checkout critical' }).click();
    await page.getByText(/^No rules/).waitFor();
    expect(driver.consoleErrors).toEqual([]);
  });

  it('builds a dataset from a form and JSON Lines, follows two evaluations to the end and compares them', async () => {
    const brain = platform.ctx.clients.brain;
    const K = Namespace.KNOWLEDGE;
    const put = (key: string, title: string, content: string) =>
      brain.putMemory({ organizationId, namespace: K, key, title, content, allowDuplicate: true });
    await put('services/checkout/db-pool', 'Checkout database pool', 'The checkout database connection pool holds 50 connections.');
    await put('runbooks/disk-full', 'Disk full', 'When the database disk fills, rotate the WAL archive.');

    await driver.open(page, 'Evaluation datasets', 'Evaluation datasets', 'evaluation-datasets-empty');
    await page.getByLabel('Dataset name').fill('Checkout <b>questions</b>');
    await page.getByRole('button', { name: 'Create dataset' }).click();
    const title = 'Dataset Checkout <b>questions</b>';
    await driver.screen(page, 'evaluation-dataset-empty', title);
    await page.getByText('Add a case').click();
    await page.getByLabel('Query').fill('How many connections does the checkout database pool hold?');
    await page.getByLabel('Namespace searched').selectOption('knowledge');
    await page.getByLabel(/^Memories it should find/).fill('knowledge/services/checkout/db-pool');
    await page.getByRole('button', { name: 'Add the case' }).click();
    await page.getByRole('status').filter({ hasText: 'Case added.' }).waitFor();
    await page.getByText('Import cases (JSON Lines)').click();
    const lines = [
      { input: 'What do I do when the database disk is full?', expected_memories: [{ namespace: 'knowledge', key: 'runbooks/disk-full' }] },
      { input: '' },
      { input: 'Where does search cache results?', answer_pattern: 'Redis' },
    ];
    await page.getByLabel('Cases, one JSON object a line').fill(lines.map((l) => JSON.stringify(l)).join('\n'));
    await page.getByRole('button', { name: 'Import the cases' }).click();
    await page.getByRole('status').filter({ hasText: '2 case(s) imported, 1 line(s) refused.' }).waitFor();
    await expect(page.getByTestId('import-failures').textContent()).resolves.toMatch(/^Line 2: input/);
    const cases = page.getByRole('table', { name: 'Cases, in the order added' });
    await expect.poll(() => cases.locator('tbody tr').count()).toBe(3);
    await driver.screen(page, 'evaluation-dataset', title);

    // An evaluation, followed until it is done: progress, metrics, results case by case.
    const evaluate = async (label: string) => {
      await page.getByText('Start an evaluation').click();
      await page.getByLabel('Evaluation label').fill(label);
      await page.getByRole('button', { name: "Evaluate the Brain's search" }).click();
      await page.getByRole('heading', { level: 1, name: `Evaluation ${label}` }).waitFor();
      await expect.poll(() => page.getByTestId('evaluation-status').textContent(), { timeout: 60_000 }).toBe('succeeded');
      await page.getByRole('table', { name: 'Results, case by case' }).locator('tbody tr').nth(2).waitFor();
    };
    await evaluate('before the runbook');
    await expect(page.getByRole('table', { name: 'Metrics' }).textContent()).resolves.toMatch(/recall@5/);
    await driver.screen(page, 'evaluation', 'Evaluation before the runbook');
    await put('services/search/cache', 'Search cache', 'The search service caches results in Redis for 300 seconds.');
    await page.getByRole('link', { name: 'Its dataset' }).click();
    await page.getByRole('heading', { level: 1, name: title }).waitFor();
    await evaluate('after the cache note');

    await driver.open(page, 'Evaluations', 'Evaluations', 'evaluations');
    const pick = async (which: string, label: string) => {
      const select = page.getByLabel(which, { exact: true });
      await select.locator('option', { hasText: label }).waitFor({ state: 'attached' });
      await select.selectOption((await select.locator('option', { hasText: label }).getAttribute('value'))!);
    };
    await pick('Before', 'before the runbook');
    await pick('After', 'after the cache note');
    await page.getByRole('button', { name: 'Compare' }).click();
    const compared = page.getByRole('table', { name: /^Metrics over 3 case\(s\) in both/ });
    await compared.waitFor();
    await expect(compared.textContent()).resolves.toMatch(/mrr/);
    await driver.screen(page, 'evaluation-comparison', 'Evaluation after the cache note');

    await page.getByRole('link', { name: 'Its dataset' }).click();
    await page.getByRole('button', { name: 'Delete case 3' }).click();
    await page.getByRole('status').filter({ hasText: 'Case 3 deleted.' }).waitFor();
    expect(driver.dialogs.at(-1)).toBe('Delete case 3 (“Where does search cache results?”)?');
    expect(driver.consoleErrors).toEqual([]);
  });
});
