// The dashboard (`{web_url}/app`) in headless Chromium against the real platform: a new user
// signs up through it, invites a colleague who accepts in a second browser, sees the colleague
// as a member (with only what a member may do), sees them by name, changes their role, puts them
// in a team and takes them out, creates an API key (the
// secret, shown once, works) and revokes it (it stops working), pages the audit log and finds
// every step there. Each screen passes axe-core with no serious or critical violation, under the
// dashboard's Content-Security-Policy, with no console error; screenshots go to
// test-results/dashboard/.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { newTestUser, startOAuthTestPlatform, type TestUser } from '../support/oauth-client.ts';
import { findTool, type TestPlatform } from '../support/platform.ts';

const chromiumPath = findTool('chromium', ['/usr/bin/chromium']);
const SHOTS = path.resolve('test-results/dashboard');
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** What a browser said went wrong; statuses the test provokes on purpose are expected. */
const consoleErrors: string[] = [];
// 403, 409 and 412 are problems the test provokes; 401 and 400 are the access token and then the
// refresh token of a grant the test revokes.
const EXPECTED = /Failed to load resource: the server responded with a status of (400|401|403|409|412)/;

function expected(text: string, url: string, authUrl: string): boolean {
  // The authorization server's pages (not the dashboard's) name no icon, so Chromium asks for one.
  return EXPECTED.test(text) || url === `${authUrl}/favicon.ico`;
}

async function newPage(context: BrowserContext, authUrl: string): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !expected(msg.text(), msg.location().url, authUrl)) {
      consoleErrors.push(`${msg.text()} at ${msg.location().url}`);
    }
  });
  page.on('pageerror', (err) => consoleErrors.push(`page error: ${err.message}`));
  page.on('dialog', (dialog) => void dialog.accept());
  return page;
}

/** axe-core on the page as it is; answers the serious and critical violations. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated over the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } })
      .axe;
    return (await axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.nodes})`);
}

async function screen(page: Page, name: string, heading: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.waitForLoadState('networkidle');
  expect(await axeViolations(page), `axe on ${name}`).toEqual([]);
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

async function open(page: Page, link: string, heading: string, shot: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: link }).click();
  await screen(page, shot, heading);
}

async function consent(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Allow' }).click();
}

async function signUpThroughDashboard(page: Page, web: string, user: TestUser): Promise<void> {
  await page.goto(`${web}/app`);
  await page.getByRole('heading', { name: 'Sign in to continue to Mindgate dashboard' }).waitFor();
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Your name').fill('Dana Founder');
  await page.getByLabel('E-mail address').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByLabel('Organization name').fill('Dash Robotics');
  await page.getByRole('button', { name: 'Create account' }).click();
  await consent(page);
  await page.waitForURL(`${web}/app`);
}

function linkFor(platform: TestPlatform, email: string): string {
  const outbox = path.join(platform.ctx.config.storage.dataDir, 'outbox.jsonl');
  const mails = fs
    .readFileSync(outbox, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { to: string; text: string })
    .filter((m) => m.to === email);
  return /(http\S+\/invitations\/[A-Za-z0-9_-]{43})/.exec(mails.at(-1)!.text)![1];
}

describe.skipIf(!chromiumPath)('the dashboard in a browser', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let web: string;
  let api: string;

  beforeAll(async () => {
    platform = await startOAuthTestPlatform();
    web = platform.ctx.config.publicUrls.web;
    api = platform.ctx.config.publicUrls.api;
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    fs.mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it('serves one shell under a strict CSP, the bundle small and compressed, and lets only its origin call the API', async () => {
    const shell = await fetch(`${web}/app/members`);
    expect(shell.status).toBe(200);
    const csp = shell.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain(`connect-src ${new URL(platform.ctx.config.publicUrls.auth).origin} ${new URL(api).origin}`);
    const html = await shell.text();
    expect(html).not.toMatch(/<script>/);
    const script = /src="(\/app\/assets\/app-[\w-]+\.js)"/.exec(html)![1];
    const js = await fetch(`${web}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(js.headers.get('content-encoding')).toBe('gzip');
    expect(js.headers.get('cache-control')).toContain('immutable');
    const compressed = Number(js.headers.get('content-length'));
    expect(compressed).toBeGreaterThan(1000);
    expect(compressed).toBeLessThan(200 * 1024);
    expect((await fetch(`${web}/app/assets/app-nope.js`)).status).toBe(404);
    // Areas load on demand: the entry names its chunks, served the same way.
    const entry = await (await fetch(`${web}${script}`)).text();
    const chunks = [...new Set(entry.match(/chunk-[A-Z0-9]+\.js/g))];
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      const res = await fetch(`${web}/app/assets/${chunk}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-encoding')).toBe('gzip');
      expect(res.headers.get('content-type')).toContain('text/javascript');
    }

    const preflight = (origin: string) =>
      fetch(`${api}/users/me`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, if-match' },
      });
    const ours = await preflight(new URL(web).origin);
    expect(ours.status).toBe(204);
    expect(ours.headers.get('access-control-allow-origin')).toBe(new URL(web).origin);
    expect(ours.headers.get('access-control-allow-headers')).toContain('if-match');
    const theirs = await preflight('https://evil.example');
    expect(theirs.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('takes a new user from sign-up to a team, a colleague, a role change, a key used and revoked, and the audit log', async () => {
    const founder = newTestUser('dash-founder');
    const colleague = newTestUser('dash-colleague');
    const a = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const b = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    try {
      const page = await newPage(a, platform.ctx.config.publicUrls.auth);
      await signUpThroughDashboard(page, web, founder);
      await screen(page, 'overview', 'Overview');
      await expect(page.locator('header').textContent()).resolves.toContain('Dash Robotics');
      await expect(page.locator('main pre').textContent()).resolves.toContain(`${platform.ctx.config.publicUrls.gateway}/brain/mcp`);
      await expect(page.locator('.activity').textContent()).resolves.toContain('signUp by user');
      // A new organization is on the Professional trial (SERVICE-SPEC §8: 14 days).
      await expect(page.locator('.facts').nth(1).textContent()).resolves.toMatch(/Professional, trial: 1[34] days left/);

      // A memory, written, found by search (its content shown as text, not markup), and deleted.
      await open(page, 'Memories', 'Memories', 'memories-empty');
      await page.getByText('Write a memory in knowledge').click();
      await page.getByLabel('Key').fill('deploy/steps');
      await page.getByLabel('Title').fill('How we deploy');
      await page.getByLabel('Content').fill('Run the release pipeline, then <b>promote</b> the canary.');
      await page.getByRole('button', { name: 'Write memory' }).click();
      await page.getByRole('status').filter({ hasText: 'Memory deploy/steps written.' }).waitFor();
      const card = page.getByRole('article', { name: 'How we deploy' });
      await card.waitFor();
      await expect(card.locator('.content').textContent()).resolves.toBe('Run the release pipeline, then <b>promote</b> the canary.');
      await expect(card.locator('b').count()).resolves.toBe(0);
      await page.getByLabel('Search').fill('shipping a release');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByText(/Results for/).waitFor();
      await expect(card.textContent()).resolves.toMatch(/score \d/);
      await screen(page, 'memories-search', 'Memories');
      await card.getByRole('button', { name: 'Delete deploy/steps' }).click();
      await page.getByRole('status').filter({ hasText: 'Memory deploy/steps deleted.' }).waitFor();
      await expect.poll(() => card.count()).toBe(0);

      // A team.
      await open(page, 'Teams', 'Teams', 'teams');
      await page.getByLabel('Team name').fill('Field robots');
      await page.getByRole('button', { name: 'Create team' }).click();
      await page.getByRole('cell', { name: 'Field robots', exact: true }).waitFor();

      // An invitation, then the same address again: the API's 409 problem, shown as it is.
      await open(page, 'Invitations', 'Invitations', 'invitations');
      await page.getByLabel('E-mail address').fill(colleague.email);
      await page.getByLabel('Role').selectOption('member');
      await page.getByRole('button', { name: 'Invite' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Invited ${colleague.email} as member` })
        .waitFor();
      await page.getByRole('cell', { name: 'pending', exact: true }).waitFor();
      await page.getByLabel('E-mail address').fill(colleague.email);
      await page.getByRole('button', { name: 'Invite' }).click();
      const problem = page.getByRole('alert');
      await problem.waitFor();
      await expect(problem.textContent()).resolves.toMatch(/Conflict \(409\)/);
      await screen(page, 'invitations-problem', 'Invitations');

      // The colleague accepts in another browser, then signs in to the dashboard as a member.
      const theirs = await newPage(b, platform.ctx.config.publicUrls.auth);
      await theirs.goto(linkFor(platform, colleague.email));
      await theirs.getByLabel('Your name').fill('Cole League');
      await theirs.getByLabel(/Choose a password/).fill(colleague.password);
      await theirs.getByRole('button', { name: 'Create my account and join' }).click();
      await theirs.getByText('about joining Dash Robotics').waitFor();
      await signInAsMember(theirs, colleague);

      // The founder sees them, and makes them an admin.
      await open(page, 'Members', 'Members', 'members');
      const row = page.locator('tbody tr', { hasNotText: '(you)' });
      await row.getByRole('combobox').selectOption('admin');
      await page.getByRole('status').filter({ hasText: 'is now admin' }).waitFor();
      // The select shows the role read from the list, read again after the change.
      await expect.poll(() => row.getByRole('combobox').inputValue()).toBe('admin');
      // Members are named from their accounts.
      await expect(row.textContent()).resolves.toContain(`Cole League ${colleague.email}`);
      await expect(page.locator('tbody tr', { hasText: '(you)' }).textContent()).resolves.toContain('Dana Founder');

      // The colleague joins a team, by name, and leaves it again.
      await open(page, 'Teams', 'Teams', 'teams-list');
      await page.getByRole('link', { name: 'Field robots' }).click();
      await screen(page, 'team', 'Team Field robots');
      await page.getByLabel('Member to add').selectOption({ label: `Cole League (${colleague.email})` });
      await page.getByRole('button', { name: 'Add to the team' }).click();
      await page.getByRole('status').filter({ hasText: 'Cole League added to the team.' }).waitFor();
      await page.getByRole('caption').filter({ hasText: 'Members of the team (1)' }).waitFor();
      await expect(page.locator('tbody').textContent()).resolves.toContain(colleague.email);
      await screen(page, 'team-member', 'Team Field robots');
      await page.getByRole('button', { name: 'Take Cole League out' }).click();
      await page.getByRole('status').filter({ hasText: 'Cole League left the team.' }).waitFor();
      await page.getByText('No one in this team yet.').waitFor();

      // A key: its secret is shown once and works; revoked, it is refused.
      await open(page, 'API keys', 'API keys', 'api-keys');
      await page.getByLabel('Key name').fill('ci robot');
      await page.getByLabel('Scope').selectOption('admin');
      await page.getByRole('button', { name: 'Create key' }).click();
      const secret = (await page.getByTestId('secret').textContent())!;
      await screen(page, 'api-key-secret', 'API keys');
      const orgs = await fetch(`${api}/organizations`, { headers: { 'x-api-key': secret } });
      expect(orgs.status).toBe(200);
      const org = ((await orgs.json()) as { organizations: { id: string; name: string }[] }).organizations[0];
      expect(org.name).toBe('Dash Robotics');
      // Enough changes that the audit log needs a second page (25 a page).
      for (let i = 0; i < 24; i++) {
        const res = await fetch(`${api}/organizations/${org.id}/teams`, {
          method: 'POST',
          headers: { 'x-api-key': secret, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Team ${i}` }),
        });
        expect(res.status).toBe(201);
      }
      await page.getByRole('button', { name: 'I have stored it' }).click();
      await expect(page.getByTestId('secret').count()).resolves.toBe(0);
      // Rotated: a new secret, shown once; the old one stops at once.
      await page.getByRole('button', { name: 'Rotate ci robot' }).click();
      await page.getByRole('status').filter({ hasText: 'Key ci robot rotated.' }).waitFor();
      const rotated = (await page.getByTestId('secret').textContent())!;
      expect(rotated).not.toBe(secret);
      expect((await fetch(`${api}/organizations`, { headers: { 'x-api-key': secret } })).status).toBe(401);
      expect((await fetch(`${api}/organizations`, { headers: { 'x-api-key': rotated } })).status).toBe(200);
      await page.getByRole('button', { name: 'I have stored it' }).click();
      await page.getByRole('button', { name: 'Revoke ci robot' }).click();
      await page.getByRole('status').filter({ hasText: 'Key ci robot revoked.' }).waitFor();
      expect((await fetch(`${api}/organizations`, { headers: { 'x-api-key': rotated } })).status).toBe(401);

      // A confidential client: its secret gets a token; deleted, it gets none.
      await open(page, 'Confidential clients', 'Confidential clients', 'confidential-clients');
      await page.getByLabel('Client name').fill('nightly sync');
      await page.getByRole('button', { name: 'Create client' }).click();
      const clientSecret = (await page.getByTestId('secret').textContent())!;
      const clientId = (await page.locator('tbody tr', { hasText: 'nightly sync' }).locator('td code').textContent())!;
      const clientToken = () =>
        fetch(`${platform.ctx.config.publicUrls.auth}/token`, {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ grant_type: 'client_credentials', resource: api }),
        });
      expect((await clientToken()).status).toBe(200);
      await page.getByRole('button', { name: 'Delete nightly sync' }).click();
      await page.getByRole('status').filter({ hasText: 'Client nightly sync deleted.' }).waitFor();
      expect((await clientToken()).status).toBe(401);

      // Connected applications: the colleague's grants to the dashboard, revoked, end their session.
      await open(page, 'Connected applications', 'Connected applications', 'connected-apps');
      const dashboardApp = page.getByRole('region', { name: 'Mindgate dashboard' });
      const theirGrants = dashboardApp.locator('tbody tr', { hasNotText: '(you)' });
      await expect.poll(() => theirGrants.count()).toBeGreaterThan(0);
      while ((await theirGrants.count()) > 0) {
        const before = await theirGrants.count();
        await theirGrants.first().getByRole('button').click();
        await expect.poll(() => theirGrants.count()).toBe(before - 1);
      }
      await expect(dashboardApp.locator('tbody tr', { hasText: '(you)' }).count()).resolves.toBe(1);
      const ended = theirs.getByText('Your session has ended');
      await expect
        .poll(async () => {
          if (!(await ended.isVisible())) await theirs.getByRole('link', { name: 'Teams' }).click();
          return ended.isVisible();
        })
        .toBe(true);
      await theirs.getByRole('button', { name: 'Sign in' }).waitFor();

      // The audit log, newest first, two pages.
      await open(page, 'Audit log', 'Audit log', 'audit');
      const rows = page.locator('tbody tr');
      await expect.poll(() => rows.count()).toBe(25);
      await page.getByRole('button', { name: 'Older events' }).click();
      await expect.poll(() => rows.count()).toBeGreaterThan(25);
      const actions = await page.locator('tbody tr td:nth-child(3)').allTextContents();
      expect(actions[0]).toBe('revokeOAuthGrant');
      for (const step of [
        'signUp',
        'createTeam',
        'createInvitation',
        'acceptInvitation',
        'updateMember',
        'createMemory',
        'deleteMemory',
        'createApiKey',
        'rotateApiKey',
        'revokeApiKey',
        'createConfidentialClient',
        'deleteConfidentialClient',
        'revokeOAuthGrant',
      ]) {
        expect(actions, step).toContain(step);
      }
      const conflict = page.locator('tbody tr', { hasText: 'createInvitation' }).filter({ hasText: 'failed (409)' });
      await expect(conflict.count()).resolves.toBe(1);
      await screen(page, 'audit-paged', 'Audit log');

      // Profile: a new name, conditional on the account's ETag.
      await open(page, 'Your profile', 'Your profile', 'profile');
      await page.getByLabel('Your name').fill('Dana F.');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Your name was saved.' }).waitFor();
      await expect(page.locator('main').textContent()).resolves.toContain(founder.email);

      // A second organization, then acting for it: switching is signing in again and picking it.
      await page.getByLabel('Organization name').fill('Second Lab');
      await page.getByRole('button', { name: 'Create organization' }).click();
      await page.getByRole('status').filter({ hasText: 'Second Lab was created' }).waitFor();
      await page.getByRole('cell', { name: 'Second Lab', exact: true }).waitFor();
      await page.getByRole('button', { name: 'Switch organization' }).click();
      await page.getByLabel('Organization it acts for').selectOption({ label: 'Second Lab' });
      await consent(page);
      await page.waitForURL(`${web}/app`);
      await screen(page, 'switched', 'Overview');
      await expect(page.locator('header').textContent()).resolves.toContain('Second Lab (owner)');

      // Signing out ends the session at the authorization server too.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Yes, sign me out' }).click();
      await page.waitForURL(`${web}/app/signed-out`);
      await screen(page, 'signed-out', 'Mindgate dashboard');
      expect(consoleErrors).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  }, 240_000);

  it("edits a memory at its version, shows its history, and settles the Brain's contradictions and questions", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    try {
      const page = await newPage(context, platform.ctx.config.publicUrls.auth);
      const orgs = new Set<string>();
      page.on('request', (r) => {
        const id = /\/organizations\/(org_[A-Za-z0-9]+)/.exec(r.url())?.[1];
        if (id) orgs.add(id);
      });
      await signUpThroughDashboard(page, web, newTestUser('dash-brain'));
      await screen(page, 'brain-overview', 'Overview');
      const organizationId = [...orgs][0];
      // What agents wrote: a memory changed once, one that disagrees with it, and a question.
      const brain = platform.ctx.clients.brain;
      const K = Namespace.KNOWLEDGE;
      const put = (key: string, title: string, content: string, expectedVersion?: bigint) =>
        brain.putMemory({ organizationId, namespace: K, key, title, content, allowDuplicate: true, expectedVersion });
      await put('deploy/freeze', 'Deploy freeze', 'Deploys freeze on Fridays.');
      await put('deploy/freeze', 'Deploy freeze', 'Deploys freeze on Fridays after noon.');
      await put('deploy/window', 'Deploy window', 'The weekly deploy window is Friday afternoon.');
      const flagged = await brain.flagContradiction({
        organizationId,
        memories: [
          { namespace: K, key: 'deploy/freeze' },
          { namespace: K, key: 'deploy/window' },
        ],
        reason: 'The freeze and the window are both on Friday afternoon.',
      });
      await brain.askQuestion({ organizationId, question: 'Who may approve a deploy during the freeze?' });

      await open(page, 'Memories', 'Memories', 'brain-memories');
      const card = page.getByRole('article', { name: 'Deploy freeze' });
      await card.getByRole('button', { name: 'Versions of deploy/freeze' }).click();
      const versions = card.getByRole('region', { name: 'Versions of deploy/freeze' });
      await versions.getByText(/Version 1 · written .* replaced/).waitFor();
      await expect(versions.locator('.content').allTextContents()).resolves.toEqual([
        'Deploys freeze on Fridays after noon.',
        'Deploys freeze on Fridays.',
      ]);
      await screen(page, 'memory-versions', 'Memories');

      await card.getByRole('button', { name: 'Edit deploy/freeze' }).click();
      await card.getByLabel('Content').fill('Deploys freeze from Friday noon to Monday 08:00.');
      await card.getByRole('button', { name: 'Save deploy/freeze' }).click();
      await page.getByRole('status').filter({ hasText: 'Memory deploy/freeze saved.' }).waitFor();
      await card.getByText(/version 3/).waitFor();
      // Someone writes version 4 while this edit is open: the save is refused, and says why.
      await card.getByRole('button', { name: 'Edit deploy/freeze' }).click();
      await put('deploy/freeze', 'Deploy freeze', 'Deploys freeze on Fridays from 10:00.', 3n);
      await card.getByLabel('Content').fill('A stale edit.');
      await card.getByRole('button', { name: 'Save deploy/freeze' }).click();
      await card.getByRole('alert').filter({ hasText: 'changed while you were editing' }).waitFor();
      await expect(card.getByRole('alert').textContent()).resolves.toContain('You edited version 3');
      await screen(page, 'memory-edit-conflict', 'Memories');

      await open(page, 'Contradictions and questions', 'Contradictions and questions', 'contradictions-open');
      const id = flagged.contradiction!.id;
      const item = page.getByRole('article', { name: `contradiction ${id}` });
      await item.getByText('The freeze and the window are both on Friday afternoon.').waitFor();
      await item.getByLabel(/How it was settled/).fill('The window moved to Thursday.');
      await item.getByRole('button', { name: `Resolve ${id}` }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Contradiction ${id} resolved.` })
        .waitFor();
      await expect.poll(() => item.count()).toBe(0);
      const question = page.getByRole('region', { name: 'Open questions' }).getByRole('article');
      await question.getByLabel(/The answer/).fill('Not a question for the Brain.');
      await question.getByRole('button', { name: /^Dismiss q_/ }).click();
      await page
        .getByRole('status')
        .filter({ hasText: /Question q_\w+ dismissed\./ })
        .waitFor();
      await page.getByLabel('Status').selectOption('resolved');
      await page
        .getByRole('article', { name: `contradiction ${id}` })
        .getByText('Settled: The window moved to Thursday.')
        .waitFor();
      await screen(page, 'contradictions-resolved', 'Contradictions and questions');
      expect(consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  /** The colleague signs in to the dashboard: as a member, nothing an admin may do is offered. */
  async function signInAsMember(page: Page, user: TestUser): Promise<void> {
    await page.goto(`${web}/app`);
    const signIn = page.getByRole('heading', { name: 'Sign in to continue to Mindgate dashboard' });
    const allow = page.getByRole('button', { name: 'Allow' });
    await signIn.or(allow).waitFor();
    if (await signIn.isVisible()) {
      await page.getByLabel('E-mail address').fill(user.email);
      await page.getByLabel('Password').fill(user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await consent(page);
    await page.waitForURL(`${web}/app`);
    await screen(page, 'member-overview', 'Overview');
    await expect(page.getByRole('heading', { name: 'Recent activity' }).count()).resolves.toBe(0);
    const nav = page.getByRole('navigation', { name: 'Dashboard' });
    // A member sees every area but those for admins and owners (more areas come as they land).
    const areas = await nav.getByRole('link').allTextContents();
    expect(areas).toEqual(
      expect.arrayContaining([
        'Overview',
        'Memories',
        'Contradictions and questions',
        'Members',
        'Teams',
        'API keys',
        'Connected applications',
        'Your profile',
      ]),
    );
    expect(areas).not.toContain('Invitations');
    expect(areas).not.toContain('Audit log');
    expect(areas).not.toContain('Webhooks');
    // Areas added later hide what a member may not do, too.
    await open(page, 'MCP servers', 'MCP servers', 'member-mcp-servers');
    await expect(page.getByText('Add a server by hand').count()).resolves.toBe(0);
    await open(page, 'Billing', 'Billing', 'member-billing');
    await page.getByRole('table', { name: /^Plans, prices in/ }).waitFor();
    await expect(page.getByRole('button', { name: /^Choose / }).count()).resolves.toBe(0);
    await expect(page.getByRole('heading', { name: 'Invoices' }).count()).resolves.toBe(0);
    await open(page, 'Members', 'Members', 'member-members');
    await page.getByRole('button', { name: 'Leave' }).waitFor();
    await expect(page.getByRole('combobox').count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: /^Remove / }).count()).resolves.toBe(0);
    await open(page, 'API keys', 'API keys', 'member-api-keys');
    await expect(page.getByRole('button', { name: 'Create key' }).count()).resolves.toBe(0);
    // The API stays the authority: the audit log, opened by its address, is its 403, readably.
    await page.goto(`${web}/app/audit`);
    await consent(page);
    await page.waitForURL(`${web}/app/audit`);
    await page.getByRole('alert').waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/Forbidden \(403\)/);
    await screen(page, 'member-audit-forbidden', 'Audit log');
  }
});
