// Dashboard load benchmark, in headless Chromium against the real platform: the bytes of
// JavaScript a first load fetches (compressed, as sent), and how long until the page is usable,
// in a fresh browser context each time (nothing cached):
//   - shell: from navigation start to the dashboard's own first screen (`/app/signed-out`:
//     HTML, script, style sheet, parse, render), read from the page's performance clock;
//   - signed in: from clicking Allow on the consent page (with the authorization server's
//     session open) to the Overview filled in (callback, code exchange, account, memberships,
//     organization and usage from the Agents API).
//
//   ./node_modules/.bin/node test/bench/dashboard.bench.ts      (LOADS=10)
import { chromium, type BrowserContext } from 'playwright-core';
import { newTestUser, startOAuthTestPlatform } from '../support/oauth-client.ts';
import { findTool } from '../support/platform.ts';
import { percentile, printTable } from './support.ts';

const LOADS = Number(process.env.LOADS ?? 10);
const chromiumPath = findTool('chromium', ['/usr/bin/chromium']);
if (!chromiumPath) throw new Error('the dashboard benchmark needs Chromium (scripts/install-test-tools.sh)');

const platform = await startOAuthTestPlatform();
const web = platform.ctx.config.publicUrls.web;
const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--headless', '--no-sandbox', '--disable-gpu'] });

function summary(label: string, values: number[]): Record<string, string | number> {
  const sorted = [...values].sort((a, b) => a - b);
  return { load: label, runs: sorted.length, 'p50 ms': percentile(sorted, 50), 'p95 ms': percentile(sorted, 95), 'max ms': sorted.at(-1)! };
}

async function shellLoad(): Promise<{ ms: number; jsBytes: number }> {
  const context = await browser.newContext();
  // The entry and the chunks it imports are several files: every size is read before the context
  // closes, or the later ones would be lost.
  const sizes: Promise<number>[] = [];
  context.on('response', (res) => {
    if (res.url().endsWith('.js')) sizes.push(res.allHeaders().then((h) => Number(h['content-length'] ?? 0)));
  });
  const page = await context.newPage();
  await page.goto(`${web}/app/signed-out`);
  await page.getByText('You have signed out.').waitFor();
  const ms = await page.evaluate(() => performance.now());
  await page.waitForLoadState('networkidle');
  const jsBytes = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
  await context.close();
  return { ms, jsBytes };
}

async function signUp(context: BrowserContext): Promise<void> {
  const user = newTestUser('bench');
  const page = await context.newPage();
  await page.goto(`${web}/app`);
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Your name').fill('Bench User');
  await page.getByLabel('E-mail address').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByLabel('Organization name').fill('Bench Org');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByText('Plan and usage').waitFor();
  await page.close();
}

async function signedInLoad(context: BrowserContext): Promise<number> {
  const page = await context.newPage();
  await page.goto(`${web}/app`);
  const allow = page.getByRole('button', { name: 'Allow' });
  await allow.waitFor();
  const started = performance.now();
  await allow.click();
  await page.getByText('Plan and usage').waitFor();
  const ms = performance.now() - started;
  await page.close();
  return ms;
}

try {
  const shells: number[] = [];
  let jsBytes = 0;
  for (let i = 0; i < LOADS; i++) {
    const load = await shellLoad();
    shells.push(load.ms);
    jsBytes = load.jsBytes;
  }
  // One account (the authorization server's session cookie stays in this context), then fresh pages.
  const context = await browser.newContext();
  await signUp(context);
  const signedIn: number[] = [];
  for (let i = 0; i < LOADS; i++) signedIn.push(await signedInLoad(context));
  await context.close();
  console.log(`JavaScript of a first load: ${jsBytes} bytes as sent (gzip)`);
  printTable('Dashboard loads (fresh context each for the shell)', [summary('shell', shells), summary('signed in', signedIn)]);
} finally {
  await browser.close();
  await platform.stop();
}
