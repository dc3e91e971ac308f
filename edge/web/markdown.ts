// Markdown to HTML for the site's own content (marked, GitHub-flavoured). The content is ours,
// but the renderer still treats it as untrusted: raw HTML is shown as text, links and images
// only take http(s), mailto, relative and fragment URLs, and headings get stable ids so that
// search results and agents can point into a section.
import { Marked, type Tokens } from 'marked';
import { escapeHtml } from '../http/escape-html.ts';

/** `Rate limits & headers` → `rate-limits-headers`. */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/&[a-z]+;|&#\d+;/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** True for URLs a link may point to (no javascript:, data: or other schemes). */
export function isSafeUrl(href: string): boolean {
  const trimmed = href.trim();
  if (/^(https?:|mailto:)/i.test(trimmed)) return true;
  // Relative references: a path, a fragment or a query; anything with a scheme is refused.
  return !/^[a-z][a-z0-9+.-]*:/i.test(trimmed) && !trimmed.startsWith('//');
}

export interface RenderedMarkdown {
  html: string;
  /** The h2/h3 headings with their anchors, in order. */
  headings: Array<{ depth: number; text: string; anchor: string }>;
}

/** A renderer that collects headings per render; create one per document. */
function createRenderer(headings: RenderedMarkdown['headings']): Marked {
  const used = new Map<string, number>();
  const marked = new Marked({ gfm: true, async: false });
  marked.use({
    renderer: {
      html(token: Tokens.HTML | Tokens.Tag) {
        return escapeHtml(token.text);
      },
      heading(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, token: Tokens.Heading) {
        const inner = this.parser.parseInline(token.tokens);
        const base = slugify(token.text) || 'section';
        const seen = used.get(base) ?? 0;
        used.set(base, seen + 1);
        const anchor = seen === 0 ? base : `${base}-${seen}`;
        if (token.depth >= 2 && token.depth <= 3) headings.push({ depth: token.depth, text: token.text, anchor });
        return `<h${token.depth} id="${anchor}">${inner}</h${token.depth}>\n`;
      },
      link(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, token: Tokens.Link) {
        const inner = this.parser.parseInline(token.tokens);
        if (!isSafeUrl(token.href)) return inner;
        const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
        return `<a href="${escapeHtml(token.href)}"${title}>${inner}</a>`;
      },
      image(token: Tokens.Image) {
        if (!isSafeUrl(token.href)) return escapeHtml(token.text);
        const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
        return `<img src="${escapeHtml(token.href)}" alt="${escapeHtml(token.text)}"${title} loading="lazy">`;
      },
    },
  });
  return marked;
}

export function renderMarkdown(markdown: string): RenderedMarkdown {
  const headings: RenderedMarkdown['headings'] = [];
  const html = createRenderer(headings).parse(markdown) as string;
  return { html, headings };
}

/** The plain text of Markdown (for search and summaries): no markup, one space between words. */
export function markdownToText(markdown: string): string {
  return markdown
    .replace(/```[\s\S]*?```/g, (block) => block.replace(/```[^\n]*\n?/g, ' '))
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*_>#|~-]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Text of a heading in Markdown source, escaped for inline Markdown (for generated twins). */
export function escapeMarkdownInline(text: string): string {
  return text.replace(/([\\`*_[\]<>|])/g, '\\$1');
}
