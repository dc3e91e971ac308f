// The site in headless Chromium: the home page, a post and the status page render with their
// stylesheet under the Content-Security-Policy, with no console error, a skip link that is the
// first thing the keyboard reaches, landmarks, and text that meets WCAG AA contrast.
// Screenshots are kept in test-results/web/.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTool, startTestPlatform, type TestPlatform } from '../support/platform.ts';

const chromiumPath = findTool('chromium', ['/usr/bin/chromium']);
const SHOTS = path.resolve('test-results/web');

/** WCAG 2 contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r, g, bl] = (color.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

describe.skipIf(!chromiumPath)('the site in a browser', () => {
  let platform: TestPlatform;
  let browser: Browser;

  beforeAll(async () => {
    platform = await startTestPlatform();
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    fs.mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  /** Opens a page and collects console errors and failed requests while it loads. */
  async function open(pathname: string): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()}`));
    const response = await page.goto(platform.urls.web + pathname, { waitUntil: 'load' });
    expect(response?.status()).toBe(200);
    return { page, problems };
  }

  async function checkCommon(page: Page, name: string): Promise<void> {
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await page.getByRole('main').count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Main' }).count()).toBe(1);
    expect(await page.getByRole('heading', { level: 1 }).count()).toBe(1);

    // The stylesheet applied despite the CSP: the skip link waits off-screen.
    const skip = page.getByRole('link', { name: 'Skip to content' });
    expect(await skip.evaluate((el) => el.getBoundingClientRect().bottom)).toBeLessThanOrEqual(0);
    // It is the first stop of the keyboard, and it shows itself when focused.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe('Skip to content');
    expect(await skip.evaluate((el) => el.getBoundingClientRect().top)).toBeGreaterThanOrEqual(0);
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe('main');

    // The page's own globals (this project compiles without the DOM library).
    const colors: { text: string; background: string; link?: string; meta?: string } = await page.evaluate(() => {
      const { document, getComputedStyle } = globalThis as any;
      const style = (el: unknown) => getComputedStyle(el);
      const link = document.querySelector('main a');
      const meta = document.querySelector('.meta');
      return {
        text: style(document.body).color,
        background: style(document.body).backgroundColor,
        link: link ? style(link).color : undefined,
        meta: meta ? style(meta).color : undefined,
      };
    });
    expect(contrast(colors.text, colors.background)).toBeGreaterThanOrEqual(7);
    if (colors.link) expect(contrast(colors.link, colors.background)).toBeGreaterThanOrEqual(4.5);
    if (colors.meta) expect(contrast(colors.meta, colors.background)).toBeGreaterThanOrEqual(4.5);

    const shot = await page.screenshot({ fullPage: true });
    fs.writeFileSync(path.join(SHOTS, `${name}.png`), shot);
    expect(shot.length).toBeGreaterThan(10_000);
  }

  it('renders the home page with the latest posts', async () => {
    const { page, problems } = await open('/');
    expect(await page.title()).toMatch(/^Mindgate: /);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Mindgate');
    expect(await page.getByRole('heading', { name: 'Latest posts' }).count()).toBe(1);
    expect(await page.locator('.post-list li').count()).toBeGreaterThanOrEqual(5);
    await checkCommon(page, 'home');
    expect(problems).toEqual([]);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Blog' }).click();
    await page.waitForURL(/\/blog$/);
    expect(await page.getByRole('link', { name: 'Blog', exact: true }).getAttribute('aria-current')).toBe('page');
    await page.close();
  });

  it('renders a post with its notes for agents', async () => {
    const { page, problems } = await open('/blog/the-brain');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('The Brain: one memory for every agent in your organization');
    expect(await page.getByRole('heading', { level: 2, name: 'Episodes and knowledge' }).count()).toBe(1);
    expect(await page.getByRole('complementary').getByRole('heading', { name: 'For agents' }).count()).toBe(1);
    expect(await page.locator('time').first().getAttribute('datetime')).toBe('2026-10-13');
    expect(await page.locator('table').count()).toBeGreaterThan(0);
    await checkCommon(page, 'post');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('renders the status page with every component measured', async () => {
    const { page, problems } = await open('/status');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Platform status');
    const rows = page.locator('table tbody tr');
    expect(await rows.count()).toBe(7);
    const names = await page.locator('table tbody th[scope="row"]').allTextContents();
    expect(names).toEqual(expect.arrayContaining(['Brain service', 'Records store (embedded)']));
    expect(await page.locator('.overall').textContent()).toMatch(/^(Operational|Degraded|Major outage): /);
    await checkCommon(page, 'status');
    expect(problems).toEqual([]);
    await page.close();
  });
});
