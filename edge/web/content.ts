// The site's content: Markdown files with YAML front matter in the content folder, read and
// validated once at start (a bad file stops the start with its name and the reason).
//
//   content/site.yaml        name, tagline, description of the site
//   content/pages/*.md       home (served at /), about, developers, status, ...
//   content/blog/*.md        posts; the file name is the slug
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import { markdownToText, renderMarkdown } from './markdown.ts';

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const CATEGORIES = ['Product', 'Engineering'] as const;
export type Category = (typeof CATEGORIES)[number];

/** A content file that cannot be served. */
export class ContentError extends Error {
  readonly file: string;
  constructor(file: string, message: string) {
    super(`${file}: ${message}`);
    this.name = 'ContentError';
    this.file = file;
  }
}

const dateField = z.union([z.string(), z.date()]).transform((value, ctx) => {
  const text = value instanceof Date ? value.toISOString().slice(0, 10) : value.trim();
  const date = new Date(`${text}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== text) {
    ctx.addIssue({ code: 'custom', message: `expected a date as YYYY-MM-DD, got "${text}"` });
    return z.NEVER;
  }
  return text;
});

const text = (max: number) => z.string().trim().min(1).max(max);

const postFrontMatter = z
  .object({
    title: text(200),
    slug: z.string().regex(SLUG_PATTERN, 'lower-case words separated by hyphens'),
    date: dateField,
    updated: dateField.optional(),
    category: z.enum(CATEGORIES),
    author: text(100).default('The Mindgate team'),
    summary: text(600),
    tags: z.array(text(40)).default([]),
    agent: z
      .object({
        summary: text(600),
        when_to_use: z.array(text(300)).min(1),
        key_claims: z.array(text(400)).min(1),
        related_concepts: z.array(text(80)).default([]),
      })
      .strict(),
  })
  .strict();

const pageFrontMatter = z
  .object({
    title: text(200),
    slug: z.string().regex(SLUG_PATTERN),
    description: text(600),
    updated: dateField,
    nav: z
      .object({ label: text(40), order: z.number().int() })
      .strict()
      .optional(),
  })
  .strict();

const siteFile = z
  .object({
    name: text(80),
    tagline: text(200),
    description: text(1000),
    /** Prose for llms.txt, between the summary and the link sections. */
    agent_notes: text(4000).optional(),
  })
  .strict();

export interface AgentNotes {
  summary: string;
  whenToUse: string[];
  keyClaims: string[];
  relatedConcepts: string[];
}

export interface Section {
  heading: string;
  anchor: string;
  /** Plain text of the section. */
  text: string;
}

export interface Post {
  slug: string;
  title: string;
  date: string;
  updated?: string;
  category: Category;
  author: string;
  summary: string;
  tags: string[];
  agent: AgentNotes;
  /** Markdown body (without the front matter) and its HTML. */
  body: string;
  html: string;
  sections: Section[];
  /** Plain text of the body before the first heading. */
  intro: string;
  wordCount: number;
  readingMinutes: number;
  /** sha-256 of the source file, for ETags and embedding caches. */
  contentHash: string;
}

export interface Page {
  slug: string;
  title: string;
  description: string;
  updated: string;
  nav?: { label: string; order: number };
  body: string;
  html: string;
  contentHash: string;
}

export interface Site {
  name: string;
  tagline: string;
  description: string;
  agentNotes?: string;
}

export interface Content {
  site: Site;
  /** Newest first. */
  posts: Post[];
  pages: Page[];
  postBySlug: Map<string, Post>;
  pageBySlug: Map<string, Page>;
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

function splitFrontMatter(file: string, source: string): { data: unknown; body: string } {
  const match = FRONT_MATTER.exec(source.replace(/^\uFEFF/, ''));
  if (!match) throw new ContentError(file, 'missing YAML front matter between --- lines');
  let data: unknown;
  try {
    data = parseYaml(match[1]);
  } catch (err) {
    throw new ContentError(file, `invalid YAML front matter: ${(err as Error).message}`);
  }
  return { data, body: `${match[2].trim()}\n` };
}

function check<T>(file: string, schema: z.ZodType<T>, data: unknown): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((i) => `${i.path.join('.') || '(front matter)'}: ${i.message}`);
    throw new ContentError(file, reasons.join('; '));
  }
  return parsed.data;
}

function noTopHeading(file: string, body: string): void {
  // The title is the page's only h1; bodies start at h2.
  const withoutCode = body.replace(/```[\s\S]*?```/g, '');
  if (/^#\s/m.test(withoutCode)) throw new ContentError(file, 'the body must not have a level-1 heading (the title is the h1)');
}

function sectionsOf(
  body: string,
  headings: Array<{ depth: number; text: string; anchor: string }>,
): { intro: string; sections: Section[] } {
  // Split the source at h2 headings; their anchors come from the renderer, in the same order.
  const parts = body.replace(/```[\s\S]*?```/g, (b) => b.replace(/^#/gm, ' #')).split(/^##\s+(.+)$/m);
  const intro = markdownToText(parts[0]);
  const h2 = headings.filter((h) => h.depth === 2);
  const sections: Section[] = [];
  for (let i = 1, n = 0; i < parts.length; i += 2, n++) {
    sections.push({ heading: parts[i].trim(), anchor: h2[n]?.anchor ?? '', text: markdownToText(parts[i + 1] ?? '') });
  }
  return { intro, sections };
}

export function parsePost(file: string, source: string): Post {
  const { data, body } = splitFrontMatter(file, source);
  const meta = check(file, postFrontMatter, data);
  const expected = path.basename(file, '.md');
  if (meta.slug !== expected) throw new ContentError(file, `slug "${meta.slug}" must match the file name "${expected}"`);
  if (meta.updated && meta.updated < meta.date) throw new ContentError(file, 'updated is earlier than date');
  noTopHeading(file, body);
  const rendered = renderMarkdown(body);
  const { intro, sections } = sectionsOf(body, rendered.headings);
  const wordCount = markdownToText(body).split(' ').filter(Boolean).length;
  return {
    slug: meta.slug,
    title: meta.title,
    date: meta.date,
    updated: meta.updated,
    category: meta.category,
    author: meta.author,
    summary: meta.summary,
    tags: meta.tags,
    agent: {
      summary: meta.agent.summary,
      whenToUse: meta.agent.when_to_use,
      keyClaims: meta.agent.key_claims,
      relatedConcepts: meta.agent.related_concepts,
    },
    body,
    html: rendered.html,
    sections,
    intro,
    wordCount,
    readingMinutes: Math.max(1, Math.round(wordCount / 220)),
    contentHash: createHash('sha256').update(source).digest('hex'),
  };
}

export function parsePage(file: string, source: string): Page {
  const { data, body } = splitFrontMatter(file, source);
  const meta = check(file, pageFrontMatter, data);
  const expected = path.basename(file, '.md');
  if (meta.slug !== expected) throw new ContentError(file, `slug "${meta.slug}" must match the file name "${expected}"`);
  noTopHeading(file, body);
  return {
    ...meta,
    body,
    html: renderMarkdown(body).html,
    contentHash: createHash('sha256').update(source).digest('hex'),
  };
}

/** Pages every site has; the routes (and the navigation) expect them. */
export const REQUIRED_PAGES = ['home', 'about', 'developers', 'status'] as const;
/** Paths that pages cannot take because the site serves something else there. */
const RESERVED_SLUGS = new Set([
  'index',
  'blog',
  'api',
  'openapi',
  'llms',
  'llms-full',
  'robots',
  'sitemap',
  'assets',
  'health',
  'livez',
  'readyz',
]);

function markdownFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => path.join(dir, name));
}

/** Sorts newest first; equal dates by slug, so the order is stable. */
export function sortPosts(posts: Post[]): Post[] {
  return posts.sort((a, b) => (a.date === b.date ? a.slug.localeCompare(b.slug) : a.date < b.date ? 1 : -1));
}

export function buildContent(site: Site, posts: Post[], pages: Page[]): Content {
  sortPosts(posts);
  return {
    site,
    posts,
    pages,
    postBySlug: new Map(posts.map((p) => [p.slug, p])),
    pageBySlug: new Map(pages.map((p) => [p.slug, p])),
  };
}

export interface LoadContentOptions {
  /**
   * Values of `{name}` placeholders in the files (the public origins: `{base_url}`, `{api_url}`,
   * `{web_url}`, `{auth_url}`), so that posts show the deployment's own addresses.
   */
  variables?: Record<string, string>;
}

function substitute(source: string, variables: Record<string, string>): string {
  return source.replace(/\{([a-z_]+)\}/g, (whole, name: string) => variables[name] ?? whole);
}

export function loadContent(dir: string, options: LoadContentOptions = {}): Content {
  const read = (file: string) => substitute(fs.readFileSync(file, 'utf8'), options.variables ?? {});
  const siteFilePath = path.join(dir, 'site.yaml');
  if (!fs.existsSync(siteFilePath)) throw new ContentError(siteFilePath, 'not found (is WEB_CONTENT_DIR right?)');
  let siteData: unknown;
  try {
    siteData = parseYaml(fs.readFileSync(siteFilePath, 'utf8'));
  } catch (err) {
    throw new ContentError(siteFilePath, `invalid YAML: ${(err as Error).message}`);
  }
  const siteMeta = check(siteFilePath, siteFile, siteData);
  const site: Site = {
    name: siteMeta.name,
    tagline: siteMeta.tagline,
    description: siteMeta.description,
    agentNotes: siteMeta.agent_notes,
  };

  const posts = markdownFiles(path.join(dir, 'blog')).map((file) => parsePost(file, read(file)));
  const pages = markdownFiles(path.join(dir, 'pages')).map((file) => parsePage(file, read(file)));
  for (const page of pages) {
    if (RESERVED_SLUGS.has(page.slug))
      throw new ContentError(path.join(dir, 'pages', `${page.slug}.md`), `"${page.slug}" is a reserved path`);
  }
  for (const required of REQUIRED_PAGES) {
    if (!pages.some((p) => p.slug === required)) {
      throw new ContentError(path.join(dir, 'pages', `${required}.md`), 'required page is missing');
    }
  }
  return buildContent(site, posts, pages);
}
