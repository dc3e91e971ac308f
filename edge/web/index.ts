// The public Web API and site `{web_url}`: site pages with content negotiation (pages.ts), the
// Web API under /api/v1 with its unversioned aliases, rate limits and API-Version header
// (api.ts, rate-limit.ts), discovery files (discovery-routes.ts) and the OpenAPI document.
import type { AppContext } from '../context.ts';
import { mountApiRoutes, type InvalidParam } from '../http/api-route.ts';
import type { Surface } from '../http/listener.ts';
import { statusTitle } from '../http/problem-surface.ts';
import { sendJson, sendProblem } from '../http/respond.ts';
import type { RouteContext } from '../http/router.ts';
import { Router } from '../http/router.ts';
import { toHttpError } from '../errors.ts';
import { mountDashboard } from '../dashboard/index.ts';
import { createWebApiRoutes, isApiPath, resolveApiAlias } from './api.ts';
import { registerCheckoutPages } from './checkout-page.ts';
import { loadContent } from './content.ts';
import { createDiscoveryRoutes } from './discovery-routes.ts';
import { buildWebOpenApi } from './openapi.ts';
import { registerSitePages } from './pages.ts';
import { createWebRateLimits, webPolicies } from './rate-limit.ts';
import { brainPassRoute } from './brain-pass.ts';
import { createSearchIndex, type VectorCacheDoc } from './search.ts';
import { createStatusMonitor } from './status.ts';

/** Response headers a browser script may read on a cross-origin Web API response. */
const EXPOSED_HEADERS = [
  'RateLimit',
  'RateLimit-Policy',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'API-Version',
  'Deprecation',
  'Sunset',
  'Link',
  'ETag',
  'WWW-Authenticate',
  'Payment-Receipt',
].join(', ');

function sendInvalid(ctx: RouteContext, invalid: InvalidParam[]): void {
  sendProblem(ctx.res, {
    title: 'Bad Request',
    status: 400,
    detail: invalid.map((p) => `${p.in} parameter "${p.name}" ${p.reason}`).join('; '),
    instance: ctx.path,
    'invalid-params': invalid,
  });
}

export async function createWebSurface(ctx: AppContext): Promise<Surface> {
  const logger = ctx.logger.child({ surface: 'web' });
  const baseUrl = ctx.config.publicUrls.web;
  const content = loadContent(ctx.config.web.contentDir, {
    variables: {
      base_url: ctx.config.publicUrls.gateway,
      api_url: ctx.config.publicUrls.api,
      web_url: ctx.config.publicUrls.web,
      auth_url: ctx.config.publicUrls.auth,
    },
  });
  // Embedding the posts takes a while on a cold cache (~55 texts/s per thread): the listener
  // starts at once and searches wait for the index, which falls back to words only on failure.
  const started = performance.now();
  const search = createSearchIndex(content.posts, {
    embedder: ctx.stores.embedder,
    cache: ctx.stores.records.collection<VectorCacheDoc>('web_search_vectors'),
    logger,
  });
  search.then(
    (index) =>
      logger.info(
        {
          posts: content.posts.length,
          pages: content.pages.length,
          chunks: index.chunkCount,
          mode: index.mode,
          ms: Math.round(performance.now() - started),
        },
        'blog search index ready',
      ),
    () => undefined,
  );
  const status = createStatusMonitor(ctx, {
    timeoutMs: ctx.config.web.statusTimeoutMs,
    slowMs: ctx.config.web.statusSlowMs,
    cacheMs: ctx.config.web.statusCacheMs,
  });
  const limits = createWebRateLimits(ctx);

  const extra = { extraRoutes: [brainPassRoute(ctx)], policies: webPolicies(ctx) };
  const apiRoutes = createWebApiRoutes({ content, search, status, baseUrl, ...extra });
  let openapi: Record<string, unknown> | undefined;
  const discoveryRoutes = createDiscoveryRoutes({
    ctx,
    content,
    baseUrl,
    openapi: () => (openapi ??= buildWebOpenApi(apiRoutes, discoveryRoutes, baseUrl, content.site.name)),
  });

  const router = new Router();
  router.get('/health', ({ res }) => sendJson(res, 200, { status: 'ok', service: 'web' }));
  await mountDashboard(router, ctx, logger);
  mountApiRoutes(router, apiRoutes, {
    onInvalid: sendInvalid,
    baseUrl,
    now: () => ctx.now(),
    async around(route, routeCtx, next) {
      if (await limits.check(routeCtx, route.policy)) await next();
    },
  });
  mountApiRoutes(router, discoveryRoutes, { onInvalid: sendInvalid, baseUrl, now: () => ctx.now() });
  registerCheckoutPages(router, ctx);
  const site = registerSitePages(router, { content, status, baseUrl });

  return {
    name: 'web',
    router,
    before(routeCtx) {
      if (!isApiPath(routeCtx.path)) return false;
      // Every Web API response, errors and 429s included, says which version answered.
      routeCtx.path = resolveApiAlias(routeCtx.path);
      routeCtx.res.setHeader('api-version', '1');
      routeCtx.res.setHeader('access-control-allow-origin', '*');
      routeCtx.res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
      routeCtx.res.setHeader('x-content-type-options', 'nosniff');
      return false;
    },
    async notFound(routeCtx) {
      if (!isApiPath(routeCtx.path)) {
        site.notFound(routeCtx);
        return;
      }
      if (!(await limits.check(routeCtx, 'public-read'))) return;
      sendProblem(routeCtx.res, {
        title: 'Not Found',
        status: 404,
        detail: `No Web API operation at ${routeCtx.path}; see ${baseUrl}/api for the list.`,
        instance: routeCtx.path,
      });
    },
    async methodNotAllowed(routeCtx, allowed) {
      if (isApiPath(routeCtx.path) && !(await limits.check(routeCtx, 'public-read'))) return;
      sendProblem(
        routeCtx.res,
        { title: 'Method Not Allowed', status: 405, detail: `Allowed: ${allowed.join(', ')}`, instance: routeCtx.path },
        { allow: allowed.join(', ') },
      );
    },
    onError(routeCtx, err) {
      const e = toHttpError(err);
      if (e.internal) logger.error({ requestId: routeCtx.requestId, err }, 'request failed');
      sendProblem(routeCtx.res, { title: statusTitle(e.status), status: e.status, detail: e.message, instance: routeCtx.path });
    },
  };
}
