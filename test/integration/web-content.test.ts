// The site's content: the repository's own files load and say what the issue asks for; bad
// files stop the start with their name and the reason; the Markdown renderer treats content as
// untrusted; the negotiation function follows RFC 9110 on the reference table.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ContentError, loadContent, parsePage, parsePost } from '../../edge/web/content.ts';
import { llmsTxt } from '../../edge/web/discovery.ts';
import { renderMarkdown } from '../../edge/web/markdown.ts';
import { negotiate, parseAccept, qualityOf } from '../../edge/http/negotiate.ts';

const CONTENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../content');
const OFFERS = ['text/html;charset=utf-8', 'text/markdown;charset=utf-8;variant=gfm'];

const POST = `---
title: A post
slug: a-post
date: 2026-10-01
category: Engineering
summary: What it says.
agent:
  summary: For agents.
  when_to_use: [When testing.]
  key_claims: [It loads.]
---

Intro text.

## First section

Body.
`;

let tmp: string | undefined;
afterEach(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
});

describe("the repository's content", () => {
  const content = loadContent(CONTENT_DIR);

  it('has at least six posts documenting the platform, with every agent field', () => {
    const slugs = content.posts.map((p) => p.slug);
    expect(slugs).toEqual(
      expect.arrayContaining(['mcp-gateway', 'stateless-oauth-facade', 'the-brain', 'rest-api', 'operating-mindgate', 'changelog']),
    );
    for (const post of content.posts) {
      expect(['Product', 'Engineering']).toContain(post.category);
      expect(post.agent.summary.length).toBeGreaterThan(40);
      expect(post.agent.whenToUse.length).toBeGreaterThan(0);
      expect(post.agent.keyClaims.length).toBeGreaterThan(0);
      expect(post.agent.relatedConcepts.length).toBeGreaterThan(0);
      expect(post.sections.length).toBeGreaterThan(1);
      expect(post.wordCount).toBeGreaterThan(250);
    }
    expect(new Set(content.posts.map((p) => p.category))).toEqual(new Set(['Product', 'Engineering']));
  });

  it('has the home, about, developers and status pages', () => {
    expect(content.pages.map((p) => p.slug).sort()).toEqual(['about', 'developers', 'home', 'status']);
  });

  it('lists posts newest first', () => {
    const dates = content.posts.map((p) => p.date);
    expect(dates).toEqual([...dates].sort().reverse());
  });

  it('replaces the public origins in the files with the configured ones', () => {
    const withUrls = loadContent(CONTENT_DIR, { variables: { base_url: 'https://gw.example.com' } });
    const brain = withUrls.postBySlug.get('the-brain')!;
    expect(brain.body).toContain('https://gw.example.com/brain/mcp');
    expect(brain.body).not.toContain('{base_url}');
    // Placeholders that are not variables (paths of the API) stay.
    expect(withUrls.postBySlug.get('mcp-gateway')!.body).toContain('{server_name}');
  });

  it('generates llms.txt in the llmstxt.org shape: H1, blockquote, then H2 sections of links', () => {
    const text = llmsTxt(content, 'https://www.example.com');
    const lines = text.split('\n');
    expect(lines[0]).toBe('# Mindgate');
    expect(lines[2]).toMatch(/^> \S/);
    const h2 = lines.filter((l) => l.startsWith('## '));
    expect(h2).toEqual(expect.arrayContaining(['## Docs', '## Product', '## Engineering', '## Optional']));
    expect(lines.filter((l) => l.startsWith('# '))).toHaveLength(1);
    for (const line of lines.filter((l) => l.startsWith('- '))) {
      expect(line).toMatch(/^- \[[^\]]+\]\(https:\/\/www\.example\.com\/[^)\s]*\): \S/);
    }
    for (const post of content.posts) expect(text).toContain(`(https://www.example.com/blog/${post.slug}.md)`);
  });
});

describe('content validation', () => {
  const expectError = (fn: () => unknown, pattern: RegExp) => {
    expect(fn).toThrow(ContentError);
    expect(fn).toThrow(pattern);
  };

  it('accepts a well-formed post', () => {
    const post = parsePost('/x/a-post.md', POST);
    expect(post).toMatchObject({ slug: 'a-post', category: 'Engineering', author: 'The Mindgate team', intro: 'Intro text.' });
    expect(post.sections).toEqual([{ heading: 'First section', anchor: 'first-section', text: 'Body.' }]);
  });

  it('names the file and the field that is wrong', () => {
    expectError(() => parsePost('/x/a-post.md', 'no front matter'), /a-post\.md: missing YAML front matter/);
    expectError(() => parsePost('/x/a-post.md', POST.replace('Engineering', 'Gossip')), /category/);
    expectError(() => parsePost('/x/a-post.md', POST.replace('2026-10-01', '2026-02-30')), /date: expected a date/);
    expectError(() => parsePost('/x/other.md', POST), /must match the file name "other"/);
    expectError(() => parsePost('/x/a-post.md', POST.replace('  key_claims: [It loads.]\n', '')), /agent\.key_claims/);
    expectError(() => parsePost('/x/a-post.md', POST.replace('title: A post', 'title: A post\nsurprise: 1')), /surprise|Unrecognized/);
    expectError(() => parsePost('/x/a-post.md', `${POST}\n# Second title\n`), /level-1 heading/);
    expectError(() => parsePost('/x/a-post.md', POST.replace('title: A post', 'title: [unclosed')), /invalid YAML/);
  });

  it('refuses a content folder without its required pages or with a reserved slug', () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-content-'));
    fs.mkdirSync(path.join(tmp, 'pages'));
    fs.writeFileSync(path.join(tmp, 'site.yaml'), 'name: X\ntagline: Y\ndescription: Z\n');
    const page = (slug: string) => `---\ntitle: T\nslug: ${slug}\ndescription: D\nupdated: 2026-01-01\n---\n\nText.\n`;
    for (const slug of ['home', 'about', 'developers']) fs.writeFileSync(path.join(tmp, 'pages', `${slug}.md`), page(slug));
    expect(() => loadContent(tmp!)).toThrow(/status\.md: required page is missing/);
    fs.writeFileSync(path.join(tmp, 'pages', 'status.md'), page('status'));
    expect(loadContent(tmp).pages).toHaveLength(4);
    fs.writeFileSync(path.join(tmp, 'pages', 'sitemap.md'), page('sitemap'));
    expect(() => loadContent(tmp!)).toThrow(/"sitemap" is a reserved path/);
    expect(() => loadContent(path.join(tmp!, 'missing'))).toThrow(/site\.yaml: not found/);
  });

  it('parses pages', () => {
    const page = parsePage('/x/about.md', '---\ntitle: About\nslug: about\ndescription: D\nupdated: 2026-01-01\n---\n\nHello **world**.\n');
    expect(page.html).toContain('<strong>world</strong>');
  });
});

describe('Markdown rendering', () => {
  it('shows raw HTML as text', () => {
    const { html } = renderMarkdown('Hello <script>alert(1)</script> and <img src=x onerror=alert(1)>\n\n<div onclick="x()">block</div>\n');
    expect(html).not.toMatch(/<script|<img|<div/);
    expect(html).toContain('&lt;script&gt;');
  });

  it('drops links and images with unsafe schemes but keeps safe ones', () => {
    const { html } = renderMarkdown(
      '[a](javascript:alert(1)) [b](https://example.com/x?y=1&z=2) [c](/blog) ![d](data:text/html,x) [e](mailto:a@b.c)',
    );
    expect(html).not.toContain('javascript:');
    expect(html).not.toContain('data:text');
    expect(html).toContain('<a href="https://example.com/x?y=1&amp;z=2">b</a>');
    expect(html).toContain('<a href="/blog">c</a>');
    expect(html).toContain('<a href="mailto:a@b.c">e</a>');
  });

  it('gives headings unique anchors and escapes code', () => {
    const { html, headings } = renderMarkdown('## Rate limits & headers\n\n## Rate limits & headers\n\n```\n<b>x</b>\n```\n');
    expect(headings.map((h) => h.anchor)).toEqual(['rate-limits-headers', 'rate-limits-headers-1']);
    expect(html).toContain('<h2 id="rate-limits-headers">Rate limits &amp; headers</h2>');
    expect(html).toContain('&lt;b&gt;x&lt;/b&gt;');
  });
});

describe('content negotiation (RFC 9110 §12.5.1)', () => {
  // The table of shared/reference/web-standards.md.
  const table: Array<[string | undefined, 'markdown' | 'html' | 406]> = [
    ['text/markdown, text/html;q=0.9', 'markdown'],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'html'],
    ['*/*', 'html'],
    ['text/*;q=0.5, text/html;q=0', 'markdown'],
    ['text/markdown;q=0, */*', 'html'],
    ['application/json', 406],
    // No Accept header: anything goes, the server's default.
    [undefined, 'html'],
    ['text/markdown', 'markdown'],
    ['text/html;q=0.5, text/markdown;q=0.6', 'markdown'],
    ['text/html;q=0.6, text/markdown;q=0.6', 'html'],
    ['TEXT/MARKDOWN', 'markdown'],
    ['text/markdown;charset=utf-8', 'markdown'],
    ['text/markdown;variant=GFM', 'markdown'],
    ['text/*', 'html'],
    ['*/*;q=0.1, text/markdown;q=0.2', 'markdown'],
    ['text/html;q=0, text/markdown;q=0', 406],
    ['*/*;q=0', 406],
    ['image/png, application/pdf', 406],
  ];
  it.each(table)('Accept: %s → %s', (accept, expected) => {
    const chosen = negotiate(accept, OFFERS);
    const result = chosen === undefined ? 406 : chosen.startsWith('text/markdown') ? 'markdown' : 'html';
    expect(result).toBe(expected);
  });

  it('ignores malformed members and treats a header with none valid as absent', () => {
    expect(parseAccept('')).toBeUndefined();
    expect(parseAccept('garbage')).toBeUndefined();
    expect(parseAccept('text/markdown;q=2, text/html;q=abc')).toBeUndefined();
    expect(negotiate('nonsense, text/markdown', OFFERS)).toBe(OFFERS[1]);
    expect(negotiate('*/html, text/markdown;q=0.5', OFFERS)).toBe(OFFERS[1]);
    expect(qualityOf(parseAccept('text/markdown;q=0.333'), 'text/markdown')).toBe(0.333);
    // Parameters after q are accept-extensions, not media type parameters.
    expect(qualityOf(parseAccept('text/markdown;q=0.5;foo=bar'), 'text/markdown')).toBe(0.5);
    expect(qualityOf(parseAccept('text/markdown;q=0.5;foo="a,b"'), 'text/markdown')).toBe(0.5);
  });
});
