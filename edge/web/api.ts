// The Web API under /api/v1: blog posts, search, platform status and the index. Each route is
// one declaration (schemas, documented responses, rate-limit policy, deprecation) that both the
// router and the OpenAPI document read.
import type * as z from 'zod';
import { defineApiRoute, type AnyApiRoute, type AnyZodObject, type ApiRoute, type NoParams, type ResponseSpec } from '../http/api-route.ts';
import { defineDeprecation } from '../http/deprecation.ts';
import { sendJson, sendProblem } from '../http/respond.ts';
import type { Content, Post } from './content.ts';
import type { WebPolicyName } from './rate-limit.ts';
import type { RateLimitPolicy } from '../http/rate-limit.ts';
import { WEB_POLICIES } from './rate-limit.ts';
import * as s from './schemas.ts';
import type { BlogSearchIndex } from './search.ts';
import type { StatusMonitor } from './status.ts';

/** A Web API route: an API route with the rate-limit policy it is counted under. */
export type WebRoute = AnyApiRoute & { policy: WebPolicyName };

export interface WebApiDeps {
  content: Content;
  /** Resolves once the posts are indexed (embedding them takes a while on a cold cache). */
  search: Promise<BlogSearchIndex>;
  status: StatusMonitor;
  baseUrl: string;
  /** Routes of other modules listed with these (the brain-pass, edge/web/brain-pass.ts). */
  extraRoutes?: WebRoute[];
  /** The policies as configured (webPolicies), for the index. */
  policies?: Record<WebPolicyName, RateLimitPolicy>;
}

const json = (schema: z.ZodType, description: string): ResponseSpec => ({ description, content: { 'application/json': schema } });

function defineWebRoute<P extends AnyZodObject = NoParams, Q extends AnyZodObject = NoParams>(
  policy: WebPolicyName,
  route: ApiRoute<P, Q>,
): WebRoute {
  return {
    ...(defineApiRoute(route) as AnyApiRoute),
    policy,
    extensions: { ...route.extensions, 'x-ratelimit-policy': policy },
  };
}

function postLinks(post: Post, baseUrl: string) {
  return {
    html: `${baseUrl}/blog/${post.slug}`,
    markdown: `${baseUrl}/blog/${post.slug}.md`,
    api: `${baseUrl}/api/v1/blog/posts/${post.slug}`,
  };
}

export function postSummaryJson(post: Post, baseUrl: string): z.output<typeof s.postSummary> {
  return {
    slug: post.slug,
    title: post.title,
    date: post.date,
    updated: post.updated ?? null,
    category: post.category,
    author: post.author,
    summary: post.summary,
    tags: post.tags,
    reading_time_minutes: post.readingMinutes,
    agent: {
      summary: post.agent.summary,
      when_to_use: post.agent.whenToUse,
      key_claims: post.agent.keyClaims,
      related_concepts: post.agent.relatedConcepts,
    },
    links: postLinks(post, baseUrl),
  };
}

/** Cursors are opaque to clients; inside they are the offset of the next page. */
export function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

export function decodeCursor(cursor: string): number | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^o:(\d{1,9})$/.exec(text);
  return match && encodeCursor(Number(match[1])) === cursor ? Number(match[1]) : undefined;
}

/** The route deprecated in favour of platform-status (it is the first user of the mechanism). */
export const STATUS_ALIAS_DEPRECATION = defineDeprecation({
  deprecatedAt: '2026-11-15T00:00:00Z',
  sunsetAt: '2027-03-01T00:00:00Z',
  successor: '/api/v1/platform-status',
  documentation: '/blog/changelog',
});

export function createWebApiRoutes(deps: WebApiDeps): WebRoute[] {
  const routes: WebRoute[] = [
    listPostsRoute(deps),
    getPostRoute(deps),
    searchRoute(deps),
    ...statusRoutes(deps),
    ...(deps.extraRoutes ?? []),
  ];
  const operations = () => [...routes, ...indexRoutes];
  const indexRoutes = [indexRoute(deps, '/api', 'getApiIndex', operations), indexRoute(deps, '/api/v1', 'getApiV1Index', operations)];
  return [...routes, ...indexRoutes];
}

/** GET /api/v1/blog/posts: a page of posts, newest first. */
function listPostsRoute(deps: WebApiDeps): WebRoute {
  const { content, baseUrl } = deps;
  return defineWebRoute('public-read', {
    method: 'GET',
    path: '/api/v1/blog/posts',
    operationId: 'listBlogPosts',
    summary: 'List blog posts',
    description:
      'Posts newest first, with the notes agents use to decide what to read: a short summary, when to use the ' +
      'post, its key claims and related concepts. Paginated with `limit` and the opaque `cursor` of the previous page.',
    tags: ['Blog'],
    query: s.listQuery,
    responses: { '200': json(s.postList, 'A page of posts.'), '400': 'BadRequest' },
    handler({ res, input, path }) {
      const { limit, cursor, category } = input.query;
      const offset = cursor === undefined ? 0 : decodeCursor(cursor);
      if (offset === undefined) {
        sendProblem(res, {
          title: 'Bad Request',
          status: 400,
          detail: 'The cursor is not one this API issued; start again without it.',
          instance: path,
          'invalid-params': [{ name: 'cursor', in: 'query', reason: 'is not a cursor this API issued' }],
        });
        return;
      }
      const matching = category ? content.posts.filter((p) => p.category === category) : content.posts;
      const page = matching.slice(offset, offset + limit);
      const next = offset + limit < matching.length ? encodeCursor(offset + limit) : null;
      if (next) {
        const params = new URLSearchParams({ limit: String(limit), cursor: next, ...(category ? { category } : {}) });
        res.appendHeader('link', `<${baseUrl}/api/v1/blog/posts?${params}>; rel="next"`);
      }
      sendJson(
        res,
        200,
        { data: page.map((p) => postSummaryJson(p, baseUrl)), pagination: { limit, total: matching.length, next_cursor: next } },
        { 'cache-control': 'public, max-age=60' },
      );
    },
  });
}

/** GET /api/v1/blog/posts/:slug: one post with its text, under an ETag. */
function getPostRoute(deps: WebApiDeps): WebRoute {
  const { content, baseUrl } = deps;
  return defineWebRoute('public-read', {
    method: 'GET',
    path: '/api/v1/blog/posts/:slug',
    operationId: 'getBlogPost',
    summary: 'Get one blog post with its full text',
    tags: ['Blog'],
    params: s.postParams,
    responses: {
      '200': {
        ...json(s.postFull, 'The post.'),
        headers: { ETag: { description: 'Version of the post; send it back in If-None-Match.', schema: { type: 'string' } } },
      },
      '304': { description: 'The post has not changed since the ETag given in If-None-Match.' },
      '404': 'NotFound',
    },
    handler({ req, res, input, path }) {
      const post = content.postBySlug.get(input.params.slug);
      if (!post) {
        sendProblem(res, {
          title: 'Not Found',
          status: 404,
          detail: `No blog post has the slug "${input.params.slug.slice(0, 100)}".`,
          instance: path,
        });
        return;
      }
      const etag = `"${post.contentHash.slice(0, 32)}"`;
      const cacheHeaders = { 'cache-control': 'public, max-age=60', etag };
      const ifNoneMatch = req.headers['if-none-match'];
      if (ifNoneMatch?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag || tag.trim() === '*')) {
        res.writeHead(304, cacheHeaders);
        res.end();
        return;
      }
      sendJson(
        res,
        200,
        {
          ...postSummaryJson(post, baseUrl),
          content_markdown: post.body,
          content_html: post.html,
          sections: post.sections.map((sec) => ({
            heading: sec.heading,
            anchor: sec.anchor,
            url: `${baseUrl}/blog/${post.slug}#${sec.anchor}`,
          })),
        },
        cacheHeaders,
      );
    },
  });
}

/** GET /api/v1/blog/search. */
function searchRoute(deps: WebApiDeps): WebRoute {
  const { search, baseUrl } = deps;
  return defineWebRoute('blog-search', {
    method: 'GET',
    path: '/api/v1/blog/search',
    operationId: 'searchBlog',
    summary: 'Search the blog by meaning and by words',
    description:
      'Ranks posts by BM25 over their title, summaries, agent notes and text, fused with the cosine similarity of ' +
      'sentence embeddings of their head and sections. Posts that share no word with the query and are not close ' +
      'in meaning are left out, so a query can return no result. Each result names the section that matched best.',
    tags: ['Blog'],
    query: s.searchQuery,
    responses: { '200': json(s.searchResponse, 'The matching posts, best first.'), '400': 'BadRequest' },
    async handler({ res, input }) {
      const { q, limit, category } = input.query;
      const found = await (await search).search(q, { limit, category });
      sendJson(res, 200, {
        query: q,
        mode: found.mode,
        total: found.total,
        results: found.hits.map((hit) => ({
          slug: hit.post.slug,
          title: hit.post.title,
          date: hit.post.date,
          category: hit.post.category,
          summary: hit.post.summary,
          agent_summary: hit.post.agent.summary,
          score: hit.score,
          scores: { lexical: hit.lexical, semantic: hit.semantic },
          section: hit.section ? { heading: hit.section.heading, url: `${baseUrl}/blog/${hit.post.slug}#${hit.section.anchor}` } : null,
          links: postLinks(hit.post, baseUrl),
        })),
      });
    },
  });
}

/** GET /api/v1/platform-status, and its deprecated first name /api/v1/status. */
function statusRoutes(deps: WebApiDeps): WebRoute[] {
  const statusHandler = async ({ res }: { res: import('node:http').ServerResponse }) => {
    sendJson(res, 200, await deps.status.current(), { 'cache-control': 'public, max-age=5' });
  };
  const statusResponses = { '200': json(s.platformStatus, 'The measured status of every component.') };
  return [
    defineWebRoute('public-read', {
      method: 'GET',
      path: '/api/v1/platform-status',
      operationId: 'getPlatformStatus',
      summary: 'Measured platform status',
      description:
        'Each internal service is checked with grpc.health.v1 Check and each store with a round trip, timed. ' +
        'A critical component in outage makes a `major_outage`; any other component not operational makes the ' +
        'platform `degraded`. Measured at most every few seconds; the answer is 200 whatever the status.',
      tags: ['Status'],
      responses: statusResponses,
      handler: statusHandler,
    }),
    defineWebRoute('public-read', {
      method: 'GET',
      path: '/api/v1/status',
      operationId: 'getStatusDeprecated',
      summary: 'Platform status (deprecated name)',
      description: 'The early name of `GET /api/v1/platform-status`, with the same answer until its sunset, then 410.',
      tags: ['Status'],
      responses: { ...statusResponses, '410': 'Gone' },
      deprecation: STATUS_ALIAS_DEPRECATION,
      handler: statusHandler,
    }),
  ];
}

/** GET /api and /api/v1: the operations and rate-limit policies of the Web API. */
function indexRoute(deps: WebApiDeps, path: string, operationId: string, operations: () => WebRoute[]): WebRoute {
  const { content, baseUrl } = deps;
  return defineWebRoute('public-read', {
    method: 'GET',
    path,
    operationId,
    summary: 'Index of the Web API',
    tags: ['Index'],
    responses: { '200': json(s.apiIndex, 'The operations and rate-limit policies of the Web API.') },
    handler({ res }) {
      sendJson(
        res,
        200,
        {
          name: `${content.site.name} Web API`,
          version: '1',
          description:
            'Public API of the site: blog posts, blog search and platform status without credentials, and the brain-pass paid with the Payment scheme. Unversioned ' +
            '/api/... paths are aliases of /api/v1/....',
          openapi: `${baseUrl}/openapi.json`,
          operations: operations().map((r) => ({
            method: r.method,
            path: r.path.replace(/:([a-z]+)/g, '{$1}'),
            summary: r.summary,
            policy: r.policy,
            deprecated: r.deprecation !== undefined,
          })),
          policies: Object.values(deps.policies ?? WEB_POLICIES).map((p) => ({
            name: p.name,
            quota: p.quota,
            window_seconds: p.windowSeconds,
          })),
        },
        { 'cache-control': 'public, max-age=300' },
      );
    },
  });
}

/** `/api/blog/posts` → `/api/v1/blog/posts`: unversioned paths stay pinned to v1 for good. */
export const UNVERSIONED_API_VERSION = 'v1';

export function resolveApiAlias(path: string): string {
  const match = /^\/api\/(.+)$/.exec(path);
  if (!match || /^v\d+(\/|$)/.test(match[1])) return path;
  return `/api/${UNVERSIONED_API_VERSION}/${match[1]}`;
}

export function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/');
}
