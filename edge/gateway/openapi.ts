// The gateway's OpenAPI 3.1.0 document. Request and response schemas are the zod schemas that
// validate the requests (schemas.ts, edge/http/validation.ts), converted with z.toJSONSchema.
import { z } from 'zod';
import { HTTPValidationErrorSchema, ValidationErrorSchema } from '../http/validation.ts';
import {
  AuthorizeQuerySchema,
  CallbackQuerySchema,
  ConsentFormSchema,
  DCRRequestSchema,
  DCRResponseSchema,
  GatewayErrorSchema,
  OAuthErrorSchema,
  TokenFormSchema,
  TokenResponseSchema,
} from './schemas.ts';

export const GATEWAY_VERSION = '0.3.0';

type Doc = Record<string, unknown>;

export interface GatewayOpenApiOptions {
  publicUrl: string;
  defaultServer: string;
}

const NAMED: [string, z.ZodType][] = [
  ['DCRRequest', DCRRequestSchema],
  ['DCRResponse', DCRResponseSchema],
  ['HTTPValidationError', HTTPValidationErrorSchema],
  ['ValidationError', ValidationErrorSchema],
  ['TokenRequest', TokenFormSchema],
  ['TokenResponse', TokenResponseSchema],
  ['ConsentDecision', ConsentFormSchema],
  ['OAuthError', OAuthErrorSchema],
  ['GatewayError', GatewayErrorSchema],
];

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function clean(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(clean);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Doc = {};
  for (const [k, v] of Object.entries(schema as Doc)) {
    if (k === '$schema' || k === '$id') continue;
    // z.int() bounds are the safe-integer range: noise in a document.
    if ((k === 'minimum' && v === Number.MIN_SAFE_INTEGER) || (k === 'maximum' && v === Number.MAX_SAFE_INTEGER)) continue;
    out[k] = clean(v);
  }
  return out;
}

function componentSchemas(): Doc {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of NAMED) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { target: 'draft-2020-12', io: 'input', uri: (id) => `#/components/schemas/${id}` });
  return clean(schemas) as Doc;
}

function queryParameters(schema: z.ZodObject): Doc[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const json = clean(z.toJSONSchema(field as z.ZodType, { io: 'input' })) as Doc;
    const { description, ...rest } = json;
    return {
      name,
      in: 'query',
      required: !(field as z.ZodType).safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

const SERVER_NAME = {
  name: 'server_name',
  in: 'path',
  required: true,
  description: 'A registered MCP server: `[A-Za-z0-9._-]+`.',
  schema: { type: 'string', pattern: '^[A-Za-z0-9._-]+$', title: 'Server Name' },
};

const SERVER_PATH = {
  name: 'server_path',
  in: 'path',
  required: true,
  description:
    'The resource path, a server name optionally followed by its MCP path (`brain/mcp`). Only the first segment selects the server; the schema states the server name, since a `/` in a path parameter is sent encoded.',
  schema: { type: 'string', pattern: '^[A-Za-z0-9._-]+$', title: 'Server Path' },
};

const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } });
const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const V422 = json(ref('HTTPValidationError'), 'Validation Error');
const E404 = json(ref('GatewayError'), 'Unknown server, or a server without this metadata.');
const METADATA = json({ type: 'object', additionalProperties: true }, 'Metadata document.');

function op(operationId: string, summary: string, extra: Doc): Doc {
  return {
    operationId,
    summary,
    tags: [extra.tag ?? 'OAuth facade'],
    ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'tag')),
  };
}

export function buildGatewayOpenApi(options: GatewayOpenApiOptions): Doc {
  const { publicUrl, defaultServer } = options;
  const paths: Doc = {
    ...operationsPaths(),
    ...discoveryPaths(defaultServer),
    ...facadePaths(),
    ...proxyPaths(),
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Mindgate MCP Gateway',
      version: GATEWAY_VERSION,
      description:
        "A gateway for hosted MCP servers: a streaming proxy, discovery metadata, and a stateless OAuth facade in front of each server's identity provider.",
    },
    servers: [{ url: publicUrl }],
    tags: [
      { name: 'Proxy', description: 'MCP Streamable HTTP to the backends.' },
      { name: 'Discovery', description: 'RFC 9728, RFC 8414 and OpenID discovery documents.' },
      { name: 'OAuth facade', description: 'Stateless registration, authorization relay and token endpoint.' },
      { name: 'Operations', description: 'Liveness.' },
    ],
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        BearerToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'An MCP OAuth access token, passed through to the backend.',
        },
        GatewayKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Gateway-Key',
          description: "An operator key: the caller is the operator's own infrastructure.",
        },
        OAuth2: {
          type: 'oauth2',
          flows: {
            authorizationCode: {
              authorizationUrl: `${publicUrl}/${defaultServer}/oauth/authorize`,
              tokenUrl: `${publicUrl}/${defaultServer}/oauth/token`,
              refreshUrl: `${publicUrl}/${defaultServer}/oauth/token`,
              scopes: {
                openid: 'OpenID Connect sign-in',
                profile: 'Profile claims',
                email: 'Email claim',
                offline_access: 'Refresh tokens',
              },
            },
          },
        },
      },
    },
  };
}

function operationsPaths(): Doc {
  return {
    '/health': {
      get: op('health', 'Liveness', {
        tag: 'Operations',
        responses: { 200: json({ type: 'object', additionalProperties: true }, 'The gateway is up.') },
      }),
    },
  };
}

function wellKnown(id: string, summary: string, params: Doc[], description: string): Doc {
  return op(id, summary, {
    tag: 'Discovery',
    description,
    ...(params.length ? { parameters: params } : {}),
    responses: { 200: METADATA, 404: E404, ...(params.length ? { 422: V422 } : {}) },
  });
}

/** RFC 9728, RFC 8414 and OpenID discovery: per server, for the default server, and path-suffixed. */
function discoveryPaths(defaultServer: string): Doc {
  const paths: Doc = {};
  paths['/.well-known/oauth-protected-resource'] = {
    get: wellKnown(
      'protected_resource_metadata_default',
      'RFC 9728 metadata for the default server',
      [],
      `Protected resource metadata of the default server (\`${defaultServer}\`); its \`resource\` is that server's MCP endpoint.`,
    ),
  };
  paths['/.well-known/oauth-authorization-server'] = {
    get: wellKnown(
      'authorization_server_metadata_default',
      'RFC 8414 metadata for the default server',
      [],
      'Issuer `{base_url}`; endpoints are the root aliases /authorize, /token, /register.',
    ),
  };
  paths['/.well-known/openid-configuration'] = {
    get: wellKnown(
      'openid_configuration_default',
      'OpenID discovery for the default server',
      [],
      'The RFC 8414 document with the OpenID discovery members.',
    ),
  };
  paths['/{server_name}/.well-known/oauth-protected-resource'] = {
    get: wellKnown(
      'protected_resource_metadata',
      'RFC 9728 metadata of a server',
      [SERVER_NAME],
      'Tells MCP clients which authorization server authorizes this resource (`resource` is `{base_url}/{server_name}`).',
    ),
  };
  paths['/{server_name}/.well-known/oauth-authorization-server'] = {
    get: wellKnown('authorization_server_metadata', 'RFC 8414 metadata of a server', [SERVER_NAME], 'Issuer `{base_url}/{server_name}`.'),
  };
  paths['/{server_name}/.well-known/openid-configuration'] = {
    get: wellKnown('openid_configuration', 'OpenID discovery alias', [SERVER_NAME], 'Used by clients that fall back when RFC 8414 fails.'),
  };
  paths['/.well-known/oauth-authorization-server/{server_path}'] = {
    get: wellKnown(
      'authorization_server_metadata_path',
      'RFC 8414 path-suffix variant',
      [SERVER_PATH],
      'Issuer `{base_url}/{server}` for the first segment of `server_path`.',
    ),
  };
  paths['/.well-known/openid-configuration/{server_path}'] = {
    get: wellKnown(
      'openid_configuration_path',
      'OIDC path-suffix variant',
      [SERVER_PATH],
      'Issuer `{base_url}/{server}` for the first segment of `server_path`.',
    ),
  };
  paths['/.well-known/oauth-protected-resource/{server_path}'] = {
    get: wellKnown(
      'protected_resource_metadata_path',
      'RFC 9728 path-suffix variant',
      [SERVER_PATH],
      '`resource` is `{base_url}/{server_path}`, exactly the URL the client used.',
    ),
  };
  return paths;
}

function registerOp(id: string, params: Doc[]): Doc {
  return op(id, 'Stateless dynamic client registration', {
    description:
      "RFC 7591 subset. Answers the server's pre-registered upstream client_id; nothing is stored. Redirect URIs: https, loopback http on any port, private-use schemes in reverse domain-name form (`com.example.app:`) or `cursor:`.",
    ...(params.length ? { parameters: params } : {}),
    requestBody: { required: true, content: { 'application/json': { schema: ref('DCRRequest') } } },
    responses: {
      200: json(ref('DCRResponse'), 'The registration (public client: no secret).'),
      400: json(ref('OAuthError'), '`invalid_redirect_uri`.'),
      404: E404,
      413: json(ref('GatewayError'), 'Body too large.'),
      422: V422,
    },
  });
}

function authorizeOp(id: string, params: Doc[]): Doc {
  return op(id, 'Authorize (consent, then relay to the upstream IdP)', {
    description:
      "Validates the request (client_id, redirect_uri, S256 PKCE) and shows the gateway's consent page, which sets the browser-binding cookie. Invalid requests get a 400 page, never a redirect.",
    parameters: [...params, ...queryParameters(AuthorizeQuerySchema)],
    responses: { 200: html('The consent page.'), 400: html('The request is invalid.'), 404: E404, 422: V422 },
  });
}

function consentOp(id: string, params: Doc[]): Doc {
  return op(id, 'Consent decision', {
    description:
      'The consent page posts here. Approval redirects to the upstream IdP with the gateway callback, its own PKCE and the signed state; denial redirects to the client with `access_denied`.',
    ...(params.length ? { parameters: params } : {}),
    requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: ref('ConsentDecision') } } },
    responses: {
      302: { description: 'To the upstream IdP, or to the client on denial.' },
      400: html('Invalid, expired or cross-browser consent.'),
      404: E404,
      422: V422,
    },
  });
}

function tokenOp(id: string, params: Doc[]): Doc {
  return op(id, 'Token endpoint', {
    description:
      'Form-encoded only. `authorization_code` redeems a gateway code (PKCE, client_id and redirect_uri checked, single use); `refresh_token` is relayed to the upstream with the gateway credentials and the answer passed through.',
    ...(params.length ? { parameters: params } : {}),
    requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: ref('TokenRequest') } } },
    responses: {
      200: json(ref('TokenResponse'), 'Tokens.'),
      400: json(ref('OAuthError'), '`invalid_request`, `invalid_grant`, `unsupported_grant_type`.'),
      401: json(ref('OAuthError'), '`invalid_client`.'),
      404: E404,
      422: V422,
      502: json(ref('OAuthError'), 'The upstream answered unexpectedly.'),
      503: json(ref('OAuthError'), 'The upstream is unreachable.'),
    },
  });
}

/** The OAuth facade: per server, and the root aliases of the default server. */
function facadePaths(): Doc {
  const paths: Doc = {};
  paths['/{server_name}/oauth/register'] = { post: registerOp('register', [SERVER_NAME]) };
  paths['/{server_name}/oauth/authorize'] = {
    get: authorizeOp('authorize', [SERVER_NAME]),
    post: consentOp('authorize_consent', [SERVER_NAME]),
  };
  paths['/{server_name}/oauth/callback'] = {
    get: op('callback', 'Upstream callback', {
      description:
        "Verifies the state (signature, expiry, browser binding, single use), exchanges the upstream code server-side and redirects to the client's redirect_uri with a gateway code, the client's state and `iss`.",
      parameters: [SERVER_NAME, ...queryParameters(CallbackQuerySchema)],
      responses: {
        302: { description: 'To the client with `code` (or an OAuth error), `state` and `iss`.' },
        400: html('Invalid, expired, replayed or cross-browser state.'),
        404: E404,
        422: V422,
      },
    }),
  };
  paths['/{server_name}/oauth/token'] = { post: tokenOp('token', [SERVER_NAME]) };
  paths['/authorize'] = { get: authorizeOp('authorize_default', []), post: consentOp('authorize_consent_default', []) };
  paths['/token'] = { post: tokenOp('token_default', []) };
  paths['/register'] = { post: registerOp('register_default', []) };
  return paths;
}

/** Everything else under `/{server_name}` goes to the backend. */
function proxyPaths(): Doc {
  const PATH = {
    name: 'path',
    in: 'path',
    required: true,
    description: "The rest of the path, forwarded under the backend's base path (may contain slashes; never `..`).",
    schema: { type: 'string', title: 'Path' },
  };
  const proxyOp = (method: string) =>
    op(`proxy_${method}`, `Proxy ${method.toUpperCase()} to the backend`, {
      tag: 'Proxy',
      description:
        "Streams the request to the backend of `server_name` and its response back (SSE event by event). `Authorization` passes through unchanged; `X-Gateway-Key` is the operator alternative and is never forwarded. A server an organization owns admits only that organization: an API key of it in `X-Api-Key` (removed before forwarding), or, for a server authorized by the platform, a platform token for it naming the organization; the backend gets `X-Gateway-Organization`. A server's tool policy filters `tools/list` results and answers calls of other tools with a JSON-RPC error. A backend 401 challenge is rewritten to name the gateway metadata. The platform's own cookies are never forwarded, nor set by a backend; header names with an underscore are dropped. Paths under `/{server_name}/oauth` belong to the OAuth facade and are never proxied (404).",
      security: [{ BearerToken: [] }, { GatewayKey: [] }],
      parameters: [SERVER_NAME, PATH],
      responses: {
        200: { description: 'The backend response, passed through.' },
        401: json(
          ref('GatewayError'),
          'No credentials for a server that uses OAuth (carries `WWW-Authenticate`), a bad gateway key, or no valid credential of the organization that owns the server.',
        ),
        403: json(
          ref('GatewayError'),
          'The credentials are of another organization than the one that owns the server (`forbidden_organization`).',
        ),
        404: json(ref('GatewayError'), "Unknown server, a path under `/{server_name}/oauth` (or the backend's own 404, unchanged)."),
        408: json(
          ref('GatewayError'),
          'The request body stopped arriving, or took too long (`BODY_TIMEOUT_MS`, `REQUEST_TIMEOUT_MS`); the connection is closed.',
        ),
        413: json(ref('GatewayError'), 'Body too large.'),
        422: V422,
        502: json(ref('GatewayError'), 'The backend is unreachable.'),
        503: json(
          ref('GatewayError'),
          'The server is disabled (`server_disabled`), or its backend is busy (`backend_busy`, with `Retry-After`).',
        ),
        504: json(ref('GatewayError'), 'The backend did not answer in time.'),
      },
    });
  return { '/{server_name}/{path}': Object.fromEntries(['get', 'post', 'put', 'delete'].map((m) => [m, proxyOp(m)])) };
}
