// The interactive API references (/docs on the REST API and on the gateway) in headless
// Chromium: Swagger UI renders the OpenAPI document under the platform's page security headers
// (a CSP without 'unsafe-inline', no framing, no sniffing, no referrer), with no CSP violation
// or other console error.
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTool, startTestPlatform, type TestPlatform } from '../support/platform.ts';

const chromiumPath = findTool('chromium', ['/usr/bin/chromium']);

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform();
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('the /docs pages', () => {
  it.each(['api', 'gateway'] as const)('carry the page security headers on %s', async (surface) => {
    const res = await fetch(`${platform.urls[surface]}/docs`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    await res.arrayBuffer();
  });
});

describe.skipIf(!chromiumPath)('the /docs pages in a browser', () => {
  let browser: Browser;

  beforeAll(async () => {
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
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it.each([
    ['api', 'Mindgate'],
    ['gateway', 'Mindgate'],
  ] as const)('render Swagger UI on %s with no CSP violation', async (surface, title) => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error' || /Content Security Policy/i.test(msg.text())) problems.push(`console: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()}`));
    await page.goto(`${platform.urls[surface]}/docs`, { waitUntil: 'load' });
    // Swagger UI fetched the document and rendered its title and at least one operation.
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: 30_000 });
    expect(await page.locator('.swagger-ui .info .title').textContent()).toContain(title);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    // An opened operation renders its parameters and highlighted examples, still within the CSP.
    await page.locator('.opblock-summary').first().click();
    await page.locator('.opblock-body').first().waitFor({ timeout: 30_000 });
    // The stylesheet applied: Swagger UI's own layout class has its font.
    const font = await page
      .locator('.swagger-ui .info .title')
      .evaluate((el) => (globalThis as any).getComputedStyle(el).fontFamily as string);
    expect(font).toMatch(/sans-serif/);
    expect(problems).toEqual([]);
    await page.close();
  });
});
