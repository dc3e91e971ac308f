// An HTML page into candidate memories: its main content converted to Markdown by
// `node-html-markdown` (the page's <main>, else its <article>, else its <body>; navigation,
// headers, footers, forms and scripts left out), then read as Markdown is (markdown.ts): one
// memory per section, titled under the page's <title>.
import { NodeHtmlMarkdown } from 'node-html-markdown';
import { parse } from 'node-html-parser';
import { stringify } from 'yaml';
import type { Candidate } from './candidate.ts';
import { markdownCandidates } from './markdown.ts';

/** Parts of a page that are not its content. */
const LEFT_OUT = ['nav', 'header', 'footer', 'aside', 'form', 'script', 'style', 'noscript', 'template', 'svg'];

const converter = new NodeHtmlMarkdown({ ignore: LEFT_OUT });

/** The page as Markdown, with its <title> as front matter. */
export function htmlToMarkdown(html: string): string {
  const root = parse(html, { comment: false });
  const content = root.querySelector('main') ?? root.querySelector('article') ?? root.querySelector('body') ?? root;
  const title = root.querySelector('title')?.text.trim();
  const markdown = converter.translate(content.innerHTML);
  return title ? `---\n${stringify({ title })}---\n${markdown}` : markdown;
}

export function htmlCandidates(path: string, html: string): Candidate[] {
  return markdownCandidates(path, htmlToMarkdown(html));
}
