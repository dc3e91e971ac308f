// The dashboard's settings screens, in headless Chromium against the real platform: the
// organization renamed, given a slug and an audit retention (If-Match); the audit log exported as
// JSON Lines, filters and all; a team renamed and its Brain access narrowed and lifted; the
// operator's gateway keys (not in another organization's navigation, refused there, then created
// with the secret shown once, rotated with an overlap during which both secrets work, revoked),
// checked at the gateway; one's account deletion refused while the only owner (the API's 409
// shown); a link to a new e-mail address requested; a new password refused with a wrong current
// one, then set; the ownership handed to a colleague; a second organization deleted with its slug
// typed as confirmation; and the account deleted. Names with markup are shown as text;
// destructive actions ask first; each screen passes axe-core with no serious violation and logs no
// unexpected console error; screenshots go to test-results/dashboard-settings/.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dashboardDriver, signUpThroughDashboard, type DashboardDriver } from '../support/dashboard-browser.ts';
import { joinAs, type TestMember } from '../support/members.ts';
import { newTestUser, startOAuthTestPlatform, type TestUser } from '../support/oauth-client.ts';
import { findTool, type TestPlatform } from '../support/platform.ts';

const chromiumPath = findTool('chromium', ['/usr/bin/chromium']);
const SHOTS = path.resolve('test-results/dashboard-settings');

describe.skipIf(!chromiumPath)('the dashboard settings screens in a browser', () => {
  let platform: TestPlatform;
  let browser: Browser;
  let driver: DashboardDriver;
  let page: Page;
  let web: string;
  let founder: TestUser;
  let organizationId: string;
  let colleague: TestMember;

  beforeAll(async () => {
    platform = await startOAuthTestPlatform({ GATEWAY_REGISTRY_POLL_MS: '100', ORGANIZATION_PURGE_DELAY_MS: '0' });
    web = platform.ctx.config.publicUrls.web;
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    driver = dashboardDriver({
      authUrl: platform.ctx.config.publicUrls.auth,
      shots: SHOTS,
      // The refusals the test provokes: gateway keys outside the operator's organization (403),
      // the last owner's account deletion (409), a wrong current password (422), and once the
      // account is gone its calls (401) and the refresh of its tokens (400 invalid_grant at the
      // authorization server).
      expected: /Failed to load resource: the server responded with a status of (400|401|403|409|422)/,
    });
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, acceptDownloads: true });
    page = await driver.newPage(context);
    const orgs = new Set<string>();
    page.on('request', (r) => {
      const id = /\/organizations\/(org_[A-Za-z0-9]+)/.exec(r.url())?.[1];
      if (id) orgs.add(id);
    });
    founder = newTestUser('settings');
    await signUpThroughDashboard(page, web, founder, 'Sam Settings', 'Settings Lab');
    await driver.screen(page, 'overview', 'Overview');
    organizationId = [...orgs][0];
    colleague = await joinAs(platform, organizationId, 'member');
  }, 180_000);

  afterEach(async (test) => {
    if (test.task.result?.state === 'fail') await page.screenshot({ path: path.join(SHOTS, 'failed.png'), fullPage: true });
  });

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  /** Clicks `button` and answers the text of the file the page saves. */
  async function downloaded(button: ReturnType<Page['getByRole']>): Promise<{ name: string; text: string }> {
    const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
    return { name: download.suggestedFilename(), text: fs.readFileSync((await download.path())!, 'utf8') };
  }

  it('renames the organization, exports its audit log, and renames a team and narrows and lifts its Brain access', async () => {
    // The only owner may not delete the account: the API's problem, as written.
    await driver.open(page, 'Your profile', 'Your profile', 'profile');
    await page.getByLabel('Your e-mail address, to confirm').fill(founder.email);
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\(409\).*only owner/);
    expect(driver.dialogs.at(-1)).toBe(`Delete your account ${founder.email}, with your memberships and sign-ins, for good?`);
    await driver.screen(page, 'profile-last-owner', 'Your profile');

    // A new e-mail address: the link goes out; the account keeps its address until it is opened
    // (test/integration/api-email-change.test.ts follows the link).
    const moved = newTestUser('settings-moved').email;
    const emailForm = page.getByRole('region', { name: 'Change e-mail address' });
    await emailForm.getByLabel('New e-mail address').fill(moved);
    await emailForm.getByLabel('Current password').fill(founder.password);
    await emailForm.getByRole('button', { name: 'Send the link' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `We sent a link to ${moved}.` })
      .waitFor();
    await expect(emailForm.getByLabel('Current password').inputValue()).resolves.toBe('');
    await driver.screen(page, 'profile-email-change', 'Your profile');

    // A new password, refused with a wrong current one (the API's 422 on the field), then taken:
    // the account signs in with it.
    const passwordForm = page.getByRole('region', { name: 'Change password' });
    const newPassword = `${founder.password}-2`;
    await passwordForm.getByLabel('Current password').fill('not the password');
    await passwordForm.getByLabel('New password').fill(newPassword);
    await passwordForm.getByRole('button', { name: 'Change password' }).click();
    await expect.poll(() => passwordForm.getByRole('alert').textContent()).toMatch(/\(422\).*current_password/);
    await passwordForm.getByLabel('Current password').fill(founder.password);
    await passwordForm.getByRole('button', { name: 'Change password' }).click();
    await passwordForm.getByRole('status').filter({ hasText: 'Your password was changed.' }).waitFor();
    await driver.screen(page, 'profile-password-changed', 'Your profile');
    const signedIn = await platform.ctx.clients.users.authenticateUser({ email: founder.email, password: newPassword });
    expect(signedIn.user?.email).toBe(founder.email);
    founder.password = newPassword;

    await driver.open(page, 'Organization settings', 'Organization settings', 'organization');
    const facts = page.getByTestId('organization-facts');
    await expect(facts.textContent()).resolves.toMatch(new RegExp(`^NameSettings LabSlug.*Id${organizationId}Audit events kept365 days`));
    await page.getByLabel('Organization name').fill('Settings <i>Lab</i> 2');
    await page.getByLabel(/^Slug/).fill('settings-lab-2');
    await page.getByLabel(/^Keep audit events for/).fill('400');
    await page.getByRole('button', { name: 'Save the organization' }).click();
    await page.getByRole('status').filter({ hasText: 'Settings <i>Lab</i> 2 saved.' }).waitFor();
    await expect.poll(() => facts.textContent()).toMatch(/^NameSettings <i>Lab<\/i> 2Slugsettings-lab-2Id.*Audit events kept400 days/);
    await expect(page.locator('header').textContent()).resolves.toContain('Settings <i>Lab</i> 2 (owner)');
    await expect(page.locator('main i, header i').count()).resolves.toBe(0);
    await driver.screen(page, 'organization-saved', 'Organization settings');

    await driver.open(page, 'Audit log', 'Audit log', 'audit');
    const all = await downloaded(page.getByRole('button', { name: 'Export as JSON Lines' }));
    expect(all.name).toBe(`audit-${organizationId}.jsonl`);
    const actions = all.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; outcome: string });
    expect(actions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: 'updateOrganization', outcome: 'success' }),
        expect.objectContaining({ action: 'deleteCurrentUser', outcome: 'failed' }),
      ]),
    );
    await page
      .getByRole('status')
      .filter({ hasText: `Saved audit-${organizationId}.jsonl (${Buffer.byteLength(all.text)} bytes).` })
      .waitFor();
    await page.getByLabel('Action').fill('updateOrganization');
    await page.getByRole('button', { name: 'Filter' }).click();
    const filtered = await downloaded(page.getByRole('button', { name: 'Export as JSON Lines' }));
    expect(
      new Set(
        filtered.text
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).action),
      ),
    ).toEqual(new Set(['updateOrganization']));
    await driver.screen(page, 'audit-exported', 'Audit log');

    await driver.open(page, 'Teams', 'Teams', 'teams');
    await page.getByLabel('Team name').fill('Support');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('link', { name: 'Support' }).click();
    await page.getByRole('heading', { level: 1, name: 'Team Support' }).waitFor();
    await page.getByText('Rename the team').click();
    await page.getByLabel('Team name').fill('Support <b>tier 2</b>');
    await page.getByLabel('Team description').fill('Second line');
    await page.getByRole('button', { name: 'Save the team' }).click();
    const renamed = 'Team Support <b>tier 2</b>';
    await page.getByRole('heading', { level: 1, name: renamed }).waitFor();
    await page.getByText('Second line').waitFor();
    const access = page.getByTestId('brain-access');
    await expect(access.textContent()).resolves.toBe('Its members reach: not narrowed by this team.');
    await page.getByRole('group', { name: 'Namespaces it may reach' }).getByLabel('episodes').uncheck();
    await page.getByLabel(/^Key prefixes it may reach/).fill('support/\nrunbooks/');
    await page.getByRole('button', { name: "Narrow the team's access" }).click();
    await expect.poll(() => access.textContent()).toBe('Its members reach: knowledge, keys starting with support/, runbooks/.');
    await expect(page.locator('main b').count()).resolves.toBe(0);
    await driver.screen(page, 'team-narrowed', renamed);
    await page.getByRole('button', { name: 'Lift the restriction' }).click();
    await expect.poll(() => access.textContent()).toBe('Its members reach: not narrowed by this team.');
    expect(driver.dialogs.at(-1)).toMatch(/^Lift Support <b>tier 2<\/b>'s Brain restriction\?/);
    expect(driver.consoleErrors).toEqual([]);
  });

  it("manages the operator's gateway keys, which the gateway accepts, overlaps on rotation and refuses once revoked", async () => {
    const gateway = platform.ctx.config.publicUrls.gateway;
    /** Whether the gateway takes `key` (it answers invalid_gateway_key otherwise). */
    const accepted = async (key: string) => {
      const res = await fetch(`${gateway}/brain/mcp`, {
        method: 'POST',
        headers: { 'x-gateway-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      return !(await res.text()).includes('invalid_gateway_key');
    };

    /** Loads the dashboard at `path` afresh: it signs in again (consent, then back) and reads the memberships. */
    const signInAt = async (path: string) => {
      await page.goto(`${web}/app${path}`);
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL(`${web}/app${path}`);
    };
    const navigation = page.getByRole('navigation', { name: 'Dashboard' });
    const gatewayKeysLinks = () => navigation.getByRole('link', { name: 'Gateway keys', exact: true }).count();

    // Not the operator's organization: no gateway keys in the navigation, and the page, reached by
    // its address, says why.
    await expect(navigation.getByRole('link', { name: 'API keys', exact: true }).count()).resolves.toBe(1);
    await expect(gatewayKeysLinks()).resolves.toBe(0);
    await signInAt('/gateway-keys');
    await driver.screen(page, 'gateway-keys-refused', 'Gateway keys');
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\(403\).*only the operator's organization/);
    await page.getByText("This organization is not the operator's, so it has no gateway keys.").waitFor();
    await expect(gatewayKeysLinks()).resolves.toBe(0);

    // The operator names this organization (OPERATOR_ORGANIZATION_ID) once it exists; the next
    // sign-in shows its owners the area.
    platform.ctx.config.api.operatorOrganizationId = organizationId;
    await signInAt('');
    await driver.screen(page, 'overview-operator', 'Overview');
    await driver.open(page, 'Gateway keys', 'Gateway keys', 'gateway-keys');
    await page.getByLabel('Gateway key name').fill('deploy <b>pipeline</b>');
    await page.getByRole('button', { name: 'Create gateway key' }).click();
    const first = (await page.getByTestId('secret').textContent())!;
    await expect(page.getByRole('region', { name: 'New secret' }).textContent()).resolves.toContain(`X-Gateway-Key: ${first}`);
    await driver.screen(page, 'gateway-key-created', 'Gateway keys');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await expect(page.getByTestId('secret').count()).resolves.toBe(0);
    await expect.poll(() => accepted(first)).toBe(true);
    expect(await accepted(`${first}x`)).toBe(false);

    await page.getByLabel('Overlap when rotating (seconds)').fill('600');
    await page.getByRole('button', { name: 'Rotate deploy <b>pipeline</b>' }).click();
    expect(driver.dialogs.at(-1)).toBe('Rotate deploy <b>pipeline</b>? Its current secret keeps working for 600 s more, then stops.');
    await page
      .getByRole('status')
      .filter({ hasText: /^Gateway key deploy <b>pipeline<\/b> rotated; the old secret works until / })
      .waitFor();
    const second = (await page.getByTestId('secret').textContent())!;
    expect(second).not.toBe(first);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await expect.poll(() => accepted(second)).toBe(true);
    expect(await accepted(first)).toBe(true);
    const row = page.getByRole('row', { name: /^deploy <b>pipeline<\/b>/ });
    await expect.poll(() => row.locator('td').nth(4).textContent()).not.toBe('—');
    await expect(page.locator('main b').count()).resolves.toBe(0);
    await driver.screen(page, 'gateway-key-rotated', 'Gateway keys');

    await page.getByRole('button', { name: 'Revoke deploy <b>pipeline</b>' }).click();
    expect(driver.dialogs.at(-1)).toMatch(/^Revoke deploy <b>pipeline<\/b>\? Both its secrets stop working/);
    await page.getByRole('status').filter({ hasText: 'Gateway key deploy <b>pipeline</b> revoked.' }).waitFor();
    await expect.poll(() => accepted(second)).toBe(false);
    expect(await accepted(first)).toBe(false);
    await expect(row.count()).resolves.toBe(0);
    expect(driver.consoleErrors).toEqual([]);
  });

  it('hands the ownership to a colleague, deletes a second organization by its slug, then deletes the account', async () => {
    await driver.open(page, 'Organization settings', 'Organization settings', 'organization-owner');
    await page.getByLabel('New owner').selectOption(colleague.userId);
    await page.getByRole('button', { name: 'Hand over ownership' }).click();
    expect(driver.dialogs.at(-1)).toMatch(/^Hand the organization to .+\? They become an owner, and you an admin\.$/);
    await page
      .getByRole('status')
      .filter({ hasText: /is now an owner; you are an admin\.$/ })
      .waitFor();
    await expect.poll(() => page.locator('header').textContent()).toContain('Settings <i>Lab</i> 2 (admin)');
    await expect(page.getByRole('heading', { name: 'Delete the organization' }).count()).resolves.toBe(0);
    await driver.screen(page, 'organization-handed-over', 'Organization settings');

    // A second organization, acted for, deleted with its slug typed as confirmation.
    await driver.open(page, 'Your profile', 'Your profile', 'profile-admin');
    await page.getByLabel('Organization name').fill('Doomed Co');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('status').filter({ hasText: 'Doomed Co was created' }).waitFor();
    await page.getByRole('button', { name: 'Switch organization' }).click();
    await page.getByLabel('Organization it acts for').selectOption({ label: 'Doomed Co' });
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${web}/app`);
    await expect.poll(() => page.locator('header').textContent()).toContain('Doomed Co (owner)');
    await driver.open(page, 'Organization settings', 'Organization settings', 'organization-doomed');
    const slug = (await page.getByTestId('organization-facts').locator('dd').nth(1).textContent())!;
    expect(slug).toMatch(/^doomed-co/);
    const remove = page.getByRole('button', { name: 'Delete the organization for good' });
    await page.getByLabel("Type the organization's slug to confirm").fill('doomed');
    await expect(remove.isDisabled()).resolves.toBe(true);
    await page.getByLabel("Type the organization's slug to confirm").fill(slug);
    await driver.screen(page, 'organization-delete', 'Organization settings');
    await remove.click();
    expect(driver.dialogs.at(-1)).toBe(
      'Delete Doomed Co and everything it holds (memories, members, keys, its audit log)? This cannot be undone.',
    );
    await page
      .getByRole('status')
      .filter({ hasText: /^Doomed Co is deleted/ })
      .waitFor();
    await page.getByRole('button', { name: 'Sign in for another organization' }).click();
    const picker = page.getByLabel('Organization it acts for');
    await expect(picker.locator('option').allTextContents()).resolves.toEqual(['Settings <i>Lab</i> 2']);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${web}/app`);
    await expect.poll(() => page.locator('header').textContent()).toContain('Settings <i>Lab</i> 2 (admin)');

    // No longer the only owner of anything once the deleted organization is purged: the account goes.
    await driver.open(page, 'Your profile', 'Your profile', 'profile-leaving');
    const userId = (await page.locator('.facts code').textContent())!;
    await expect
      .poll(async () => (await platform.ctx.clients.organizations.listOrganizations({ userId, pageSize: 100 })).organizations.length, {
        timeout: 30_000,
      })
      .toBe(1);
    await page.getByLabel('Your e-mail address, to confirm').fill(founder.email);
    await page.getByRole('button', { name: 'Delete my account' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Your account is deleted; you left 1 organization(s) and are signed out everywhere.' })
      .waitFor();
    await driver.screen(page, 'account-deleted', 'Your profile');
    const members = await platform.ctx.clients.organizations.listMembers({ organizationId, pageSize: 100 });
    expect(members.members.map((m) => m.userId)).toEqual([colleague.userId]);
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Members', exact: true }).click();
    await page.getByText('Your session has ended. Sign in again to go on.').waitFor();
    expect(driver.consoleErrors).toEqual([]);
  });
});
