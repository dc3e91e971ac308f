// The Markdown twin of each site page: the same content as the HTML page, as Markdown an agent
// can read without parsing a layout.
import type { Content, Page, Post } from './content.ts';
import { escapeMarkdownInline as m } from './markdown.ts';
import { statusLabel } from './html.ts';
import type { PlatformStatus } from './status.ts';

function postLine(post: Post): string {
  return `- [${m(post.title)}](/blog/${post.slug}.md) (${post.date}, ${post.category}): ${post.summary}`;
}

export function pageMarkdown(page: Page, extra = ''): string {
  return `# ${page.title}\n\n> ${page.description}\n\n${page.body.trim()}\n${extra ? `\n${extra.trim()}\n` : ''}`;
}

export function homeMarkdown(content: Content, page: Page): string {
  const latest = content.posts.slice(0, 5).map(postLine).join('\n');
  return pageMarkdown(page, latest ? `## Latest posts\n\n${latest}\n\nAll posts: [/blog.md](/blog.md)` : '');
}

export function blogIndexMarkdown(content: Content): string {
  return `# Blog\n\n> How ${content.site.name} works, written by the people who build it. Categories: Product and Engineering.\n\n${content.posts.map(postLine).join('\n')}\n`;
}

export function postMarkdown(post: Post): string {
  const list = (items: string[]) => items.map((i) => `- ${i}`).join('\n');
  const updated = post.updated ? ` · updated ${post.updated}` : '';
  return `# ${post.title}

> ${post.summary}

${post.date}${updated} · ${post.category} · ${post.author} · ${post.readingMinutes} min read

${post.body.trim()}

## For agents

${post.agent.summary}

### When to use

${list(post.agent.whenToUse)}

### Key claims

${list(post.agent.keyClaims)}
${post.agent.relatedConcepts.length > 0 ? `\n### Related concepts\n\n${list(post.agent.relatedConcepts)}\n` : ''}`;
}

export function statusMarkdown(status: PlatformStatus): string {
  const rows = status.components
    .map((c) => `| ${m(c.name)} | ${statusLabel(c.status)}${c.detail ? ` (${m(c.detail)})` : ''} | ${c.latency_ms.toFixed(1)} ms |`)
    .join('\n');
  return `## Current status

**${statusLabel(status.status)}**: ${status.description}. Checked at ${status.checked_at}.

| Component | Status | Check time |
|---|---|---|
${rows}
`;
}

/** Rule 5: the body of a 404 for a client that accepts Markdown. */
export function notFoundMarkdown(content: Content, path: string): string {
  return `# Not found

There is no page at \`${path.replace(/`/g, '%60')}\` on ${content.site.name}.

## Site map

- [Home](/index.md)
- [Blog](/blog.md)
- [Developers](/developers.md): the Web API, rate limits and discovery files
- [Sitemap](/sitemap.xml): every page and post
- [llms.txt](/llms.txt): this site for language models
`;
}
