// Discovery: RFC 9728 protected-resource metadata and RFC 8414 / OpenID authorization-server
// metadata, each in three forms (root for the default server, per-server `/{server}/.well-known/…`,
// and path-suffix `/.well-known/…/{server_path}`). Every URL comes from the configured public URL,
// never from Host or X-Forwarded-Host. Failures are JSON 404s or 422s, never 5xx: MCP clients move
// on to the next candidate URL after a 4xx but give up after most 5xx.
import type { Router, RouteContext } from '../http/router.ts';
import { sendJson } from '../http/respond.ts';
import { RequestValidationError, sendValidationError } from '../http/validation.ts';
import { sendGatewayError, serverNameError } from './errors.ts';
import { endpointsOf, type FacadeDeps } from './oauth/facade.ts';
import { unknownServer } from './proxy.ts';
import type { GatewayServer, ServerRegistry } from './registry.ts';

export interface DiscoveryOptions {
  registry: ServerRegistry;
  facade: FacadeDeps;
  publicUrl: string;
}

const METADATA_HEADERS = { 'cache-control': 'public, max-age=300' };
const SEGMENT = /^[A-Za-z0-9._~-]+$/;

export function addDiscoveryRoutes(router: Router, options: DiscoveryOptions): void {
  const { registry, publicUrl } = options;

  // --- RFC 9728 protected resource metadata ---
  router.get('/.well-known/oauth-protected-resource', ({ res }) => {
    const server = registry.defaultServer;
    sendProtectedResource(res, server, server.resource);
  });
  router.get('/.well-known/oauth-protected-resource/*server_path', (ctx) => {
    const target = serverFromPath(ctx, registry);
    if (!target) return;
    // RFC 9728 §3.3: `resource` is exactly the URL whose metadata the client asked for.
    sendProtectedResource(ctx.res, target.server, `${publicUrl}/${target.path}`);
  });
  router.get('/:server/.well-known/oauth-protected-resource', (ctx) => {
    const server = serverFromParam(ctx, registry);
    if (server) sendProtectedResource(ctx.res, server, server.base);
  });

  // --- RFC 8414 authorization server metadata, and its OpenID Connect alias ---
  for (const [suffix, oidc] of [
    ['oauth-authorization-server', false],
    ['openid-configuration', true],
  ] as const) {
    router.get(`/.well-known/${suffix}`, (ctx) => sendServerMetadata(ctx, options, registry.defaultServer, true, oidc));
    router.get(`/.well-known/${suffix}/*server_path`, (ctx) => {
      const target = serverFromPath(ctx, registry);
      if (target) return sendServerMetadata(ctx, options, target.server, false, oidc);
    });
    router.get(`/:server/.well-known/${suffix}`, (ctx) => {
      const server = serverFromParam(ctx, registry);
      if (server) return sendServerMetadata(ctx, options, server, false, oidc);
    });
  }

  // Anything else under a well-known prefix is a plain JSON 404, never proxied, never a 5xx.
  const unknownWellKnown = ({ res, path }: RouteContext) => sendGatewayError(res, 404, 'not_found', `No metadata is published at ${path}.`);
  router.get('/.well-known/*rest', unknownWellKnown);
  router.get('/:server/.well-known/*rest', unknownWellKnown);
}

function sendProtectedResource(res: RouteContext['res'], server: GatewayServer, resource: string): void {
  if (!server.usesOAuth) {
    return sendGatewayError(res, 404, 'no_oauth', `Server ${server.name} does not use OAuth.`);
  }
  const doc: Record<string, unknown> = {
    resource,
    authorization_servers: server.authorizationServers,
    bearer_methods_supported: ['header'],
    resource_name: server.name,
  };
  if (server.config.scopes.length > 0) doc.scopes_supported = server.config.scopes;
  sendJson(res, 200, withoutEmptyArrays(doc), METADATA_HEADERS);
}

async function sendServerMetadata(
  ctx: RouteContext,
  options: DiscoveryOptions,
  server: GatewayServer,
  root: boolean,
  oidc: boolean,
): Promise<void> {
  const upstream = options.facade.upstreams.get(server.name);
  if (!upstream) {
    const where = server.authorizationServers[0];
    return sendGatewayError(
      ctx.res,
      404,
      'no_oauth_facade',
      where
        ? `Server ${server.name} is authorized by ${where}; its metadata is published there.`
        : `Server ${server.name} does not use OAuth.`,
    );
  }
  const endpoints = endpointsOf(options.facade, { server, root });
  const doc: Record<string, unknown> = {
    issuer: root ? options.publicUrl : server.base,
    authorization_endpoint: endpoints.authorization,
    token_endpoint: endpoints.token,
    registration_endpoint: endpoints.registration,
    scopes_supported: upstream.config.scopes,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${options.publicUrl}/docs`,
  };
  if (oidc) {
    // ID tokens, when the upstream issues them, are the upstream's: name its keys when known.
    let known = upstream.knownEndpoints();
    if (!known?.jwksUri && upstream.config.issuer) {
      known = await upstream.endpoints().catch(() => known);
    }
    if (known?.jwksUri) doc.jwks_uri = known.jwksUri;
    doc.subject_types_supported = ['public'];
    doc.id_token_signing_alg_values_supported = known?.idTokenSigningAlgs?.length ? known.idTokenSigningAlgs : ['RS256'];
  }
  sendJson(ctx.res, 200, withoutEmptyArrays(doc), METADATA_HEADERS);
}

function serverFromParam(ctx: RouteContext, registry: ServerRegistry): GatewayServer | undefined {
  const name = ctx.params.server;
  const bad = serverNameError(name);
  if (bad) {
    sendValidationError(ctx.res, bad);
    return undefined;
  }
  const server = registry.get(name);
  if (!server) unknownServer(ctx.res, name);
  return server;
}

/**
 * `{server_path}`: the first segment names the server (rule 1: the rest is stripped for the
 * lookup); the whole path is the resource the client used.
 */
function serverFromPath(ctx: RouteContext, registry: ServerRegistry): { server: GatewayServer; path: string } | undefined {
  const raw = ctx.params.server_path;
  const segments = raw.split('/');
  let name: string;
  try {
    name = decodeURIComponent(segments[0]);
  } catch {
    name = segments[0];
  }
  const invalid = (msg: string) => {
    sendValidationError(
      ctx.res,
      new RequestValidationError([
        { type: 'value_error', loc: ['path', 'server_path'], msg: `Value error, ${msg}`, input: raw, ctx: { error: msg } },
      ]),
    );
    return undefined;
  };
  if (name === '') return invalid('the path must start with a server name');
  const bad = serverNameError(name, 'server_path');
  if (bad) {
    sendValidationError(ctx.res, bad);
    return undefined;
  }
  const rest = segments.slice(1);
  for (const [i, seg] of rest.entries()) {
    const last = i === rest.length - 1;
    if ((seg === '' && !last) || (seg !== '' && (!SEGMENT.test(seg) || seg === '.' || seg === '..'))) {
      return invalid('the resource path may only hold plain segments');
    }
  }
  const server = registry.get(name);
  if (!server) {
    unknownServer(ctx.res, name);
    return undefined;
  }
  return { server, path: [name, ...rest].join('/') };
}

function withoutEmptyArrays(doc: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(doc)) {
    if (Array.isArray(v) && v.length === 0) delete doc[k];
  }
  return doc;
}
