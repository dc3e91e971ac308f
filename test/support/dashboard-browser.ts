// Driving the dashboard in headless Chromium: a page that records console errors (except the
// statuses a test provokes), axe-core on each screen (no serious or critical violation), a
// screenshot of each, and signing up through the dashboard.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { TestUser } from './oauth-client.ts';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface DashboardDriver {
  /** What the browsers said went wrong, beyond what the test provokes. */
  consoleErrors: string[];
  /** Every dialog a page opened (confirmations of destructive actions), its message; each is accepted. */
  dialogs: string[];
  newPage(context: BrowserContext): Promise<Page>;
  /** Waits for the screen's heading, runs axe-core on it and keeps a screenshot named `name`. */
  screen(page: Page, name: string, heading: string | RegExp): Promise<void>;
  /** Follows the navigation link `link` to a screen. */
  open(page: Page, link: string, heading: string | RegExp, shot: string): Promise<void>;
}

/** `expected`: console errors the test provokes on purpose (resource statuses, say). */
export function dashboardDriver(options: { authUrl: string; shots: string; expected: RegExp }): DashboardDriver {
  const consoleErrors: string[] = [];
  const dialogs: string[] = [];
  fs.mkdirSync(options.shots, { recursive: true });
  const driver: DashboardDriver = {
    consoleErrors,
    dialogs,
    async newPage(context) {
      const page = await context.newPage();
      page.on('console', (msg) => {
        const url = msg.location().url;
        // The authorization server's pages name no icon, so Chromium asks for one.
        if (msg.type() === 'error' && !options.expected.test(msg.text()) && url !== `${options.authUrl}/favicon.ico`) {
          consoleErrors.push(`${msg.text()} at ${url}`);
        }
      });
      page.on('pageerror', (err) => consoleErrors.push(`page error: ${err.message}`));
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.accept();
      });
      return page;
    },
    async screen(page, name, heading) {
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(await axeViolations(page), `axe on ${name}`).toEqual([]);
      await page.screenshot({ path: path.join(options.shots, `${name}.png`), fullPage: true });
    },
    async open(page, link, heading, shot) {
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: link, exact: true }).click();
      await driver.screen(page, shot, heading);
    },
  };
  return driver;
}

/** axe-core on the page as it is: the serious and critical violations. */
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

/** A new user signs up from the dashboard's sign-in, founding `organization`, and consents. */
export async function signUpThroughDashboard(page: Page, web: string, user: TestUser, name: string, organization: string): Promise<void> {
  await page.goto(`${web}/app`);
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('E-mail address').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByLabel('Organization name').fill(organization);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL(`${web}/app`);
}
