// Site pages with content negotiation (SERVICE-SPEC §4.4, the five rules):
//   1. Accept: text/markdown (quality values honoured) gets text/markdown; charset=utf-8, with
//      Vary: Accept on every negotiated response;
//   2. an Accept that excludes both HTML and Markdown gets 406;
//   3. every HTML response carries Link: <twin.md>; rel=alternate; type=text/markdown;
//   4. /page.md, /blog/<slug>.md and /index.md are the Markdown twins, no header needed;
//   5. unknown paths are a real 404, a short Markdown site map when Markdown is preferred.
import type { ServerResponse } from 'node:http';
import { negotiate } from '../http/negotiate.ts';
import { sendProblem, sendText } from '../http/respond.ts';
import type { RouteContext, Router } from '../http/router.ts';
import type { Content } from './content.ts';
import { blogIndexBody, homeExtra, layout, notFoundBody, pageBody, postBody, SITE_CSS, SITE_ICON, statusHtml } from './html.ts';
import type { StatusMonitor } from './status.ts';
import { blogIndexMarkdown, homeMarkdown, notFoundMarkdown, pageMarkdown, postMarkdown, statusMarkdown } from './twins.ts';

export const HTML_TYPE = 'text/html; charset=utf-8';
export const MARKDOWN_TYPE = 'text/markdown; charset=utf-8';
// Offers in the server's order of preference: a browser's "any type" range gets HTML.
const OFFERS = ['text/html;charset=utf-8', 'text/markdown;charset=utf-8;variant=gfm'] as const;

/** Headers every site response carries. */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self' https: data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin',
};

export interface SitePagesOptions {
  content: Content;
  status: StatusMonitor;
  baseUrl: string;
}

interface Representation {
  /** Path of the HTML page (canonical) and of its Markdown twin. */
  path: string;
  twin: string;
  title: string;
  description: string;
  html: () => string | Promise<string>;
  markdown: () => string | Promise<string>;
  cacheControl: string;
}

function twinPathOf(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? '/index.md' : `${trimmed}.md`;
}

function setHeaders(res: ServerResponse, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

/** 406: nothing on offer is acceptable. */
function notAcceptable(res: ServerResponse, path: string): void {
  sendProblem(
    res,
    {
      title: 'Not Acceptable',
      status: 406,
      detail: 'This page is available as text/html and as text/markdown; the Accept header allows neither.',
      instance: path,
    },
    { vary: 'Accept' },
  );
}

export function registerSitePages(router: Router, options: SitePagesOptions): { notFound(ctx: RouteContext): void } {
  const site = new Site(options);
  router.get('/assets/site.css', ({ res }) =>
    sendText(res, 200, SITE_CSS, 'text/css; charset=utf-8', {
      'cache-control': 'public, max-age=86400',
      'x-content-type-options': 'nosniff',
    }),
  );
  router.get('/assets/icon.svg', ({ res }) =>
    sendText(res, 200, SITE_ICON, 'image/svg+xml', { 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' }),
  );
  router.get('/', (ctx) => site.serveNegotiated(ctx, site.representations.get('/')!));
  router.get('/index.md', (ctx) => site.serveTwin(ctx, site.representations.get('/')!));
  router.get('/blog', (ctx) => site.serveNegotiated(ctx, site.representations.get('/blog')!));
  router.get('/blog.md', (ctx) => site.serveTwin(ctx, site.representations.get('/blog')!));
  router.get('/blog/:slug', (ctx) => site.byPath(ctx, `/blog/${ctx.params.slug}`));
  router.get('/:page', (ctx) => site.byPath(ctx, `/${ctx.params.page}`));
  return { notFound: (ctx) => site.notFound(ctx) };
}

/** Every page in its two representations, and how a request gets one of them. */
class Site {
  private readonly content: Content;
  private readonly baseUrl: string;
  /** By the HTML page's path, and by its Markdown twin's. */
  readonly representations: Map<string, Representation>;
  private readonly byTwin: Map<string, Representation>;

  constructor(options: SitePagesOptions) {
    this.content = options.content;
    this.baseUrl = options.baseUrl;
    this.representations = buildRepresentations(options);
    this.byTwin = new Map([...this.representations.values()].map((rep) => [rep.twin, rep]));
  }

  byPath(ctx: RouteContext, path: string): Promise<void> | undefined {
    const twin = this.byTwin.get(path);
    if (twin) return this.serveTwin(ctx, twin);
    const rep = this.representations.get(path);
    // `/home` is not a page: the home page lives at `/`.
    if (rep && path !== '/') return this.serveNegotiated(ctx, rep);
    this.notFound(ctx);
  }

  async serveNegotiated(ctx: RouteContext, rep: Representation): Promise<void> {
    setHeaders(ctx.res, SECURITY_HEADERS);
    const chosen = negotiate(ctx.req.headers.accept, OFFERS);
    if (!chosen) {
      notAcceptable(ctx.res, ctx.path);
      return;
    }
    const headers = { vary: 'Accept', 'cache-control': rep.cacheControl };
    if (chosen === OFFERS[1]) {
      sendText(ctx.res, 200, await rep.markdown(), MARKDOWN_TYPE, headers);
    } else {
      ctx.res.appendHeader('link', `<${rep.twin}>; rel=alternate; type=text/markdown`);
      sendText(ctx.res, 200, await rep.html(), HTML_TYPE, headers);
    }
  }

  async serveTwin(ctx: RouteContext, rep: Representation): Promise<void> {
    setHeaders(ctx.res, SECURITY_HEADERS);
    ctx.res.appendHeader('link', `<${this.baseUrl}${rep.path}>; rel=canonical; type=text/html`);
    sendText(ctx.res, 200, await rep.markdown(), MARKDOWN_TYPE, { 'cache-control': rep.cacheControl });
  }

  notFound(ctx: RouteContext): void {
    setHeaders(ctx.res, SECURITY_HEADERS);
    if (this.redirectedWithoutSlash(ctx)) return;
    const { path } = ctx;
    const content = this.content;
    const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
    if (path.endsWith('.md')) {
      sendText(ctx.res, 404, notFoundMarkdown(content, shown), MARKDOWN_TYPE, { 'cache-control': 'no-cache' });
      return;
    }
    const chosen = negotiate(ctx.req.headers.accept, OFFERS);
    const headers = { vary: 'Accept', 'cache-control': 'no-cache' };
    if (chosen === OFFERS[1]) {
      sendText(ctx.res, 404, notFoundMarkdown(content, shown), MARKDOWN_TYPE, headers);
    } else if (chosen === OFFERS[0]) {
      const twin = twinPathOf(path);
      ctx.res.appendHeader('link', `<${twin}>; rel=alternate; type=text/markdown`);
      const body = layout({
        path,
        twin,
        title: 'Page not found',
        description: 'There is nothing at this address.',
        baseUrl: this.baseUrl,
        content,
        body: notFoundBody(),
      });
      sendText(ctx.res, 404, body, HTML_TYPE, headers);
    } else {
      // Not found comes before not acceptable: the resource does not exist in any form.
      sendProblem(ctx.res, { title: 'Not Found', status: 404, detail: `No page at ${shown}.`, instance: shown }, headers);
    }
  }

  /** /about/ → /about: one URL per page. True when the request was answered so. */
  private redirectedWithoutSlash(ctx: RouteContext): boolean {
    const { path } = ctx;
    if (path.length <= 1 || !path.endsWith('/')) return false;
    const trimmed = path.replace(/\/+$/, '') || '/';
    if (!this.representations.has(trimmed) && !this.byTwin.has(trimmed)) return false;
    const query = ctx.query.toString();
    ctx.res.writeHead(308, { location: query ? `${trimmed}?${query}` : trimmed, 'content-length': 0 });
    ctx.res.end();
    return true;
  }
}

/** The site's pages, the blog index and every post, each as HTML (in the layout) and Markdown. */
function buildRepresentations(options: SitePagesOptions): Map<string, Representation> {
  const { content, status, baseUrl } = options;
  const cache = new Map<string, string>();
  const memo = (key: string, make: () => string) => () => {
    let value = cache.get(key);
    if (value === undefined) cache.set(key, (value = make()));
    return value;
  };
  const wrap = (rep: Pick<Representation, 'path' | 'twin' | 'title' | 'description'>, body: string) =>
    layout({ ...rep, baseUrl, content, body });

  const representations = new Map<string, Representation>();
  const add = (rep: Omit<Representation, 'twin'>) => representations.set(rep.path, { ...rep, twin: twinPathOf(rep.path) });

  for (const page of content.pages) {
    const path = page.slug === 'home' ? '/' : `/${page.slug}`;
    const meta = { path, twin: twinPathOf(path), title: page.title, description: page.description };
    if (page.slug === 'status') {
      add({
        ...meta,
        html: async () => wrap(meta, pageBody(page, statusHtml(await status.current()))),
        markdown: async () => pageMarkdown(page, statusMarkdown(await status.current())),
        cacheControl: 'no-cache',
      });
    } else if (page.slug === 'home') {
      add({
        ...meta,
        html: memo('html:/', () => wrap(meta, pageBody(page, homeExtra(content)))),
        markdown: memo('md:/', () => homeMarkdown(content, page)),
        cacheControl: 'public, max-age=300',
      });
    } else {
      add({
        ...meta,
        html: memo(`html:${path}`, () => wrap(meta, pageBody(page))),
        markdown: memo(`md:${path}`, () => pageMarkdown(page)),
        cacheControl: 'public, max-age=300',
      });
    }
  }
  const blogMeta = {
    path: '/blog',
    twin: '/blog.md',
    title: 'Blog',
    description: `How ${content.site.name} works, written by the people who build it.`,
  };
  add({
    ...blogMeta,
    html: memo('html:/blog', () => wrap(blogMeta, blogIndexBody(content))),
    markdown: memo('md:/blog', () => blogIndexMarkdown(content)),
    cacheControl: 'public, max-age=300',
  });
  for (const post of content.posts) {
    const meta = { path: `/blog/${post.slug}`, twin: `/blog/${post.slug}.md`, title: post.title, description: post.summary };
    add({
      ...meta,
      html: memo(`html:${meta.path}`, () => wrap(meta, postBody(post))),
      markdown: memo(`md:${meta.path}`, () => postMarkdown(post)),
      cacheControl: 'public, max-age=300',
    });
  }
  return representations;
}
