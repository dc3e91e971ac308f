// The authorization server `{auth_url}`: oidc-provider mounted on the edge listener, with the
// account pages beside it. Routes of our own come first; everything else is oidc-provider's.
import type { IncomingMessage } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { toHttpError } from '../errors.ts';
import type { Surface } from '../http/listener.ts';
import { BodyTooLargeError, readBody, sendJson } from '../http/respond.ts';
import { Router, type RouteContext } from '../http/router.ts';
import { createAccounts } from './accounts.ts';
import { FormError, registerInteractions } from './interactions.ts';
import { loadAuthKeys } from './keys.ts';
import { messagePage, PAGE_HEADERS } from './pages.ts';
import { createAuthServer, type AuthServer } from './provider.ts';
import { createPlatformResourceCheck } from '../gateway/platform-resources.ts';
import { createRevocationStore, type RevocationStore } from './revocations.ts';
import { createTokenVerifier, isJwtShaped, type AccessTokenClaims, type TokenVerifier } from './verify.ts';

const TOKEN_FORM_LIMIT = 56 * 1024;

function oauthError(c: RouteContext, status: number, error: string, description: string, headers: Record<string, string> = {}) {
  sendJson(c.res, status, { error, error_description: description }, { 'cache-control': 'no-store', ...headers });
}

function basicCredentials(req: IncomingMessage): { id: string; secret: string } | undefined {
  const header = req.headers.authorization;
  if (!header || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return undefined;
  try {
    // RFC 6749 §2.3.1: both parts are form-urlencoded before base64.
    return {
      id: decodeURIComponent(decoded.slice(0, i).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(i + 1).replace(/\+/g, ' ')),
    };
  } catch {
    return undefined;
  }
}

export async function createAuthSurface(ctx: AppContext): Promise<Surface> {
  const records = ctx.stores.records;
  const keys = await loadAuthKeys(ctx.config.auth, records, ctx.keyEncryption);
  const revocations = createRevocationStore(records, ctx.now);
  const accounts = createAccounts(ctx.clients.users);
  const server = createAuthServer({
    config: ctx.config,
    records,
    kek: ctx.keyEncryption,
    keys,
    accounts,
    revocations,
    logger: ctx.logger.child({ component: 'oauth' }),
    now: ctx.now,
    isGatewayResource: createPlatformResourceCheck(ctx),
  });
  const verifier = createTokenVerifier({ issuer: ctx.config.publicUrls.auth, jwks: keys.publicJwks, revocations, now: ctx.now });
  const callback = server.provider.callback();
  const toProvider = async (c: RouteContext) => {
    await callback(c.req, c.res);
  };
  const router = createAuthRouter(server, verifier, revocations, toProvider);
  registerInteractions(router, { app: ctx, server, accounts, cookieKey: keys.cookieKeys[0] });
  return {
    name: 'auth',
    router,
    notFound: toProvider,
    methodNotAllowed: toProvider,
    onError: (c, err) => sendErrorPage(ctx, c, err),
  };
}

/** Our own routes in front of oidc-provider's. */
function createAuthRouter(
  server: AuthServer,
  verifier: TokenVerifier,
  revocations: RevocationStore,
  toProvider: (c: RouteContext) => Promise<void>,
): Router {
  const router = new Router();
  router.get('/health', ({ res }) => sendJson(res, 200, { status: 'ok', service: 'auth' }));
  // RFC 8414 name of the same document oidc-provider serves as OpenID discovery.
  router.get('/.well-known/oauth-authorization-server', async (c) => {
    c.req.url = '/.well-known/openid-configuration';
    await toProvider(c);
  });
  // OpenID Connect honours offline_access only with prompt=consent. Consent is asked on every
  // authorization here anyway, so a request for offline_access that names no prompt says so,
  // for the OAuth clients (most MCP clients) that do not know the OIDC rule.
  router.get('/authorize', async (c) => {
    const scope = c.query.get('scope') ?? '';
    if (scope.split(' ').includes('offline_access') && !c.query.has('prompt')) {
      c.query.set('prompt', 'consent');
      c.req.url = `/authorize?${c.query.toString()}`;
    }
    await toProvider(c);
  });
  router.post('/revoke', (c) => jwtAwareTokenEndpoint(c, 'revocation', server, verifier, revocations, toProvider));
  router.post('/introspect', (c) => jwtAwareTokenEndpoint(c, 'introspection', server, verifier, revocations, toProvider));
  return router;
}

/** Errors of our own routes, as a page: the caller's (a form, a body too large) or ours. */
function sendErrorPage(ctx: AppContext, c: RouteContext, err: unknown): void {
  if (err instanceof FormError || err instanceof BodyTooLargeError) {
    const status = err instanceof BodyTooLargeError ? 413 : 400;
    c.res.writeHead(status, PAGE_HEADERS);
    c.res.end(messagePage('Request refused', err.message, 'error'));
    return;
  }
  const e = toHttpError(err);
  if (e.internal) ctx.logger.error({ requestId: c.requestId, err }, 'request failed');
  const html = messagePage('Something went wrong', e.internal ? 'Try again in a moment.' : e.message, 'error');
  c.res.writeHead(e.status, PAGE_HEADERS);
  c.res.end(html);
}

/**
 * oidc-provider refuses to revoke or introspect structured (JWT) tokens, since it does not store
 * them. Our access tokens are JWTs, so those two endpoints handle them here: the client is
 * authenticated like at the token endpoint, then the jti is recorded as revoked, or the claims
 * are returned. Opaque tokens (refresh tokens) go on to oidc-provider.
 */
async function jwtAwareTokenEndpoint(
  c: RouteContext,
  kind: 'revocation' | 'introspection',
  server: AuthServer,
  verifier: TokenVerifier,
  revocations: RevocationStore,
  next: (c: RouteContext) => Promise<void>,
): Promise<void> {
  const type = (c.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return next(c);
  let body: Buffer;
  try {
    body = await readBody(c.req, TOKEN_FORM_LIMIT);
  } catch (err) {
    if (err instanceof BodyTooLargeError) return oauthError(c, 413, 'invalid_request', 'request body too large');
    throw err;
  }
  const form = new URLSearchParams(body.toString('utf8'));
  const token = form.get('token');
  if (!token || !isJwtShaped(token)) {
    // oidc-provider reads an already consumed body from req.body.
    (c.req as IncomingMessage & { body?: Buffer }).body = body;
    return next(c);
  }
  if (form.getAll('token').length > 1) return oauthError(c, 400, 'invalid_request', "'token' parameter must not be provided twice");
  const client = await authenticatedClient(c, form, server);
  if (!client) return;
  let claims: AccessTokenClaims | undefined;
  try {
    claims = await verifier.verifyAnyAudience(token);
  } catch {
    claims = undefined;
  }
  const own = claims !== undefined && claims.clientId === client.clientId;
  if (kind === 'revocation') {
    if (claims && own) await revocations.revokeToken(claims.tokenId, claims.expiresAt * 1000 + 60_000);
    c.res.writeHead(200, { 'cache-control': 'no-store', 'content-length': '0' });
    c.res.end();
    return;
  }
  // A public client may introspect only its own tokens; a confidential one, any.
  if (!claims || (!own && client.clientAuthMethod === 'none')) {
    return sendJson(c.res, 200, { active: false }, { 'cache-control': 'no-store' });
  }
  sendJson(c.res, 200, introspection(server, claims), { 'cache-control': 'no-store' });
}

/** The client, authenticated as at the token endpoint; otherwise a 401 has been answered. */
async function authenticatedClient(c: RouteContext, form: URLSearchParams, server: AuthServer) {
  const basic = basicCredentials(c.req);
  const clientId = basic?.id ?? form.get('client_id') ?? '';
  const client = clientId ? await server.provider.Client.find(clientId).catch(() => undefined) : undefined;
  const unauthenticated = () =>
    oauthError(c, 401, 'invalid_client', 'client authentication failed', basic ? { 'www-authenticate': 'Basic realm="token"' } : {});
  if (!client) return unauthenticated();
  if (client.clientAuthMethod !== 'none') {
    const presented = basic?.secret ?? form.get('client_secret') ?? '';
    const expected = client.clientSecret ?? '';
    const a = Buffer.from(presented);
    const b = Buffer.from(expected);
    if (!expected || a.length !== b.length || !timingSafeEqual(a, b)) return unauthenticated();
  }
  return client;
}

/** An active token's RFC 7662 answer. */
function introspection(server: AuthServer, claims: AccessTokenClaims) {
  return {
    active: true,
    iss: server.provider.issuer,
    sub: claims.subject,
    client_id: claims.clientId,
    aud: claims.audience,
    scope: claims.scopes.join(' ') || undefined,
    exp: claims.expiresAt,
    iat: claims.issuedAt,
    jti: claims.tokenId,
    token_type: 'Bearer',
    org: claims.organizationId,
  };
}
