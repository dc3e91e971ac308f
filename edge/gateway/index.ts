// The gateway `{base_url}`: the streaming proxy to MCP backends, discovery metadata, the
// stateless OAuth facade, and its OpenAPI document. See docs/gateway.md.
import { toHttpError } from '../errors.ts';
import type { AppContext } from '../context.ts';
import { addDocsPage } from '../http/docs-page.ts';
import type { Surface } from '../http/listener.ts';
import { BodyTooLargeError, sendJson, sendText } from '../http/respond.ts';
import { Router, type Method, type RouteContext, type RouteHandler } from '../http/router.ts';
import { isRequestValidationError, sendValidationError } from '../http/validation.ts';
import { handleCors } from './cors.ts';
import { addDiscoveryRoutes } from './discovery.ts';
import { OAuthError, sendGatewayError, sendOAuthError } from './errors.ts';
import { createAuthorizeHandlers } from './oauth/authorize.ts';
import { createCallbackHandler } from './oauth/callback.ts';
import type { FacadeDeps } from './oauth/facade.ts';
import { createRegisterHandler } from './oauth/register.ts';
import { platformClientFor, platformUpstream, type PlatformClient } from './oauth/platform-client.ts';
import { resolveStateSecrets } from './oauth/secret.ts';
import { createTokenHandler } from './oauth/token.ts';
import { createFacadeCrypto } from './oauth/tokens.ts';
import { createUpstreamClient, type UpstreamClient } from './oauth/upstream.ts';
import { buildGatewayOpenApi, GATEWAY_VERSION } from './openapi.ts';
import { createProxy } from './proxy.ts';
import { createGatewayKeyring } from './keyring.ts';
import { createConnectionTickets } from './connection-test.ts';
import { createOrganizationAccess } from './organization-access.ts';
import { createServerRegistry, type LocalHandler, type RegistryChange, type ServerRegistry } from './registry.ts';
import { startRegistrySync, type RegistrySync } from './registry-sync.ts';

export { GATEWAY_VERSION };
export type { GatewayAuthMode, GatewayServer, LocalHandler, LocalRequest, ServerRegistry } from './registry.ts';

export interface GatewaySurfaceOptions {
  /** Servers served in-process, by name (the Brain's MCP endpoint): see ServerRegistry.mountLocal. */
  localHandlers?: Record<string, LocalHandler>;
}

export interface GatewaySurface extends Surface {
  /** The registry, for mounting local handlers after the surface is built. */
  registry: ServerRegistry;
  /**
   * The gateway's clients at the platform's authorization server, one per server authorized by
   * `platform`: the platform registers them at start (edge/index.ts), before the facade is used.
   */
  platformClients: PlatformClient[];
  /** Polls the servers and keys managed through the Agents API; `ready` once the first poll is applied. */
  registrySync: RegistrySync;
}

const ALL_METHODS: Method[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];

/** The gateway `{base_url}`. */
export function createGatewaySurface(ctx: AppContext, options: GatewaySurfaceOptions = {}): GatewaySurface {
  const config = ctx.config.gateway;
  const publicUrl = ctx.config.publicUrls.gateway;
  const logger = ctx.logger.child({ component: 'gateway' });
  const registry = createServerRegistry({ config, publicUrl, platformAuthUrl: ctx.config.publicUrls.auth });
  for (const [name, handler] of Object.entries(options.localHandlers ?? {})) registry.mountLocal(name, handler);

  const stateSecrets = resolveStateSecrets(config.stateSecrets, ctx.config.storage.dataDir);
  const upstreams = new Map<string, UpstreamClient>();
  const platformClients: PlatformClient[] = [];
  for (const server of registry.list()) {
    if (server.upstream) upstreams.set(server.name, createUpstreamClient(server.upstream, ctx.now));
    if (server.config.auth.kind === 'platform') {
      const client = platformClientFor(server, stateSecrets);
      platformClients.push(client);
      upstreams.set(server.name, createUpstreamClient(platformUpstream(server, ctx.config.publicUrls.auth, client), ctx.now));
    }
  }
  // Managed servers come and go: their facade's upstream client follows them.
  const followUpstreams = (change: RegistryChange) => {
    for (const name of change.removed) upstreams.delete(name);
    for (const server of change.updated) {
      if (server.upstream) upstreams.set(server.name, createUpstreamClient(server.upstream, ctx.now));
      else upstreams.delete(server.name);
    }
  };
  const keyring = createGatewayKeyring(config.keys, ctx.now);
  const registrySync = startRegistrySync({
    client: ctx.clients.gatewayRegistry,
    registry,
    keyring,
    kek: ctx.keyEncryption,
    intervalMs: config.registryPollMs,
    logger: logger.child({ component: 'gateway-registry' }),
    onChange: followUpstreams,
  });
  const facade: FacadeDeps = {
    registry,
    crypto: createFacadeCrypto(stateSecrets),
    upstreams,
    replay: ctx.stores.records.collection('gateway_replay'),
    publicUrl,
    logger,
    now: ctx.now,
  };
  const organizations = createOrganizationAccess({
    apiKeys: ctx.clients.apiKeys,
    tokens: ctx.tokens,
    tickets: createConnectionTickets(stateSecrets, ctx.now),
    now: ctx.now,
  });
  const proxy = createProxy({ registry, config, keyring, organizations, publicUrl, logger });
  const openapi = JSON.stringify(buildGatewayOpenApi({ publicUrl, defaultServer: config.defaultServer }));

  const router = new Router();
  router.get('/health', ({ res }) => sendJson(res, 200, { status: 'ok', service: 'gateway', version: GATEWAY_VERSION }));
  router.get('/openapi.json', ({ res }) => sendText(res, 200, openapi, 'application/json'));
  addDocsPage(router, { title: 'Mindgate MCP Gateway', openapiUrl: '/openapi.json' });
  addDiscoveryRoutes(router, { registry, facade, publicUrl });

  // The OAuth facade, per server and (for clients that guess root-level endpoints) for the default server.
  const rootAuthorize = createAuthorizeHandlers(facade, true);
  const serverAuthorize = createAuthorizeHandlers(facade, false);
  only(router, '/authorize', { GET: rootAuthorize.show, POST: rootAuthorize.decide });
  only(router, '/token', { POST: createTokenHandler(facade, true) });
  only(router, '/register', { POST: createRegisterHandler(facade, true) });
  only(router, '/:server/oauth/authorize', { GET: serverAuthorize.show, POST: serverAuthorize.decide });
  only(router, '/:server/oauth/callback', { GET: createCallbackHandler(facade) });
  only(router, '/:server/oauth/token', { POST: createTokenHandler(facade, false) });
  only(router, '/:server/oauth/register', { POST: createRegisterHandler(facade, false) });

  // Everything else under a server goes to its backend; `/{server}` and `/{server}/` alike.
  router.on(['GET', 'POST', 'PUT', 'DELETE'], '/:server/*path', proxy.handle);

  return {
    name: 'gateway',
    router,
    registry,
    platformClients,
    registrySync,
    before: (ctx) => handleCors(ctx) || proxy.tryDirect(ctx),
    notFound: ({ res }) => sendGatewayError(res, 404, 'not_found', 'Not Found'),
    methodNotAllowed: ({ res }, allowed) =>
      sendGatewayError(res, 405, 'method_not_allowed', 'Method Not Allowed', { allow: allowed.join(', ') }),
    onError({ res, requestId }, err) {
      if (isRequestValidationError(err)) return sendValidationError(res, err);
      if (err instanceof OAuthError) return sendOAuthError(res, err);
      if (err instanceof BodyTooLargeError) {
        return sendGatewayError(res, 413, 'payload_too_large', err.message, { connection: 'close' });
      }
      const e = toHttpError(err);
      if (e.internal) logger.error({ requestId, err }, 'gateway request failed');
      sendGatewayError(res, e.status, e.code, e.message);
    },
    close: () => {
      registrySync.close();
      return registry.close();
    },
  };
}

/**
 * Routes `pattern` for the given methods and answers 405 for the others, so that a facade path
 * is never mistaken for a proxy path under another method.
 */
function only(router: Router, pattern: string, handlers: Partial<Record<Method, RouteHandler>>): void {
  const allowed = Object.keys(handlers);
  if (allowed.includes('GET')) allowed.push('HEAD');
  router.on(ALL_METHODS, pattern, (ctx: RouteContext) => {
    const method = (ctx.req.method === 'HEAD' ? 'GET' : ctx.req.method) as Method;
    const handler = handlers[method];
    if (handler) return handler(ctx);
    sendGatewayError(ctx.res, 405, 'method_not_allowed', 'Method Not Allowed', { allow: allowed.join(', ') });
  });
}
