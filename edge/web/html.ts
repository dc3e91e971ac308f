// Server-rendered HTML of the site: one layout (language, landmarks, skip link, navigation) and
// one function per kind of page. Everything interpolated is escaped; rendered Markdown comes
// from markdown.ts, which escapes raw HTML itself.
import type { Content, Page, Post } from './content.ts';
import { escapeHtml as e } from '../http/escape-html.ts';
import type { PlatformStatus } from './status.ts';

export const SITE_CSS = `
:root { color-scheme: light; --text: #1b1b1f; --muted: #4a4a55; --link: #0645ad; --bg: #ffffff;
  --panel: #f4f5f7; --line: #d6d8de; --focus: #b45309; --ok: #166534; --warn: #92400e; --bad: #991b1b; }
* { box-sizing: border-box; }
html { font-size: 100%; }
body { margin: 0; font: 1.0625rem/1.6 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--text); background: var(--bg); }
a { color: var(--link); text-underline-offset: 0.15em; }
a:focus-visible, button:focus-visible, [tabindex]:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip-link { position: absolute; left: 0.5rem; top: -4rem; padding: 0.5rem 1rem; background: var(--text); color: #fff; z-index: 10; }
.skip-link:focus { top: 0.5rem; }
.site-header, .site-footer { border-color: var(--line); border-style: solid; border-width: 0 0 1px; }
.site-footer { border-width: 1px 0 0; margin-top: 3rem; color: var(--muted); font-size: 0.95rem; }
.wrap { max-width: 46rem; margin: 0 auto; padding: 1rem 1.25rem; }
.site-header .wrap { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 0.5rem 1.5rem; }
.brand { font-weight: 700; font-size: 1.2rem; text-decoration: none; color: var(--text); }
nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem 1.1rem; margin: 0; padding: 0; }
nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 0.15em; }
main:focus, main:focus-visible { outline: none; }
h1 { font-size: 2rem; line-height: 1.25; margin: 1.5rem 0 0.5rem; }
h2 { font-size: 1.4rem; margin-top: 2rem; }
h3 { font-size: 1.15rem; }
.meta, .lead { color: var(--muted); }
.lead { font-size: 1.15rem; }
pre { background: var(--panel); padding: 0.9rem; overflow-x: auto; border-radius: 6px; font-size: 0.9rem; line-height: 1.45; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
table { border-collapse: collapse; width: 100%; margin: 1rem 0; font-size: 0.95rem; }
th, td { border: 1px solid var(--line); padding: 0.4rem 0.6rem; text-align: left; vertical-align: top; }
th { background: var(--panel); }
caption { text-align: left; font-weight: 600; padding-bottom: 0.4rem; }
.post-list { list-style: none; padding: 0; }
.post-list li { margin: 0 0 1.5rem; }
.post-list h2, .post-list h3 { margin: 0 0 0.2rem; font-size: 1.2rem; }
.agent-notes { background: var(--panel); border-left: 4px solid var(--line); padding: 0.25rem 1rem 0.75rem; margin-top: 2.5rem; }
.status-operational { color: var(--ok); font-weight: 600; }
.status-degraded { color: var(--warn); font-weight: 600; }
.status-outage, .status-major_outage { color: var(--bad); font-weight: 600; }
.overall { font-size: 1.2rem; padding: 0.75rem 1rem; background: var(--panel); border-radius: 6px; }
.footer-links { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; list-style: none; padding: 0; }
`;

/** A small mark for browser tabs, so browsers do not ask for /favicon.ico. */
export const SITE_ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1b1b1f"/><path d="M8 23V9l8 8 8-8v14" fill="none" stroke="#fff" stroke-width="3" stroke-linejoin="round"/></svg>`;

export interface LayoutOptions {
  title: string;
  description: string;
  /** Path of this page (for the canonical URL and the current navigation item). */
  path: string;
  /** Path of the Markdown twin. */
  twin: string;
  baseUrl: string;
  content: Content;
  body: string;
}

function formatDate(date: string): string {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
}

export function timeTag(date: string): string {
  return `<time datetime="${e(date)}">${e(formatDate(date))}</time>`;
}

function navItems(content: Content): Array<{ label: string; path: string; order: number }> {
  const items = content.pages
    .filter((p) => p.nav)
    .map((p) => ({ label: p.nav!.label, path: p.slug === 'home' ? '/' : `/${p.slug}`, order: p.nav!.order }));
  items.push({ label: 'Blog', path: '/blog', order: 1 });
  return items.sort((a, b) => a.order - b.order);
}

export function layout(options: LayoutOptions): string {
  const { content, path } = options;
  const current = (itemPath: string) =>
    itemPath === path || (itemPath === '/blog' && path.startsWith('/blog/')) ? ' aria-current="page"' : '';
  const nav = navItems(content)
    .map((item) => `<li><a href="${e(item.path)}"${current(item.path)}>${e(item.label)}</a></li>`)
    .join('');
  const title = path === '/' ? `${content.site.name}: ${content.site.tagline}` : `${options.title} · ${content.site.name}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)}</title>
<meta name="description" content="${e(options.description)}">
<link rel="canonical" href="${e(options.baseUrl + path)}">
<link rel="alternate" type="text/markdown" href="${e(options.twin)}">
<link rel="alternate" type="text/plain" href="/llms.txt" title="llms.txt">
<link rel="stylesheet" href="/assets/site.css">
<link rel="icon" href="/assets/icon.svg" type="image/svg+xml">
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
<div class="wrap">
<a class="brand" href="/">${e(content.site.name)}</a>
<nav aria-label="Main"><ul>${nav}</ul></nav>
</div>
</header>
<main id="main" tabindex="-1">
<div class="wrap">
${options.body}
</div>
</main>
<footer class="site-footer">
<div class="wrap">
<p>${e(content.site.name)}: ${e(content.site.tagline)}</p>
<ul class="footer-links" aria-label="For machines">
<li><a href="${e(options.twin)}">This page in Markdown</a></li>
<li><a href="/llms.txt">llms.txt</a></li>
<li><a href="/openapi.json">OpenAPI</a></li>
<li><a href="/sitemap.xml">Sitemap</a></li>
<li><a href="/status">Status</a></li>
</ul>
</div>
</footer>
</body>
</html>
`;
}

function postMeta(post: Post): string {
  const updated = post.updated ? ` · updated ${timeTag(post.updated)}` : '';
  return `${timeTag(post.date)}${updated} · ${e(post.category)} · ${e(post.author)} · ${post.readingMinutes} min read`;
}

export function postListHtml(posts: Post[], headingLevel: 2 | 3): string {
  const h = `h${headingLevel}`;
  const items = posts
    .map(
      (p) => `<li><article>
<${h}><a href="/blog/${e(p.slug)}">${e(p.title)}</a></${h}>
<p class="meta">${timeTag(p.date)} · ${e(p.category)}</p>
<p>${e(p.summary)}</p>
</article></li>`,
    )
    .join('\n');
  return `<ul class="post-list">\n${items}\n</ul>`;
}

export function pageBody(page: Page, extra = ''): string {
  return `<article>
<h1>${e(page.title)}</h1>
${page.html}
${extra}
</article>`;
}

export function homeExtra(content: Content): string {
  const latest = content.posts.slice(0, 5);
  if (latest.length === 0) return '';
  return `<section aria-labelledby="latest-posts">
<h2 id="latest-posts">Latest posts</h2>
${postListHtml(latest, 3)}
<p><a href="/blog">All posts</a></p>
</section>`;
}

export function blogIndexBody(content: Content): string {
  return `<h1>Blog</h1>
<p class="lead">How Mindgate works, written by the people who build it. Categories: Product and Engineering.</p>
${postListHtml(content.posts, 2)}`;
}

export function postBody(post: Post): string {
  const list = (items: string[]) => `<ul>${items.map((i) => `<li>${e(i)}</li>`).join('')}</ul>`;
  return `<article>
<header>
<h1>${e(post.title)}</h1>
<p class="meta">${postMeta(post)}</p>
<p class="lead">${e(post.summary)}</p>
</header>
${post.html}
<aside class="agent-notes" aria-labelledby="agent-notes">
<h2 id="agent-notes">For agents</h2>
<p>${e(post.agent.summary)}</p>
<h3>When to use</h3>
${list(post.agent.whenToUse)}
<h3>Key claims</h3>
${list(post.agent.keyClaims)}
${post.agent.relatedConcepts.length > 0 ? `<h3>Related concepts</h3>\n${list(post.agent.relatedConcepts)}` : ''}
<p>Also as <a href="/blog/${e(post.slug)}.md">Markdown</a> and <a href="/api/v1/blog/posts/${e(post.slug)}">JSON</a>.</p>
</aside>
</article>`;
}

const STATUS_LABELS: Record<string, string> = {
  operational: 'Operational',
  degraded: 'Degraded',
  outage: 'Outage',
  major_outage: 'Major outage',
};

export function statusLabel(status: string): string {
  return STATUS_LABELS[status] ?? status;
}

export function statusHtml(status: PlatformStatus): string {
  const rows = status.components
    .map(
      (c) => `<tr>
<th scope="row">${e(c.name)}</th>
<td><span class="status-${e(c.status)}">${e(statusLabel(c.status))}</span>${c.detail ? `<br><span class="meta">${e(c.detail)}</span>` : ''}</td>
<td>${c.latency_ms.toFixed(1)} ms</td>
</tr>`,
    )
    .join('\n');
  return `<section aria-labelledby="current-status">
<h2 id="current-status">Current status</h2>
<p class="overall"><span class="status-${e(status.status)}">${e(statusLabel(status.status))}</span>: ${e(status.description)}.
Checked at <time datetime="${e(status.checked_at)}">${e(status.checked_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</time>.</p>
<table>
<caption>Components</caption>
<thead><tr><th scope="col">Component</th><th scope="col">Status</th><th scope="col">Check time</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>`;
}

export function notFoundBody(): string {
  return `<h1>Page not found</h1>
<p class="lead">There is nothing at this address.</p>
<ul>
<li><a href="/">Home</a></li>
<li><a href="/blog">Blog</a></li>
<li><a href="/developers">Developers</a>: the Web API and discovery files</li>
<li><a href="/sitemap.xml">Sitemap</a> and <a href="/llms.txt">llms.txt</a></li>
</ul>`;
}
