// The dashboard's live screens and the Brain's hand tools, in headless Chromium against the real
// platform, whose Agents API the browser reaches through a proxy that can drop one connection
// (test/support/stream-dropping-proxy.ts): a run followed over its event stream as an agent works
// it, resumed with Last-Event-ID after the stream's connection drops; the organization's runs and
// one run's page; seeding the Brain from files and from a page, followed live (resumed after a
// drop too), reviewed (approve, reject) and cancelled; two versions of a playbook evaluated and
// compared, each case linking to the run that answered it; a contradiction flagged, a question
// asked and feedback recorded by hand; one memory's citation of a relationship retracted. Names
// with markup are shown as text; destructive actions ask first; each screen passes axe-core with
// no serious violation and logs no console error; screenshots go to test-results/dashboard-live/.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dashboardDriver, signUpThroughDashboard, type DashboardDriver } from '../support/dashboard-browser.ts';
import { newTestUser, startOAuthTestPlatform } from '../support/oauth-client.ts';
import { findTool, type TestPlatform } from '../support/platform.ts';
import { startStreamDroppingProxy, type StreamDroppingProxy } from '../support/stream-dropping-proxy.ts';

const chromiumPath = findTool('chromium', ['/usr/bin/chromium']);
const SHOTS = path.resolve('test-results/dashboard-live');

/** A playbook that answers with the content of the first memory its one Brain read finds. */
const answerer = (query: string) => ({
  name: 'Answer <i>from</i> the Brain',
  instructions: 'Look the question up and answer with what is found.',
  inputs: [{ name: 'question', type: 'string', required: true }],
  namespaces: ['knowledge'],
  steps: [{ id: 'lookup', kind: 'brain_read', namespace: 'knowledge', query, limit: 1 }],
  output: '{{ steps.lookup.result.memories[0].content }}',
});

const REVIEWED =
  '# Pager policy\n\n## Escalation\n\nEscalate to the duty manager after 30 minutes.\n\n## Handover\n\nHand over at 09:00 with the open incidents listed.\n';
const RUNBOOK =
  '# Deploy runbook\n\n## Rollback\n\nRoll back with `deploy rollback` and page the owner.\n\n## Restart\n\nRestart the pods one at a time.\n';

describe.skipIf(!chromiumPath)('the dashboard live screens in a browser', () => {
  let platform: TestPlatform;
  let proxy: StreamDroppingProxy;
  let browser: Browser;
  let driver: DashboardDriver;
  let page: Page;
  let docs: http.Server;
  let docsUrl: string;
  let api: string;
  let organizationId: string;
  let key: string;
  /** Last-Event-ID of each event stream request the page made, by path. */
  const streams: { path: string; lastEventId: string | undefined }[] = [];

  /** The Agents API as the agent (or the test's set-up) calls it, with the write key made in the dashboard. */
  const rest = async (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${api}/organizations/${organizationId}${p}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, etag: res.headers.get('etag'), json: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    docs = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/markdown' });
      res.end('# Payments\n\n## Card vault\n\nRestart the card-vault pods one at a time.\n\n## Refunds\n\nRefunds settle overnight.\n');
    });
    await new Promise<void>((resolve) => docs.listen(0, '127.0.0.1', resolve));
    docsUrl = `http://127.0.0.1:${(docs.address() as AddressInfo).port}/payments.md`;
    proxy = await startStreamDroppingProxy();
    platform = await startOAuthTestPlatform({
      PUBLIC_API_URL: `http://127.0.0.1:${proxy.port}`,
      SEEDING_URL_HOSTS: '127.0.0.1',
      SEEDING_ALLOW_PRIVATE_URLS: 'true',
      SEEDING_POLL_MS: '50',
      EVALUATION_POLL_MS: '50',
      RUNNER_POLL_MS: '50',
      RUN_EVENTS_POLL_MS: '100',
    });
    const listening = new URL(platform.urls.api);
    proxy.target = { host: listening.hostname, port: Number(listening.port) };
    api = platform.ctx.config.publicUrls.api;
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    driver = dashboardDriver({
      authUrl: platform.ctx.config.publicUrls.auth,
      shots: SHOTS,
      // The refusals the test provokes (a memory that does not exist), and the streams it drops.
      expected:
        /Failed to load resource: the server responded with a status of 404|net::ERR_(CONNECTION_RESET|INCOMPLETE_CHUNKED_ENCODING|EMPTY_RESPONSE)/,
    });
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    page = await driver.newPage(context);
    const orgs = new Set<string>();
    page.on('request', (r) => {
      const id = /\/organizations\/(org_[A-Za-z0-9]+)/.exec(r.url())?.[1];
      if (id) orgs.add(id);
      if (r.url().endsWith('/events'))
        void r.allHeaders().then((h) => streams.push({ path: new URL(r.url()).pathname, lastEventId: h['last-event-id'] }));
    });
    await signUpThroughDashboard(page, platform.ctx.config.publicUrls.web, newTestUser('live'), 'Lee Live', 'Live Ops');
    await driver.screen(page, 'overview', 'Overview');
    organizationId = [...orgs][0];
    await driver.open(page, 'API keys', 'API keys', 'api-keys');
    await page.getByLabel('Key name').fill('on-call agent');
    await page.getByLabel('Scope').selectOption('write');
    await page.getByRole('button', { name: 'Create key' }).click();
    key = (await page.getByTestId('secret').textContent())!;
    await page.getByRole('button', { name: 'I have stored it' }).click();
  }, 180_000);

  afterEach(async (test) => {
    if (test.task.result?.state === 'fail') await page.screenshot({ path: path.join(SHOTS, 'failed.png'), fullPage: true });
  });

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await proxy?.close();
    await new Promise((resolve) => docs?.close(resolve));
  });

  it("follows a run over its event stream as an agent works it, resuming after the stream's connection drops", async () => {
    await driver.open(page, 'Investigations', 'Investigations', 'investigations-empty');
    await page.getByText('Open an investigation').click();
    await page.getByLabel('Title').fill('Queue <b>backlog</b>');
    await page.getByRole('button', { name: 'Open the investigation' }).click();
    const title = 'Queue <b>backlog</b>';
    await page.getByRole('heading', { level: 1, name: title }).waitFor();
    await page.getByLabel('Executor').selectOption('external');
    await page.getByRole('button', { name: 'Start a run' }).click();
    const card = page.locator('article.run').first();
    await card.getByText('Following its events live.').waitFor();
    const events = card.getByRole('list', { name: /^Events of run_/ });
    await expect.poll(() => events.locator('li').allTextContents()).toEqual([expect.stringMatching(/^queued at /)]);

    // The agent claims it and records a step: each appears as it happens.
    const claim = await rest('POST', '/runs/claim', { agent_id: 'queue-bot@host-2', lease_seconds: 120 });
    expect(claim.status).toBe(200);
    const { run, lease_id: lease } = claim.json as { run: { id: string }; lease_id: string };
    const step = (name: string) =>
      rest('POST', `/runs/${run.id}/steps`, { lease_id: lease, kind: 'tool_call', name, ok: true, arguments: {} });
    expect((await step('queue_depth')).status).toBeLessThan(300);
    await expect
      .poll(() => events.locator('li').allTextContents(), { timeout: 15_000 })
      .toEqual([
        expect.stringMatching(/^queued at /),
        expect.stringMatching(/^running \(queue-bot@host-2\) at /),
        'step 0: tool_call queue_depth, ok',
      ]);
    await expect(card.locator('.run-status').textContent()).resolves.toBe('running');
    await driver.screen(page, 'run-live', title);

    // The stream's connection drops; the page connects again from the last event it had (3).
    const eventsPath = `/organizations/${organizationId}/runs/${run.id}/events`;
    expect(streams.filter((s) => s.path === eventsPath)).toEqual([{ path: eventsPath, lastEventId: undefined }]);
    expect(proxy.drop(new RegExp(`^GET ${eventsPath}`))).toBe(1);
    await expect
      .poll(() => streams.filter((s) => s.path === eventsPath), { timeout: 15_000 })
      .toEqual([
        { path: eventsPath, lastEventId: undefined },
        { path: eventsPath, lastEventId: '3' },
      ]);
    expect((await step('consumer_lag')).status).toBeLessThan(300);
    const done = { lease_id: lease, status: 'succeeded', output: 'The <b>consumer</b> was stuck on a poison message.' };
    expect((await rest('POST', `/runs/${run.id}/complete`, done)).status).toBeLessThan(300);
    await expect.poll(() => card.locator('.run-status').textContent(), { timeout: 15_000 }).toBe('succeeded');
    await expect(events.locator('li').allTextContents()).resolves.toEqual([
      expect.stringMatching(/^queued at /),
      expect.stringMatching(/^running \(queue-bot@host-2\) at /),
      'step 0: tool_call queue_depth, ok',
      'step 1: tool_call consumer_lag, ok',
      expect.stringMatching(/^succeeded at /),
    ]);
    await card.getByText('The <b>consumer</b> was stuck on a poison message.').waitFor();
    await expect(card.textContent()).resolves.toContain('2 steps');
    expect(streams.filter((s) => s.path === eventsPath)).toHaveLength(2);
    await expect(page.locator('main b').count()).resolves.toBe(0);
    await driver.screen(page, 'run-finished', title);

    // Every run of the organization, and the run on its own page.
    await driver.open(page, 'Runs', 'Runs', 'runs');
    await page.getByLabel('Status').selectOption('succeeded');
    const row = page.getByRole('row', { name: new RegExp(`^${run.id}`) });
    await expect.poll(() => row.textContent()).toMatch(new RegExp(`^${run.id}succeededexternal2`));
    await row.getByRole('link', { name: run.id, exact: true }).click();
    await driver.screen(page, 'run', `Run ${run.id}`);
    await page.getByText('The <b>consumer</b> was stuck on a poison message.').waitFor();
    await page.getByRole('link', { name: 'Its investigation' }).click();
    await page.getByRole('heading', { level: 1, name: title }).waitFor();
    expect(driver.consoleErrors).toEqual([]);
  });

  it('seeds the Brain from files and from a page, follows the runs live, reviews one and cancels one', async () => {
    await driver.open(page, 'Seeding runs', 'Seeding runs', 'seeding-empty');
    await page.getByText('Seed the Brain').click();
    const jsonl = `${JSON.stringify({ key: 'faq/vpn', title: 'VPN <b>access</b>', content: 'Ask IT for a VPN profile.' })}\nnot json\n`;
    await page.getByLabel(/^Files/).setInputFiles([
      { name: 'runbook.md', mimeType: 'text/markdown', buffer: Buffer.from(RUNBOOK) },
      { name: 'faq.jsonl', mimeType: '', buffer: Buffer.from(jsonl) },
    ]);
    await page.getByLabel('Key prefix').fill('docs/');
    await page.getByLabel(/^Tags/).fill('imported, ops');
    await driver.screen(page, 'seeding-form', 'Seeding runs');
    await page.getByRole('button', { name: 'Start seeding' }).click();
    await page.getByRole('status').filter({ hasText: '2 seeding run(s) started: runbook.md, faq.jsonl.' }).waitFor();
    const list = page.getByRole('table', { name: 'Seeding runs, newest first' });
    await expect.poll(() => list.locator('tbody tr').count()).toBe(2);
    await list.getByRole('link', { name: 'faq.jsonl' }).click();
    await page.getByRole('heading', { level: 1, name: 'Seeding faq.jsonl' }).waitFor();
    await expect.poll(() => page.getByTestId('seeding-status').textContent(), { timeout: 30_000 }).toBe('succeeded');
    const items = page.getByRole('table', { name: 'Items in source order' });
    await expect
      .poll(() => items.locator('tbody tr').allTextContents())
      .toEqual([
        expect.stringMatching(/^0storedVPN <b>access<\/b> knowledge\/docs\/faq\/vpnAsk IT for a VPN profile\./),
        expect.stringMatching(/^1rejected: line 2: not JSON/),
      ]);
    await expect(page.locator('main b').count()).resolves.toBe(0);
    await driver.screen(page, 'seeding-run', 'Seeding faq.jsonl');
    await items.getByRole('link', { name: 'VPN <b>access</b>' }).click();
    await page.getByRole('heading', { level: 1, name: 'Memory knowledge/docs/faq/vpn' }).waitFor();
    await expect(page.locator('.memory .meta').last().textContent()).resolves.toBe('Tags: imported, ops');

    // Held for review: followed live, the stream dropped and resumed, one approved, one rejected, the rest approved.
    await driver.open(page, 'Seeding runs', 'Seeding runs', 'seeding-list');
    await page.getByText('Seed the Brain').click();
    await page.getByLabel(/^Files/).setInputFiles([{ name: 'review.md', mimeType: 'text/markdown', buffer: Buffer.from(REVIEWED) }]);
    await page.getByLabel('Hold what it extracts for review').check();
    await page.getByRole('button', { name: 'Start seeding' }).click();
    await page.getByRole('heading', { level: 1, name: 'Seeding review.md' }).waitFor();
    await expect.poll(() => page.getByTestId('seeding-status').textContent(), { timeout: 30_000 }).toBe('awaiting_review');
    const picks = page.getByRole('checkbox', { name: /^Pick item/ });
    await expect.poll(() => picks.count()).toBeGreaterThanOrEqual(2);
    const waiting = await picks.count();
    await picks.first().check();
    await driver.screen(page, 'seeding-review', 'Seeding review.md');
    await page.getByRole('button', { name: 'Approve the ticked items' }).click();
    await page.getByRole('status').filter({ hasText: '1 item(s) approved.' }).waitFor();
    await expect.poll(() => items.locator('tbody tr').first().textContent(), { timeout: 30_000 }).toMatch(/^0stored/);
    const watched = page.getByRole('list', { name: 'Decided while you watched' });
    await expect
      .poll(
        () =>
          watched
            .locator('li')
            .filter({ hasText: /^0: .*, stored$/ })
            .count(),
        { timeout: 15_000 },
      )
      .toBe(1);
    const runPath = new URL(page.url()).pathname.replace('/app/seeding/', '');
    const eventsPath = `/organizations/${organizationId}/seeding-runs/${runPath}/events`;
    expect(proxy.drop(new RegExp(`^GET ${eventsPath}`))).toBe(1);
    await expect.poll(() => streams.filter((s) => s.path === eventsPath).length, { timeout: 15_000 }).toBe(2);
    expect(streams.filter((s) => s.path === eventsPath).map((s) => s.lastEventId)).toEqual([
      undefined,
      expect.stringMatching(/^[1-9]\d*$/),
    ]);
    await picks.first().check();
    await page.getByRole('button', { name: 'Reject the ticked items' }).click();
    await page.getByRole('status').filter({ hasText: '1 item(s) rejected.' }).waitFor();
    expect(driver.dialogs.at(-1)).toBe('Reject 1 item(s)? They are never written.');
    if (waiting > 2) {
      await page.getByRole('button', { name: 'Approve all waiting' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `${waiting - 2} item(s) approved.` })
        .waitFor();
    }
    await expect.poll(() => page.getByTestId('seeding-status').textContent(), { timeout: 30_000 }).toBe('succeeded');
    await expect(page.getByTestId('seeding-progress').textContent()).resolves.toMatch(/rejected1/);
    await driver.screen(page, 'seeding-reviewed', 'Seeding review.md');

    // From a page, held for review, then cancelled (confirmed).
    await driver.open(page, 'Seeding runs', 'Seeding runs', 'seeding-runs');
    await page.getByText('Seed the Brain').click();
    await page.getByLabel('a web page').check();
    await page.getByLabel('Page URL').fill(docsUrl);
    await page.getByLabel('Hold what it extracts for review').check();
    await page.getByRole('button', { name: 'Start seeding' }).click();
    await page.getByRole('heading', { level: 1, name: `Seeding ${docsUrl}` }).waitFor();
    await expect.poll(() => page.getByTestId('seeding-status').textContent(), { timeout: 30_000 }).toBe('awaiting_review');
    await page.getByRole('button', { name: 'Cancel the seeding run' }).click();
    await page.getByRole('status').filter({ hasText: 'Seeding run cancelled.' }).waitFor();
    expect(driver.dialogs.at(-1)).toMatch(/^Cancel this seeding run\?/);
    await expect.poll(() => page.getByTestId('seeding-status').textContent()).toBe('cancelled');
    await driver.screen(page, 'seeding-cancelled', `Seeding ${docsUrl}`);
    expect(driver.consoleErrors).toEqual([]);
  });

  it('evaluates two versions of a playbook, links each case to its run, and compares them', async () => {
    const memories = [
      ['services/checkout/db-pool', 'Checkout database pool', 'The checkout database connection pool holds 50 connections.'],
      ['runbooks/disk-full', 'Disk full', 'When the database disk fills, rotate the WAL archive and grow the volume.'],
    ];
    for (const [k, t, content] of memories)
      expect((await rest('POST', '/memories', { namespace: 'knowledge', key: k, title: t, content })).status).toBe(201);
    const dataset = await rest('POST', '/evaluation-datasets', { name: 'Playbook questions' });
    for (const c of [
      { input: 'How many connections does the checkout database pool hold?', expected_answer: '50 connections' },
      { input: 'What do I do when the database disk is full?', answer_pattern: 'rotate the WAL archive' },
    ])
      expect((await rest('POST', `/evaluation-datasets/${dataset.json.id}/cases`, c)).status).toBe(201);
    // Version 1 looks every question up as the checkout pool; version 2 looks up the question asked.
    const created = await rest('POST', '/playbooks', { document: answerer('checkout database connection pool'), publish: true });
    expect(created.status).toBe(201);
    const v2 = await rest(
      'PUT',
      `/playbooks/${created.json.id}`,
      { document: answerer('{{ inputs.question }}') },
      { 'if-match': created.etag! },
    );
    expect(v2.json).toMatchObject({ latest_version: 2, published_version: 1 });

    const evaluate = async (version: string, label: string) => {
      await driver.open(page, 'Evaluation datasets', 'Evaluation datasets', `evaluation-datasets-${label}`);
      await page.getByRole('link', { name: 'Playbook questions' }).click();
      await page.getByRole('heading', { level: 1, name: 'Dataset Playbook questions' }).waitFor();
      await page.getByText('Start an evaluation').click();
      await page.getByLabel('What is evaluated').selectOption({ label: 'a playbook' });
      await page.getByRole('combobox', { name: 'Playbook', exact: true }).selectOption({ label: 'Answer <i>from</i> the Brain' });
      await page.getByLabel('Playbook version').selectOption(version);
      await page.getByLabel("The input each case's input fills").selectOption('question');
      await page.getByLabel('Time limit of each run (seconds)').fill('120');
      await page.getByLabel('Evaluation label').fill(label);
      await driver.screen(page, `evaluation-start-${label}`, 'Dataset Playbook questions');
      await page.getByRole('button', { name: 'Evaluate a playbook' }).click();
      await page.getByRole('heading', { level: 1, name: `Evaluation ${label}` }).waitFor();
      await expect.poll(() => page.getByTestId('evaluation-status').textContent(), { timeout: 90_000 }).toBe('succeeded');
    };
    await evaluate('', 'published v1');
    // The playbook's name is read after the evaluation: its id shows until then.
    await expect
      .poll(() => page.locator('.facts').textContent())
      .toMatch(/Evaluatedthe playbook Answer <i>from<\/i> the Brain, version 1, each case's input as question, at most 120 s a run/);
    const results = page.getByRole('table', { name: 'Results, case by case' });
    await expect.poll(() => results.getByRole('link', { name: /^run_/ }).count()).toBe(2);
    await expect(results.locator('tbody tr').first().textContent()).resolves.toContain(
      'The checkout database connection pool holds 50 connections.',
    );
    await driver.screen(page, 'evaluation-playbook', 'Evaluation published v1');
    await evaluate('2', 'v2');
    await results.getByRole('cell', { name: /rotate the WAL archive/ }).waitFor();

    await driver.open(page, 'Evaluations', 'Evaluations', 'evaluations');
    const option = async (select: string, start: string) => {
      await expect.poll(() => page.getByLabel(select).locator('option').allTextContents()).toContainEqual(expect.stringContaining(start));
      const texts = await page.getByLabel(select).locator('option').allTextContents();
      await page.getByLabel(select).selectOption({ label: texts.find((t) => t.startsWith(start))! });
    };
    await option('Before', 'published v1, playbook v1 (');
    await option('After', 'v2, playbook v2 (');
    await page.getByRole('button', { name: 'Compare' }).click();
    await page.getByRole('heading', { level: 2, name: 'Compared with published v1' }).waitFor();
    await expect
      .poll(() => page.getByTestId('compared-subjects').textContent())
      .toMatch(
        /Before: published v1the playbook Answer <i>from<\/i> the Brain, version 1.*After: v2the playbook Answer <i>from<\/i> the Brain, version 2/,
      );
    const changed = page.getByRole('table', { name: 'Cases that changed' });
    const improved = changed.getByRole('row').filter({ hasText: /^What do I do when the database disk is full\?improved/ });
    await expect.poll(() => improved.getByRole('link', { name: /^run_/ }).count()).toBe(2);
    await driver.screen(page, 'evaluation-compared', 'Evaluation v2');
    await improved.getByRole('link', { name: /^run_/ }).last().click();
    await page.getByRole('heading', { level: 1, name: /^Run run_/ }).waitFor();
    await expect.poll(() => page.locator('.run-status').textContent()).toBe('succeeded');
    await page.getByText('rotate the WAL archive and grow the volume').waitFor();
    await expect(page.locator('article.run .meta').first().textContent()).resolves.toMatch(/^the playbook runner/);
    await expect(page.locator('main i').count()).resolves.toBe(0);
    await driver.screen(page, 'evaluation-run', /^Run run_/);
    expect(driver.consoleErrors).toEqual([]);
  });

  it("flags a contradiction, asks a question and records feedback by hand, and retracts one memory's citation", async () => {
    for (const [k, content] of [
      ['services/queue', 'The queue keeps messages for 7 days.'],
      ['services/broker', 'Brokers are patched on Tuesday nights by the platform group.'],
    ])
      expect((await rest('POST', '/memories', { namespace: 'knowledge', key: k, title: k, content })).status).toBe(201);

    await driver.open(page, 'Contradictions and questions', 'Contradictions and questions', 'contradictions-empty');
    await page.getByText('Flag a contradiction').click();
    await page.getByLabel(/^Memories that disagree/).fill('knowledge/services/queue\nknowledge/services/nowhere');
    await page.getByLabel('Why they disagree').fill('Patching <b>drops</b> messages older than 7 days?');
    await page.getByRole('button', { name: 'Flag the contradiction' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\(404\)/);
    await page.getByLabel(/^Memories that disagree/).fill('knowledge/services/queue\nknowledge/services/broker');
    await page.getByRole('button', { name: 'Flag the contradiction' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Contradiction ctr_\w+ flagged\.$/ })
      .waitFor();
    const contradictions = page.getByRole('region', { name: 'Contradictions', exact: true });
    await contradictions.getByText('Patching <b>drops</b> messages older than 7 days?').waitFor();
    await expect(contradictions.textContent()).resolves.toMatch(
      /Memories: knowledge\/services\/(queue, knowledge\/services\/broker|broker, knowledge\/services\/queue)/,
    );
    await page.getByText('Ask a question').click();
    await page.getByLabel('Question', { exact: true }).fill('Who owns the <i>queue</i>?');
    await page.getByLabel(/^About entities/).fill('Queue');
    await page.getByRole('button', { name: 'Ask the question' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Question q_\w+ asked\.$/ })
      .waitFor();
    const questions = page.getByRole('region', { name: 'Open questions', exact: true });
    await questions.getByText('Who owns the <i>queue</i>?').waitFor();
    await expect(questions.textContent()).resolves.toContain('Entities: Queue');
    await expect(page.locator('main b, main i').count()).resolves.toBe(0);
    await driver.screen(page, 'contradictions-raised', 'Contradictions and questions');

    await driver.open(page, 'Memories', 'Memories', 'memories');
    const card = page.getByRole('article', { name: 'services/queue', exact: true });
    await card.getByRole('button', { name: 'Feedback on services/queue' }).click();
    await card.getByLabel('failed').check();
    await card.getByLabel('Note (optional)').fill('it is 14 days since March');
    await driver.screen(page, 'memory-feedback', 'Memories');
    await card.getByRole('button', { name: 'Record the feedback' }).click();
    await card.getByRole('status').filter({ hasText: 'Feedback recorded on services/queue: worked 0, failed 1.' }).waitFor();
    await expect.poll(() => card.locator('.meta').first().textContent()).toMatch(/worked 0, failed 1/);

    // A relationship two memories cite; one of them retracts its citation, the other stays.
    for (const k of ['services/queue', 'services/broker']) {
      const { json: m } = await rest('GET', `/memories/knowledge/${encodeURIComponent(k)}`);
      await platform.ctx.clients.entityGraph.assertRelationship({
        organizationId,
        subject: 'Queue',
        predicate: 'depends_on',
        object: 'Broker <b>cluster</b>',
        memoryNamespace: 'knowledge',
        memoryKey: k,
        memoryVersion: BigInt(m.version),
        memoryTitle: k,
      });
    }
    await driver.open(page, 'Entities', 'Entities', 'entities');
    await page.getByRole('link', { name: 'Queue', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Queue' }).waitFor();
    const from = page.getByRole('table', { name: /^Relationships from it/ });
    await expect
      .poll(() => from.locator('tbody td').nth(2).textContent())
      .toBe('knowledge/services/broker Retract citation, knowledge/services/queue Retract citation');
    await driver.screen(page, 'entity-citations', 'Queue');
    await page
      .getByRole('button', { name: 'Retract citation by knowledge/services/queue of Queue depends_on Broker <b>cluster</b>' })
      .click();
    await page
      .getByRole('status')
      .filter({ hasText: "Retracted knowledge/services/queue's citation of Queue depends_on Broker <b>cluster</b>." })
      .waitFor();
    expect(driver.dialogs.at(-1)).toBe(
      "Retract knowledge/services/queue's citation of “Queue depends_on Broker <b>cluster</b>”? The other citations stay.",
    );
    await expect.poll(() => from.locator('tbody td').nth(2).textContent()).toBe('knowledge/services/broker Retract citation');
    await expect(page.locator('main b').count()).resolves.toBe(0);
    await driver.screen(page, 'entity-citation-retracted', 'Queue');
    expect(driver.consoleErrors).toEqual([]);
  });
});
