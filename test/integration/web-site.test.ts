// The site on the real platform: the five negotiation rules of SERVICE-SPEC §4.4 (the reference
// table as requests), Markdown twins, real 404s with a Markdown site map, and the discovery
// files (llms.txt, llms-full.txt, robots.txt, sitemap.xml).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

let platform: TestPlatform;
let web: string;
let publicWeb: string;

const get = (path: string, accept?: string, init: RequestInit = {}) =>
  fetch(web + path, { ...init, redirect: 'manual', headers: accept === undefined ? {} : { accept } });

beforeAll(async () => {
  platform = await startTestPlatform();
  web = platform.urls.web;
  publicWeb = platform.ctx.config.publicUrls.web;
});

afterAll(async () => {
  await platform?.stop();
});

const PAGES = ['/', '/about', '/developers', '/status', '/blog', '/blog/the-brain', '/blog/changelog'];
const TWINS: Record<string, string> = {
  '/': '/index.md',
  '/about': '/about.md',
  '/developers': '/developers.md',
  '/status': '/status.md',
  '/blog': '/blog.md',
  '/blog/the-brain': '/blog/the-brain.md',
  '/blog/changelog': '/blog/changelog.md',
};

describe('content negotiation on site pages', () => {
  // shared/reference/web-standards.md, as requests.
  const table: Array<[string | undefined, 'markdown' | 'html' | 406]> = [
    ['text/markdown, text/html;q=0.9', 'markdown'],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'html'],
    ['*/*', 'html'],
    ['text/*;q=0.5, text/html;q=0', 'markdown'],
    ['text/markdown;q=0, */*', 'html'],
    ['application/json', 406],
    [undefined, 'html'],
  ];

  it.each(table)('Accept: %s → %s', async (accept, expected) => {
    for (const path of ['/about', '/blog/the-brain', '/']) {
      const res = await get(path, accept);
      expect(res.headers.get('vary')).toBe('Accept');
      if (expected === 406) {
        expect(res.status).toBe(406);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
        continue;
      }
      expect(res.status).toBe(200);
      const body = await res.text();
      if (expected === 'markdown') {
        expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
        expect(body).toMatch(/^# /);
        expect(res.headers.get('link')).toBeNull();
      } else {
        expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(body).toMatch(/^<!doctype html>/);
      }
    }
  });

  it('honours quality values', async () => {
    const md = await get('/about', 'text/html;q=0.4, text/markdown;q=0.5');
    expect(md.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    const html = await get('/about', 'text/html;q=0.5, text/markdown;q=0.4');
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('links every HTML page to its Markdown twin', async () => {
    for (const path of PAGES) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('link'), path).toBe(`<${TWINS[path]}>; rel=alternate; type=text/markdown`);
      expect(await res.text()).toContain(`<link rel="alternate" type="text/markdown" href="${TWINS[path]}">`);
    }
  });

  it('serves the twin at the .md path without any Accept header, and it matches the negotiated Markdown', async () => {
    for (const path of PAGES) {
      const twin = await get(TWINS[path], 'text/html');
      expect(twin.status, TWINS[path]).toBe(200);
      expect(twin.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      expect(twin.headers.get('vary')).toBeNull();
      expect(twin.headers.get('link')).toBe(`<${publicWeb}${path}>; rel=canonical; type=text/html`);
      const negotiated = await get(path, 'text/markdown');
      const [a, b] = [await twin.text(), await negotiated.text()];
      // The status page is measured at each request; its twin differs only in the figures.
      if (path !== '/status') expect(a).toBe(b);
    }
  });

  it('renders a post twin with its text and its notes for agents', async () => {
    const md = await (await get('/blog/the-brain.md')).text();
    expect(md).toMatch(/^# The Brain: /);
    expect(md).toContain('## Episodes and knowledge');
    expect(md).toContain('## For agents');
    expect(md).toContain('### Key claims');
    expect(md).toContain(`${platform.ctx.config.publicUrls.gateway}/brain/mcp`);
    const home = await (await get('/index.md')).text();
    expect(home).toContain('## Latest posts');
    expect(home).toMatch(/- \[[^\]]+\]\(\/blog\/[a-z0-9-]+\.md\)/);
  });

  it('shows the measured status on the status page, in both forms', async () => {
    const html = await (await get('/status')).text();
    expect(html).toContain('<caption>Components</caption>');
    expect(html).toContain('Brain service');
    expect((await get('/status')).headers.get('cache-control')).toBe('no-cache');
    const md = await (await get('/status.md')).text();
    expect(md).toContain('## Current status');
    expect(md).toMatch(/\| Records store \(embedded\) \| (Operational|Degraded|Outage)/);
  });
});

describe('unknown paths', () => {
  it('are a real 404 with a Markdown site map when Markdown is accepted', async () => {
    for (const accept of ['text/markdown', 'text/markdown, text/html;q=0.5']) {
      const res = await get('/no/such/page', accept);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      expect(res.headers.get('vary')).toBe('Accept');
      const body = await res.text();
      expect(body).toContain('(/sitemap.xml)');
      expect(body).toContain('(/llms.txt)');
      expect(body).toContain('(/developers.md)');
      expect(body.length).toBeLessThan(1000);
    }
  });

  it('are a real 404 page in HTML for browsers, with its twin link', async () => {
    const res = await get('/nope', 'text/html');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('link')).toBe('</nope.md>; rel=alternate; type=text/markdown');
    expect(await res.text()).toContain('<h1>Page not found</h1>');
    const twin = await get('/nope.md');
    expect(twin.status).toBe(404);
    expect(await twin.text()).toContain('(/sitemap.xml)');
  });

  it('stay 404 (not 406) for clients that accept neither, and for unknown posts and twins', async () => {
    const json = await get('/nope', 'application/json');
    expect(json.status).toBe(404);
    expect(json.headers.get('content-type')).toBe('application/problem+json');
    expect((await get('/blog/no-such-post')).status).toBe(404);
    expect((await get('/blog/no-such-post.md')).status).toBe(404);
    expect((await get('/home')).status).toBe(404);
    expect((await get('/%E0%A4%A')).status).toBe(404);
    const long = await get(`/${'x'.repeat(3000)}`, 'text/markdown');
    expect(long.status).toBe(404);
    expect((await long.text()).length).toBeLessThan(1000);
  });

  it('redirect a trailing slash to the page', async () => {
    const res = await get('/about/?x=1');
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/about?x=1');
  });

  it('refuse other methods with 405', async () => {
    const res = await get('/about', undefined, { method: 'POST', body: 'x' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('GET');
  });
});

describe('site pages', () => {
  it('send security headers and a stylesheet', async () => {
    const res = await get('/');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const css = await get('/assets/site.css');
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('are accessible documents: language, one h1, landmarks, skip link first', async () => {
    for (const path of PAGES) {
      const html = await (await get(path)).text();
      expect(html).toContain('<html lang="en">');
      expect(html.match(/<h1[\s>]/g), path).toHaveLength(1);
      expect(html).toContain('<main id="main"');
      expect(html).toContain('<nav aria-label="Main">');
      expect(html).toMatch(/<body>\s*<a class="skip-link" href="#main">/);
      expect(html).toMatch(/<title>[^<]+<\/title>/);
    }
    const blog = await (await get('/blog')).text();
    expect(blog).toContain('<a href="/blog" aria-current="page">');
  });

  it('answer HEAD without a body', async () => {
    const res = await get('/about', undefined, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await res.text()).toBe('');
  });
});

describe('discovery files', () => {
  it('llms.txt is generated from the content, in the llmstxt.org format', async () => {
    const res = await get('/llms.txt');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const text = await res.text();
    expect(text.startsWith('# Mindgate\n\n> ')).toBe(true);
    expect(text).toContain('## Optional');
    const posts = (await (await fetch(`${web}/api/v1/blog/posts?limit=100`)).json()) as {
      data: Array<{ slug: string; agent: { summary: string } }>;
    };
    for (const post of posts.data)
      expect(text).toContain(`](${publicWeb}/blog/${post.slug}.md): ${post.agent.summary.replace(/\s+/g, ' ')}`);
  });

  it('llms-full.txt holds the full text of every page and post', async () => {
    const text = await (await get('/llms-full.txt')).text();
    expect(text.match(/^# /gm)).toHaveLength(1);
    expect(text).toContain('## The Brain: one memory for every agent');
    expect(text).toContain('### Episodes and knowledge');
    expect(text).toContain('## Developers');
  });

  it('robots.txt allows crawling and names the sitemap', async () => {
    const text = await (await get('/robots.txt')).text();
    expect(text).toMatch(/^User-agent: \*$/m);
    expect(text).toContain(`Sitemap: ${publicWeb}/sitemap.xml`);
  });

  it('sitemap.xml is a valid sitemap of every page and post with lastmod', async () => {
    const res = await get('/sitemap.xml');
    expect(res.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    const xml = await res.text();
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, isArray: (name) => name === 'url' }).parse(xml);
    expect(doc.urlset['@_xmlns']).toBe('http://www.sitemaps.org/schemas/sitemap/0.9');
    const urls = doc.urlset.url as Array<{ loc: string; lastmod: string }>;
    const locs = urls.map((u) => u.loc);
    for (const path of PAGES) expect(locs).toContain(publicWeb + path);
    const posts = (await (await fetch(`${web}/api/v1/blog/posts?limit=100`)).json()) as {
      data: Array<{ slug: string; date: string; updated: string | null }>;
    };
    for (const post of posts.data) {
      const entry = urls.find((u) => u.loc === `${publicWeb}/blog/${post.slug}`);
      expect(entry?.lastmod).toBe(post.updated ?? post.date);
    }
    for (const url of urls) {
      expect(url.lastmod).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(new URL(url.loc).origin).toBe(new URL(publicWeb).origin);
    }
    expect(new Set(locs).size).toBe(locs.length);
  });
});
