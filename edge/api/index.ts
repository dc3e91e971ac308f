import * as z from 'zod';
import type { AppContext } from '../context.ts';
import { defineApiRoute, mountApiRoutes, type InvalidParam } from '../http/api-route.ts';
import type { Surface } from '../http/listener.ts';
import { buildOpenApiDocument } from '../http/openapi.ts';
import { statusTitle } from '../http/problem-surface.ts';
import { sendJson, sendProblem } from '../http/respond.ts';
import { Router, type RouteContext } from '../http/router.ts';
import { SCOPES } from '../oauth/provider.ts';
import { machineScope, rolesAllowed } from './access.ts';
import { createAuthenticator } from './auth.ts';
import { createDashboardCors } from './cors.ts';
import { exampleFor, EXAMPLES } from './examples/index.ts';
import { problemOf, problemType } from './problems.ts';
import { addDocsPage } from '../http/docs-page.ts';
import { organizationDeletion } from './organization-deletion/index.ts';
import { organizationRoutes } from './organizations.ts';
import { billingWebhookRoutes } from './billing-webhooks.ts';
import { playbookSchemaRoute } from './playbook-documents.ts';
import { ALERT_SOURCE_SECURITY_SCHEME, receiveAlertsRoute } from './alerts.ts';
import type { RestRoute } from './rest-route.ts';

export const API_VERSION = '1.0.0';

const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.int(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    errors: z
      .array(z.object({ loc: z.array(z.union([z.string(), z.int()])), msg: z.string(), type: z.string() }))
      .optional()
      .meta({ description: 'For 422: every invalid field.' }),
  })
  .meta({ title: 'Problem', description: 'An RFC 9457 problem document.' });

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the same key (for 24 hours, per caller and operation) answers the first successful result again, with `Idempotent-Replayed: true`, instead of creating a second resource. The same key with a different body is 422; while the first request runs, 409 with Retry-After.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

const ProtectedResourceMetadataSchema = z
  .object({
    resource: z.string(),
    authorization_servers: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.literal('header')),
    resource_name: z.string(),
  })
  .meta({ title: 'ProtectedResourceMetadata', description: 'RFC 9728 protected resource metadata.' });

const OpenApiDocumentSchema = z
  .looseObject({
    openapi: z.string().regex(/^3\.1\./),
    info: z.looseObject({ title: z.string(), version: z.string() }),
    paths: z.record(z.string(), z.unknown()),
    components: z.record(z.string(), z.unknown()),
  })
  .meta({ title: 'OpenApiDocument', description: 'An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0).' });

/** The shared problem responses, by name: their status. */
const PROBLEM_STATUS: Record<string, number> = {
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  RequestTimeout: 408,
  Conflict: 409,
  PreconditionFailed: 412,
  ContentTooLarge: 413,
  UnsupportedMediaType: 415,
  ValidationFailed: 422,
  TooManyRequests: 429,
  Internal: 500,
  Unavailable: 503,
  GatewayTimeout: 504,
};

const problem = (description: string) => ({ description, content: { 'application/problem+json': ProblemSchema } });

/** Problems an operation may answer besides its own: shared response name → when it applies. */
const COMMON_PROBLEMS: Array<[status: string, name: string, when: (route: RestRoute) => boolean]> = [
  ['408', 'RequestTimeout', (r) => r.body !== undefined],
  ['413', 'ContentTooLarge', (r) => r.body !== undefined],
  ['415', 'UnsupportedMediaType', (r) => r.body !== undefined],
  ['429', 'TooManyRequests', (r) => r.secured === true],
  ['500', 'Internal', () => true],
  ['503', 'Unavailable', (r) => r.secured === true],
  ['504', 'GatewayTimeout', (r) => r.secured === true],
];

/** The REST API `{api_url}`: the system of record behind the dashboard. */
export function createApiSurface(ctx: AppContext): Surface {
  const router = new Router();
  const api = ctx.config.publicUrls.api;
  const authenticateHeaders = createAuthenticator(ctx);
  // Started with the surface: a deletion left half-done by a crash resumes here.
  const deletion = organizationDeletion(ctx);
  const routes: RestRoute[] = [
    defineApiRoute({
      method: 'GET',
      path: '/health',
      operationId: 'getHealth',
      summary: 'Liveness',
      description: 'Answers 200 while the API is up. Needs no credentials.',
      tags: ['Service'],
      responses: {
        '200': {
          description: 'Up.',
          content: { 'application/json': z.object({ status: z.literal('ok'), service: z.literal('api') }).meta({ title: 'Health' }) },
        },
      },
      handler: ({ res }) => sendJson(res, 200, { status: 'ok', service: 'api' }),
    }),
    defineApiRoute({
      method: 'GET',
      path: '/.well-known/oauth-protected-resource',
      operationId: 'getProtectedResourceMetadata',
      summary: 'Protected resource metadata',
      description: 'RFC 9728 metadata: which authorization server issues tokens for this API.',
      tags: ['Service'],
      responses: { '200': { description: 'The metadata.', content: { 'application/json': ProtectedResourceMetadataSchema } } },
      handler: ({ res }) =>
        sendJson(res, 200, {
          resource: api,
          authorization_servers: [ctx.config.publicUrls.auth],
          scopes_supported: SCOPES,
          bearer_methods_supported: ['header'],
          resource_name: 'Mindgate Agents API',
        }),
    }),
    ...organizationRoutes({ ctx, authenticate: (c) => authenticateHeaders(c.req.headers) }, [deletion.route]),
    ...billingWebhookRoutes(ctx),
    playbookSchemaRoute(),
    receiveAlertsRoute(ctx),
  ];
  let openapi: Record<string, unknown> | undefined;
  routes.push(
    defineApiRoute({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      summary: 'OpenAPI description',
      description: 'This document (OpenAPI 3.1).',
      tags: ['Service'],
      responses: { '200': { description: 'The OpenAPI document.', content: { 'application/json': OpenApiDocumentSchema } } },
      handler: ({ res }) => sendJson(res, 200, (openapi ??= buildDocument(ctx, routes))),
    }),
  );

  mountApiRoutes(router, routes, {
    onInvalid: (c, invalid) => sendInvalid(c, invalid),
  });
  addDocsPage(router, { title: 'Mindgate Agents API', openapiUrl: '/openapi.json' });

  return {
    name: 'api',
    router,
    before: createDashboardCors(new URL(ctx.config.publicUrls.web).origin),
    close: () => deletion.worker.stop(),
    notFound(c) {
      sendProblem(c.res, { type: problemType(404), title: 'Not Found', status: 404, detail: `No route for ${c.path}`, instance: c.path });
    },
    methodNotAllowed(c, allowed) {
      sendProblem(
        c.res,
        { type: problemType(405), title: 'Method Not Allowed', status: 405, detail: `Allowed: ${allowed.join(', ')}`, instance: c.path },
        { allow: allowed.join(', ') },
      );
    },
    onError(c, err) {
      const problem = problemOf(err);
      if (problem.internal) ctx.logger.error({ requestId: c.requestId, err }, 'request failed');
      const { status, type, detail, errors } = problem;
      sendProblem(c.res, { type, title: statusTitle(status), status, detail, instance: c.path, errors }, problem.headers);
    },
  };
}

function sendInvalid(c: RouteContext, invalid: InvalidParam[]): void {
  sendProblem(c.res, {
    type: problemType(422),
    title: 'Unprocessable Content',
    status: 422,
    detail: 'The request is not valid.',
    instance: c.path,
    errors: invalid.map((i) => ({ loc: [i.in, ...(i.name === '(all)' ? [] : i.name.split('.'))], msg: i.reason, type: 'value_error' })),
  });
}

function buildDocument(ctx: AppContext, routes: RestRoute[]): Record<string, unknown> {
  const doc = buildOpenApiDocument(routes, {
    info: {
      title: 'Mindgate Agents API',
      version: API_VERSION,
      description:
        'The system of record behind the dashboard. Authenticate with an access token issued by the authorization server for this API (`Authorization: Bearer`), or with an organization API key (`x-api-key`). Errors are RFC 9457 problem documents.',
    },
    servers: [{ url: ctx.config.publicUrls.api }],
    schemas: { Problem: ProblemSchema },
    responses: {
      Unauthorized: {
        ...problem('Missing or invalid credentials.'),
        headers: { 'WWW-Authenticate': { description: 'The Bearer challenge (RFC 6750).', schema: { type: 'string' } } },
      },
      Forbidden: problem('The credentials act for another organization, or may not do this.'),
      NotFound: problem('No such resource in this organization.'),
      RequestTimeout: problem('The request body stopped arriving (BODY_TIMEOUT_MS) or took too long (REQUEST_TIMEOUT_MS).'),
      ValidationFailed: problem('A parameter or the body is not valid; `errors` lists every problem.'),
      Conflict: problem('The change conflicts with the current state (for example, it would leave the organization without an owner).'),
      PreconditionFailed: problem('If-Match does not name the current version: read the resource again.'),
      ContentTooLarge: problem('The body is larger than MAX_BODY_BYTES.'),
      UnsupportedMediaType: problem('The body is not application/json.'),
      TooManyRequests: {
        ...problem("Over the organization's plan limit for this minute (type: the registered quota-exceeded)."),
        headers: { 'Retry-After': { description: 'Seconds until the window resets.', schema: { type: 'integer' } } },
      },
      Internal: problem('Our failure; logged with the request id.'),
      Unavailable: problem('A service this needs did not answer; retry.'),
      GatewayTimeout: problem('A service this needs answered too late; retry.'),
    },
  });
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;
  const components = doc.components as Record<string, Record<string, unknown>>;
  const toPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  for (const route of routes) {
    const op = paths[toPath(route.path)]?.[route.method.toLowerCase()];
    if (!op) continue;
    op.security = route.secured ? [{ BearerToken: [] }, { ApiKey: [] }, { OAuth2: [] }] : (route.security ?? []);
    for (const [status, name, when] of COMMON_PROBLEMS) {
      if (when(route)) (op.responses as Record<string, unknown>)[status] ??= { $ref: `#/components/responses/${name}` };
    }
    if (route.creates) {
      op.parameters = [...((op.parameters as unknown[]) ?? []), IDEMPOTENCY_KEY_PARAMETER];
      const responses = op.responses as Record<string, unknown>;
      responses['409'] ??= { $ref: '#/components/responses/Conflict' };
    }
    if (route.access) {
      const roles = rolesAllowed(route.access);
      const scope = route.access.machines ? machineScope(route.access, route.method) : null;
      const access = route.access;
      op['x-mindgate-access'] = {
        roles,
        api_keys: access.machines,
        api_key_scope: scope,
        self: access.self ?? false,
        user: access.user ?? false,
        ...(access.operator ? { operator: true } : {}),
      };
      const machines = scope ? `with the ${scope} scope` : 'no';
      const who = access.user
        ? 'any signed-in user, on their own account'
        : `${roles.join(', ')}${access.self ? ' (any member on themselves)' : ''}`;
      op.description = `${op.description ?? ''}\n\nRoles: ${who}; API keys and client credentials: ${machines}.`.trim();
    }
    if (route.body) {
      const title = (z.toJSONSchema(route.body) as { title?: string }).title ?? `${route.operationId}Body`;
      const schemas = components.schemas as Record<string, unknown>;
      schemas[title] ??= stripSchema(z.toJSONSchema(route.body, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>);
      op.requestBody = requestBody(title, route.yamlBody === true);
      addUploadTypes(op, route);
    }
  }
  addExamples(withRawBodies(doc, routes));
  components.securitySchemes = securitySchemes(ctx);
  return doc;
}

/** How the document's operations authenticate: users' tokens, API keys, and an alert source's secret. */
function securitySchemes(ctx: AppContext): Record<string, unknown> {
  const auth = ctx.config.publicUrls.auth;
  return {
    BearerToken: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: `An access token issued by ${auth} for the audience ${ctx.config.publicUrls.api}.`,
    },
    ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key of the organization.' },
    AlertSourceSecret: ALERT_SOURCE_SECURITY_SCHEME,
    OAuth2: {
      type: 'oauth2',
      flows: {
        authorizationCode: {
          authorizationUrl: `${auth}/authorize`,
          tokenUrl: `${auth}/token`,
          refreshUrl: `${auth}/token`,
          scopes: { openid: 'OpenID Connect sign-in', profile: 'Profile claims', email: 'E-mail claim', offline_access: 'Refresh tokens' },
        },
        clientCredentials: { tokenUrl: `${auth}/token`, scopes: {} },
      },
    },
  };
}

type Json = Record<string, unknown>;

/** The request bodies that are not JSON at all (a JSON Lines import), as their routes state them. */
function withRawBodies(doc: Json, routes: RestRoute[]): Json {
  const paths = doc.paths as Record<string, Record<string, Json>>;
  for (const route of routes) {
    const op = paths[route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[route.method.toLowerCase()];
    if (op && route.requestBody) op.requestBody = route.requestBody;
  }
  return doc;
}

/** The files an operation also takes as its raw body (memory seeding's uploads), beside JSON. */
function addUploadTypes(op: Json, route: RestRoute): void {
  const content = (op.requestBody as { content: Record<string, unknown> }).content;
  for (const type of route.uploadTypes ?? []) content[type] = { schema: { type: 'string', format: 'binary' } };
}

/** A request body of the components' schema `title`: JSON, and YAML too where the route reads it. */
function requestBody(title: string, yaml: boolean): Json {
  const schema = { $ref: `#/components/schemas/${title}` };
  return { required: true, content: { 'application/json': { schema }, ...(yaml ? { 'application/yaml': { schema } } : {}) } };
}

/**
 * Puts an example on every JSON body of the document (examples.ts, by schema title): the media
 * types of responses and request bodies, and the shared problem responses (one per status).
 */
function addExamples(doc: Json): void {
  const components = doc.components as Record<string, Record<string, Json>>;
  const resolve = (schema: Json | undefined): Json | undefined => {
    const ref = schema?.$ref;
    return typeof ref === 'string' ? components.schemas[ref.split('/').pop()!] : schema;
  };
  const annotate = (content: Record<string, Json> | undefined, example?: unknown) => {
    for (const media of Object.values(content ?? {})) {
      const schema = resolve(media.schema as Json | undefined);
      media.example ??= example ?? exampleFor(schema?.title as string | undefined, schema ?? {});
      if (media.example === undefined) delete media.example;
    }
  };
  for (const [name, response] of Object.entries(components.responses ?? {})) {
    const status = PROBLEM_STATUS[name];
    const example =
      status === 422 ? EXAMPLES.Problem : { type: problemType(status), title: statusTitle(status), status, detail: response.description };
    annotate(response.content as Record<string, Json>, example);
  }
  for (const ops of Object.values(doc.paths as Record<string, Record<string, Json>>)) {
    for (const op of Object.values(ops)) {
      for (const response of Object.values(op.responses as Record<string, Json>)) annotate(response.content as Record<string, Json>);
      annotate((op.requestBody as Json | undefined)?.content as Record<string, Json>);
    }
  }
}

function stripSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _s, ...rest } = schema;
  return rest;
}
