// Routes of the discovery files, declared like the API's so that /openapi.json documents them.
// The authorization server's metadata is the one AppContext.authMetadata() returns (read from
// the authorization server itself); when it has none to give, the answer is a clear 404.
import type { ServerResponse } from 'node:http';
import type { AppContext } from '../context.ts';
import { defineApiRoute, type AnyApiRoute } from '../http/api-route.ts';
import { sendJson, sendProblem, sendText } from '../http/respond.ts';
import type { Content } from './content.ts';
import { llmsFullTxt, llmsTxt, robotsTxt, sitemapXml } from './discovery.ts';
import * as s from './schemas.ts';

export interface DiscoveryDeps {
  ctx: AppContext;
  content: Content;
  baseUrl: string;
  /** The OpenAPI document of the Web API (built lazily: it documents these routes too). */
  openapi: () => Record<string, unknown>;
}

const text = (mediaType: string, description: string) => ({ description, content: { [mediaType]: { type: 'string' } } });

const CACHED = { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' };

export function createDiscoveryRoutes(deps: DiscoveryDeps): AnyApiRoute[] {
  const { ctx, content, baseUrl } = deps;
  const plain = 'text/plain; charset=utf-8';
  return [
    defineApiRoute({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI document',
      tags: ['Discovery'],
      responses: { '200': { description: 'OpenAPI 3.1 document of the Web API.', content: { 'application/json': { type: 'object' } } } },
      handler: ({ res }) => sendJson(res, 200, deps.openapi(), CACHED),
    }),
    fileRoute('/llms.txt', 'getLlmsTxt', 'The site for language models (llmstxt.org)', plain, {
      description: 'Markdown in the llms.txt format, generated from the content.',
      body: llmsTxt(content, baseUrl),
    }),
    fileRoute('/llms-full.txt', 'getLlmsFullTxt', 'Every page and post in one Markdown file', plain, {
      description: 'The full text of the site.',
      body: llmsFullTxt(content, baseUrl),
    }),
    fileRoute('/robots.txt', 'getRobotsTxt', 'Crawling rules and the sitemap', plain, {
      description: 'robots.txt (RFC 9309).',
      body: robotsTxt(baseUrl),
    }),
    fileRoute('/sitemap.xml', 'getSitemap', 'Every page and post with its last modification date', 'application/xml; charset=utf-8', {
      description: 'A sitemaps.org 0.9 urlset.',
      body: sitemapXml(content, baseUrl),
    }),
    ...authMetadataRoutes(ctx),
  ];
}

/** A file generated once from the content, served as it is. */
function fileRoute(
  path: string,
  operationId: string,
  summary: string,
  contentType: string,
  file: { description: string; body: string },
): AnyApiRoute {
  return defineApiRoute({
    method: 'GET',
    path,
    operationId,
    summary,
    tags: ['Discovery'],
    responses: { '200': text(contentType.split(';')[0]!, file.description) },
    handler: ({ res }) => sendText(res, 200, file.body, contentType, CACHED),
  });
}

/** The authorization server's metadata, under its RFC 8414 and OpenID Connect names. */
function authMetadataRoutes(ctx: AppContext): AnyApiRoute[] {
  const notPublished = {
    description: 'The authorization server has not published its metadata.',
    content: { 'application/problem+json': s.problem },
  };
  return [
    defineApiRoute({
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      operationId: 'getAuthorizationServerMetadata',
      summary: 'Authorization server metadata (RFC 8414)',
      description: `The metadata of the authorization server at ${ctx.config.publicUrls.auth}, which issues tokens for the REST API and the Brain.`,
      tags: ['Discovery'],
      responses: {
        '200': { description: 'RFC 8414 metadata.', content: { 'application/json': { type: 'object' } } },
        '404': notPublished,
      },
      handler: ({ res, path }) => sendAuthMetadata(ctx, res, path),
    }),
    defineApiRoute({
      method: 'GET',
      path: '/.well-known/openid-configuration',
      operationId: 'getOpenIdConfiguration',
      summary: 'OpenID Connect discovery (mirror of the authorization server metadata)',
      tags: ['Discovery'],
      responses: {
        '200': { description: 'OpenID Connect discovery document.', content: { 'application/json': { type: 'object' } } },
        '404': notPublished,
      },
      handler: ({ res, path }) => sendAuthMetadata(ctx, res, path),
    }),
  ];
}

async function sendAuthMetadata(ctx: AppContext, res: ServerResponse, path: string): Promise<void> {
  let metadata: Record<string, unknown>;
  try {
    metadata = await ctx.authMetadata();
  } catch (err) {
    ctx.logger.debug({ err }, 'authorization server metadata unavailable');
    sendProblem(
      res,
      {
        title: 'Not Found',
        status: 404,
        detail:
          'The authorization server has not published its metadata. It is served here once the authorization ' +
          `server at ${ctx.config.publicUrls.auth} answers its discovery request.`,
        instance: path,
      },
      { 'cache-control': 'no-store' },
    );
    return;
  }
  sendJson(res, 200, metadata, CACHED);
}
