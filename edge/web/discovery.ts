// Discovery files, generated from the content at start: /llms.txt (llmstxt.org), /llms-full.txt,
// /robots.txt and /sitemap.xml (sitemaps.org protocol). URLs in them are absolute, built from the
// configured public origin of the site, never from a request's Host header.
import type { Content } from './content.ts';
import { escapeMarkdownInline as m } from './markdown.ts';
import { homeMarkdown, pageMarkdown, postMarkdown } from './twins.ts';

/** Every HTML page of the site with its Markdown twin and last modification date. */
export function sitePages(content: Content): Array<{ path: string; twin: string; lastmod: string; title: string; description: string }> {
  // biome-ignore lint/complexity/useMathMinMax: the dates are ISO strings, which Math.max cannot compare
  const newest = content.posts.reduce((max, p) => ((p.updated ?? p.date) > max ? (p.updated ?? p.date) : max), '0000-00-00');
  const out = content.pages.map((page) => ({
    path: page.slug === 'home' ? '/' : `/${page.slug}`,
    twin: page.slug === 'home' ? '/index.md' : `/${page.slug}.md`,
    // The home page lists the latest posts, so it changes when they do.
    lastmod: page.slug === 'home' && newest > page.updated ? newest : page.updated,
    title: page.title,
    description: page.description,
  }));
  out.push({
    path: '/blog',
    twin: '/blog.md',
    lastmod: newest === '0000-00-00' ? (content.pages[0]?.updated ?? '2026-01-01') : newest,
    title: 'Blog',
    description: `How ${content.site.name} works.`,
  });
  for (const post of content.posts) {
    out.push({
      path: `/blog/${post.slug}`,
      twin: `/blog/${post.slug}.md`,
      lastmod: post.updated ?? post.date,
      title: post.title,
      description: post.summary,
    });
  }
  return out;
}

export function llmsTxt(content: Content, baseUrl: string): string {
  const page = (slug: string) => content.pageBySlug.get(slug);
  const link = (title: string, path: string, note: string) => `- [${m(title)}](${baseUrl}${path}): ${note.replace(/\s+/g, ' ').trim()}`;
  const docs = ['developers', 'about', 'status']
    .map((slug) => page(slug))
    .filter((p) => p !== undefined)
    .map((p) => link(p.title, `/${p.slug}.md`, p.description));
  const byCategory = (category: string) =>
    content.posts.filter((p) => p.category === category).map((p) => link(p.title, `/blog/${p.slug}.md`, p.agent.summary));
  const sections = [
    `# ${content.site.name}`,
    `> ${content.site.tagline}`,
    [content.site.description, content.site.agentNotes].filter(Boolean).join('\n\n'),
    `## Docs\n\n${docs.join('\n')}`,
    `## Web API\n\n${[
      link('OpenAPI document', '/openapi.json', 'OpenAPI 3.1 description of the Web API (no credentials needed).'),
      link(
        'Blog posts',
        '/api/v1/blog/posts',
        'JSON list of posts with agent summaries, when-to-use notes, key claims and related concepts.',
      ),
      link('Blog search', '/api/v1/blog/search?q=rate%20limits', 'Semantic search over the posts (q, limit, category).'),
      link('Platform status', '/api/v1/platform-status', 'Measured health of every service and store.'),
      link(
        'Brain pass',
        '/api/v1/agent/brain-pass',
        'POST without credentials answers 402 with a WWW-Authenticate: Payment challenge (Machine Payments Protocol); pay it and retry with Authorization: Payment for a time-limited access token to the Brain MCP server of a new organization, or of an existing one named by organization_id with proof of access to it (x-api-key or Brain-Pass-Token).',
      ),
    ].join('\n')}`,
  ];
  const product = byCategory('Product');
  const engineering = byCategory('Engineering');
  if (product.length > 0) sections.push(`## Product\n\n${product.join('\n')}`);
  if (engineering.length > 0) sections.push(`## Engineering\n\n${engineering.join('\n')}`);
  sections.push(
    `## Optional\n\n${[
      link('Full text', '/llms-full.txt', 'Every page and post in one Markdown file.'),
      link('Sitemap', '/sitemap.xml', 'Every page and post with its last modification date.'),
      link('Home', '/index.md', content.site.tagline),
    ].join('\n')}`,
  );
  return `${sections.join('\n\n')}\n`;
}

export function llmsFullTxt(content: Content, baseUrl: string): string {
  const parts: string[] = [`# ${content.site.name}\n\n> ${content.site.tagline}\n\n${content.site.description}\n`];
  const home = content.pageBySlug.get('home');
  for (const page of content.pages) {
    const text = page === home ? homeMarkdown(content, page) : pageMarkdown(page);
    parts.push(`<!-- ${baseUrl}${page.slug === 'home' ? '/' : `/${page.slug}`} -->\n\n${demote(text)}`);
  }
  for (const post of content.posts) parts.push(`<!-- ${baseUrl}/blog/${post.slug} -->\n\n${demote(postMarkdown(post))}`);
  return `${parts.join('\n---\n\n')}`;
}

/** Shifts headings down one level (outside code blocks) so the file keeps a single h1. */
function demote(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^(```|~~~)/.test(line)) fenced = !fenced;
      return !fenced && /^#{1,5}\s/.test(line) ? `#${line}` : line;
    })
    .join('\n');
}

export function robotsTxt(baseUrl: string): string {
  return `# Pages and their Markdown twins are open to every crawler and agent.
User-agent: *
Allow: /

Sitemap: ${baseUrl}/sitemap.xml
`;
}

function xml(text: string): string {
  return text.replace(/[<>&'"]/g, (ch) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[ch] as string);
}

export function sitemapXml(content: Content, baseUrl: string): string {
  const urls = sitePages(content)
    .map((p) => `  <url>\n    <loc>${xml(baseUrl + p.path)}</loc>\n    <lastmod>${p.lastmod}</lastmod>\n  </url>`)
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${urls}
</urlset>
`;
}
