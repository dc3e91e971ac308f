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

export function createDiscoveryRoutes(deps: DiscoveryDeps): AnyApiRoute[] {
  const { ctx, content, baseUrl } = deps;
  const files = {
    llms: llmsTxt(content, baseUrl),
    llmsFull: llmsFullTxt(content, baseUrl),
    robots: robotsTxt(baseUrl),
    sitemap: sitemapXml(content, baseUrl),
  };
  const cached = { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' };

  async function authMetadata(res: ServerResponse, path: string): Promise<void> {
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
    sendJson(res, 200, metadata, { 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' });
  }

  return [
    defineApiRoute({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI document',
      tags: ['Discovery'],
      responses: { '200': { description: 'OpenAPI 3.1 document of the Web API.', content: { 'application/json': { type: 'object' } } } },
      handler: ({ res }) => sendJson(res, 200, deps.openapi(), cached),
    }),
    defineApiRoute({
      method: 'GET',
      path: '/llms.txt',
      operationId: 'getLlmsTxt',
      summary: 'The site for language models (llmstxt.org)',
      tags: ['Discovery'],
      responses: { '200': text('text/plain', 'Markdown in the llms.txt format, generated from the content.') },
      handler: ({ res }) => sendText(res, 200, files.llms, 'text/plain; charset=utf-8', cached),
    }),
    defineApiRoute({
      method: 'GET',
      path: '/llms-full.txt',
      operationId: 'getLlmsFullTxt',
      summary: 'Every page and post in one Markdown file',
      tags: ['Discovery'],
      responses: { '200': text('text/plain', 'The full text of the site.') },
      handler: ({ res }) => sendText(res, 200, files.llmsFull, 'text/plain; charset=utf-8', cached),
    }),
    defineApiRoute({
      method: 'GET',
      path: '/robots.txt',
      operationId: 'getRobotsTxt',
      summary: 'Crawling rules and the sitemap',
      tags: ['Discovery'],
      responses: { '200': text('text/plain', 'robots.txt (RFC 9309).') },
      handler: ({ res }) => sendText(res, 200, files.robots, 'text/plain; charset=utf-8', cached),
    }),
    defineApiRoute({
      method: 'GET',
      path: '/sitemap.xml',
      operationId: 'getSitemap',
      summary: 'Every page and post with its last modification date',
      tags: ['Discovery'],
      responses: { '200': text('application/xml', 'A sitemaps.org 0.9 urlset.') },
      handler: ({ res }) => sendText(res, 200, files.sitemap, 'application/xml; charset=utf-8', cached),
    }),
    defineApiRoute({
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      operationId: 'getAuthorizationServerMetadata',
      summary: 'Authorization server metadata (RFC 8414)',
      description: `The metadata of the authorization server at ${ctx.config.publicUrls.auth}, which issues tokens for the REST API and the Brain.`,
      tags: ['Discovery'],
      responses: {
        '200': { description: 'RFC 8414 metadata.', content: { 'application/json': { type: 'object' } } },
        '404': {
          description: 'The authorization server has not published its metadata.',
          content: { 'application/problem+json': s.problem },
        },
      },
      handler: ({ res, path }) => authMetadata(res, path),
    }),
    defineApiRoute({
      method: 'GET',
      path: '/.well-known/openid-configuration',
      operationId: 'getOpenIdConfiguration',
      summary: 'OpenID Connect discovery (mirror of the authorization server metadata)',
      tags: ['Discovery'],
      responses: {
        '200': { description: 'OpenID Connect discovery document.', content: { 'application/json': { type: 'object' } } },
        '404': {
          description: 'The authorization server has not published its metadata.',
          content: { 'application/problem+json': s.problem },
        },
      },
      handler: ({ res, path }) => authMetadata(res, path),
    }),
  ];
}
