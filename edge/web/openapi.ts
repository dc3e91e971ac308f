// The Web API's OpenAPI 3.1 document, built from the same route declarations the router runs.
import type { AnyApiRoute, HeaderSpec } from '../http/api-route.ts';
import { buildOpenApiDocument } from '../http/openapi.ts';
import type { WebRoute } from './api.ts';
import * as s from './schemas.ts';
import { documentBrainPass } from './brain-pass.ts';

const integer = { type: 'integer', minimum: 0 };

/** Headers of every Web API response (SERVICE-SPEC §8), documented once as components. */
export const WEB_API_HEADERS: Record<string, HeaderSpec> = {
  RateLimit: {
    description: 'Where the client stands in the policy applied: `"<policy>";r=<remaining>;t=<seconds until reset>`.',
    schema: { type: 'string', examples: ['"public-read";r=42;t=17'] },
  },
  'RateLimit-Policy': {
    description: 'The policy applied: `"<policy>";q=<quota>;w=<window seconds>`.',
    schema: { type: 'string', examples: ['"public-read";q=60;w=60'] },
  },
  'RateLimit-Limit': { description: 'Requests allowed per window.', schema: integer },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: integer },
  'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: integer },
  'API-Version': { description: 'Major version of the Web API that answered.', schema: { type: 'string', const: '1' } },
};

export function buildWebOpenApi(apiRoutes: WebRoute[], discoveryRoutes: AnyApiRoute[], baseUrl: string, siteName: string) {
  const problem = (description: string) => ({ description, content: { 'application/problem+json': s.problem } });
  const api = buildOpenApiDocument(apiRoutes, {
    info: {
      title: `${siteName} Web API`,
      version: '1.0.0',
      description:
        'The public, credential-free API of the site: blog posts with notes for agents, blog search, platform ' +
        'status and discovery files. Rate limited per client IP: `public-read` 60 requests per 60 seconds, ' +
        '`blog-search` 30 per 60 seconds, `brain-pass` 10 per 60 seconds (BRAIN_PASS_RATE_LIMIT). Unversioned `/api/...` paths are aliases of `/api/v1/...`. Errors are ' +
        'RFC 9457 problem documents.',
    },
    servers: [{ url: baseUrl }],
    tags: [
      { name: 'Blog', description: 'Posts and search.' },
      { name: 'Status', description: 'Platform health.' },
      { name: 'Index', description: 'What this API offers.' },
      { name: 'Agents', description: 'Brain access for autonomous agents, paid with the Payment scheme.' },
      { name: 'Discovery', description: 'Files for crawlers, agents and OAuth clients.' },
    ],
    schemas: {
      PostSummary: s.postSummary,
      Post: s.postFull,
      PostList: s.postList,
      AgentNotes: s.agentNotes,
      SearchResponse: s.searchResponse,
      PlatformStatus: s.platformStatus,
      ComponentHealth: s.componentHealth,
      ApiIndex: s.apiIndex,
      Problem: s.problem,
    },
    responses: {
      BadRequest: problem('A parameter is invalid; `invalid-params` lists each one with the reason.'),
      NotFound: problem('Nothing has this identifier.'),
      TooManyRequests: {
        ...problem('Over the rate limit of the policy: retry after `Retry-After` seconds.'),
        headers: { 'Retry-After': { description: 'Seconds until the window resets.', schema: integer } },
      },
      ServerError: problem('The request failed on our side.'),
      Gone: problem('A deprecated operation past its sunset date (`x-sunset`): removed; the detail names its successor.'),
    },
    commonHeaders: WEB_API_HEADERS,
    commonResponses: { '429': 'TooManyRequests', '500': 'ServerError' },
    externalDocs: { url: `${baseUrl}/developers`, description: 'Developer guide' },
  });
  // Discovery files are not rate limited and carry none of the API headers.
  const discovery = buildOpenApiDocument(discoveryRoutes, { info: { title: '', version: '' }, schemas: { Problem: s.problem } });
  const doc = { ...api, paths: { ...(api.paths as object), ...(discovery.paths as object) } };
  documentBrainPass(doc);
  return doc;
}
