// The streaming proxy: `GET|POST|PUT|DELETE /{server_name}/{path}` to the server's backend.
// Bodies stream both ways without buffering: the request body goes to the backend as Node's
// parser hands it over, and each response chunk (an SSE event, say) is written to the client as
// it arrives, with backpressure both ways (backend-client.ts). This is the hot path: no
// per-request URL parsing, no stream.pipeline, no logging beyond the listener's one line.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../services/common/log.ts';
import type { RouteContext } from '../http/router.ts';
import { RequestValidationError, sendValidationError } from '../http/validation.ts';
import type { GatewayConfig } from './config.ts';
import type { GatewayKeyring } from './keyring.ts';
import type { OrganizationAccess } from './organization-access.ts';
import { Readable } from 'node:stream';
import { BodyTooLargeError, sendJson } from '../http/respond.ts';
import { inspectRequest } from './tool-filter.ts';
import { ToolPolicyHandler, type ToolPolicyRequest } from './tool-policy-handler.ts';
import { withoutPlatformCookies } from './platform-cookies.ts';
import { ProxyHandler } from './proxy-handler.ts';
import { sendGatewayError, serverNameError } from './errors.ts';
import type { GatewayAuthMode, GatewayServer, ServerRegistry } from './registry.ts';

export interface ProxyOptions {
  registry: ServerRegistry;
  /** Who may use a server an organization owns. */
  organizations: OrganizationAccess;
  config: GatewayConfig;
  /** The operator keys accepted in X-Gateway-Key. */
  keyring: GatewayKeyring;
  /** `{base_url}`: its scheme and host are what X-Forwarded-Proto and -Host announce. */
  publicUrl: string;
  logger: Logger;
}

/**
 * Request headers never forwarded: hop-by-hop (RFC 9110 §7.6.1), ours, the ones we set (a
 * client's X-Request-Id is replaced by the request's id, which is the client's when it is sane),
 * and the framing the backend client writes itself (Host, Content-Length, Transfer-Encoding).
 * Names with an underscore are dropped too (isUnderscoreName).
 */
const DROP_REQUEST = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'host',
  'expect',
  'http2-settings',
  'x-gateway-key',
  'x-gateway-authenticated',
  'x-gateway-organization',
  'x-mindgate-connection-test',
  'x-request-id',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-prefix',
  'x-forwarded-port',
  'forwarded',
]);

/**
 * CGI/WSGI-style backends map `X_Forwarded_For` and `X-Forwarded-For` to the same variable
 * (HTTP_X_FORWARDED_FOR), so an underscore spelling would pass for a header the gateway sets and
 * backends are told to trust. nginx drops such names by default (underscores_in_headers off).
 */
function isUnderscoreName(name: string): boolean {
  return name.indexOf('_') !== -1;
}

const FORWARD_LIMIT_CHECK = /(^|\/)\.\.?(\/|$)/;

/**
 * True when the raw (percent-encoded) path could leave the backend's base path once some layer
 * decodes it: `.`/`..` segments in any decoding round (`%2e%2e`, `%252e%252e`), backslashes,
 * NUL, malformed escapes, or more encoding layers than any client sends.
 */
export function isUnsafePath(rest: string): boolean {
  if (rest.indexOf('\\') !== -1) return true;
  if (rest.indexOf('%') === -1) return rest.indexOf('.') !== -1 && FORWARD_LIMIT_CHECK.test(rest);
  let current = rest;
  for (let round = 0; round < 4; round++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return true;
    }
    if (next.indexOf('\\') !== -1 || next.indexOf('\0') !== -1 || FORWARD_LIMIT_CHECK.test(next)) return true;
    if (next === current || next.indexOf('%') === -1) return false;
    current = next;
  }
  return true;
}

export interface Proxy {
  handle(ctx: RouteContext): void;
  /**
   * Takes a request for a registered server's backend without going through the router (whose
   * linear match over every gateway route is measurable at proxy rates); false leaves the
   * request to the router: gateway paths (`oauth`, `.well-known`), encoded or unknown names.
   */
  tryDirect(ctx: RouteContext): boolean;
}

const PROXY_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE']);

export function createProxy(options: ProxyOptions): Proxy {
  const proxy = new StreamingProxy(options);
  return { handle: (ctx) => proxy.handle(ctx), tryDirect: (ctx) => proxy.tryDirect(ctx) };
}

/** The proxy's settings, and its steps from a request to the backend exchange. */
class StreamingProxy {
  private readonly registry: ServerRegistry;
  private readonly organizations: OrganizationAccess;
  private readonly config: GatewayConfig;
  private readonly keyring: GatewayKeyring;
  private readonly logger: Logger;
  private readonly forwardedProto: string;
  private readonly forwardedHost: string;
  private readonly maxBody: number;

  constructor(options: ProxyOptions) {
    this.registry = options.registry;
    this.organizations = options.organizations;
    this.config = options.config;
    this.keyring = options.keyring;
    this.logger = options.logger;
    const publicUrl = new URL(options.publicUrl);
    this.forwardedProto = publicUrl.protocol.slice(0, -1);
    this.forwardedHost = publicUrl.host;
    this.maxBody = options.config.maxBodyBytes;
  }

  handle(ctx: RouteContext): void {
    const res = ctx.res;
    const name = ctx.params.server;
    const bad = serverNameError(name);
    if (bad) return sendValidationError(res, bad);
    const server = this.registry.get(name);
    if (!server) return unknownServer(res, name);
    if (!server.enabled) return sendGatewayError(res, 503, 'server_disabled', `Server ${name} is disabled by its owner.`);

    // The raw remainder after `/{server}`: '' for `/{server}`, '/' for `/{server}/`.
    const path = ctx.path;
    const slash = path.indexOf('/', 1);
    const rest = slash === -1 ? '' : path.slice(slash);
    if (refusedPath(res, rest)) return;
    // A server an organization owns admits only that organization, unless an operator key is given.
    if (server.owner !== undefined && ctx.req.headers['x-gateway-key'] === undefined) return this.admitToOwned(ctx, server, rest);
    const auth = this.authenticate(ctx, server);
    if (auth === undefined) return;
    this.dispatch(ctx, server, rest, auth, undefined);
  }

  /** How the request is authenticated; undefined when it was answered (401) instead. */
  private authenticate(ctx: RouteContext, server: GatewayServer): GatewayAuthMode | undefined {
    const { req, res } = ctx;
    const headers = req.headers;
    const key = headers['x-gateway-key'];
    if (key !== undefined) {
      if (typeof key !== 'string' || !this.keyring.any || !this.keyring.isValid(key)) {
        sendGatewayError(
          res,
          401,
          'invalid_gateway_key',
          'The X-Gateway-Key is not valid.',
          server.usesOAuth ? { 'www-authenticate': server.challenge } : {},
        );
        return undefined;
      }
      return 'gateway-key';
    }
    if (headers.authorization !== undefined) return 'bearer';
    // The platform's own servers (the Brain) accept its API keys wherever they accept tokens.
    if (server.local && headers['x-api-key'] !== undefined) return 'api-key';
    if (server.usesOAuth) {
      // Mcp-Session-Id is never authentication: without credentials, every request is challenged.
      sendGatewayError(res, 401, 'unauthorized', `Server ${server.name} requires an access token.`, {
        'www-authenticate': server.challenge,
      });
      return undefined;
    }
    return 'none';
  }

  /** A server an organization owns: only that organization's credentials (organization-access.ts). */
  private admitToOwned(ctx: RouteContext, server: GatewayServer, rest: string): void {
    const { req, res } = ctx;
    this.organizations
      .check(req.headers, server)
      .then((result) => {
        if (res.destroyed) return;
        if (!result.ok) return sendGatewayError(res, result.status, result.error, result.detail, result.headers);
        // The platform's key was for the gateway; the backend gets the organization instead.
        if (result.via === 'api-key') delete req.headers['x-api-key'];
        this.dispatch(ctx, server, rest, req.headers.authorization !== undefined ? 'bearer' : 'none', result.organizationId);
      })
      .catch((err: unknown) => {
        this.logger.warn({ requestId: ctx.requestId, server: server.name, err: (err as Error).message }, 'organization check failed');
        if (!res.headersSent) sendGatewayError(res, 503, 'unavailable', 'The platform could not check the credentials; retry shortly.');
      });
  }

  /** An admitted request: to the local handler, or to the backend (through the tool policy, if any). */
  private dispatch(ctx: RouteContext, server: GatewayServer, rest: string, auth: GatewayAuthMode, organization: string | undefined): void {
    const { req, res } = ctx;
    const q = req.url!.indexOf('?');
    const search = q === -1 ? '' : req.url!.slice(q);
    if (server.local) return this.serveLocal(ctx, server, rest, search, auth);
    if (!server.backend) {
      return sendGatewayError(res, 503, 'backend_unavailable', `Server ${server.name} is not available on this gateway.`);
    }
    const bodyLength = this.bodyLength(ctx);
    if (bodyLength === undefined) return;
    const mcp = server.toolPolicy !== undefined && rest === server.mcpEndpoint;
    if (mcp && req.method === 'POST') return this.forwardWithToolPolicy(ctx, server, rest + search, auth, organization);
    // The MCP endpoint's GET stream may replay a tools/list result: its answer is read too.
    const policy = mcp ? { denied: [], batch: false, readsAnswer: true } : undefined;
    this.forward(ctx, server, rest + search, auth, bodyLength, organization, policy);
  }

  /** A server the platform serves in this process (the Brain): no backend exchange. */
  private serveLocal(ctx: RouteContext, server: GatewayServer, rest: string, search: string, auth: GatewayAuthMode): void {
    const { req, res } = ctx;
    const headers = req.headers;
    if (auth === 'gateway-key') {
      delete headers['x-gateway-key'];
    }
    delete headers['x-gateway-authenticated'];
    void Promise.resolve(
      server.local!({ req, res, server, path: rest, search, requestId: ctx.requestId, auth, maxBodyBytes: this.maxBody }),
    ).catch((err) => {
      this.logger.error({ requestId: ctx.requestId, server: server.name, err }, 'local MCP handler failed');
      if (!res.headersSent) sendGatewayError(res, 500, 'internal_error', 'The server failed.');
      else res.destroy();
    });
  }

  /**
   * The request body's length: 0 for none, -1 when unknown (chunked); undefined when it was
   * answered (413) instead. Node's parser accepts a Content-Length only alone and well-formed,
   * and holds the body to it; a body without one is chunked, and counted as it streams.
   */
  private bodyLength(ctx: RouteContext): number | undefined {
    const headers = ctx.req.headers;
    const declared = headers['content-length'];
    if (declared !== undefined) {
      const length = Number(declared);
      if (length <= this.maxBody) return length;
      sendGatewayError(ctx.res, 413, 'payload_too_large', `The request body exceeds ${this.maxBody} bytes.`);
      return undefined;
    }
    return headers['transfer-encoding'] !== undefined ? -1 : 0;
  }

  /**
   * A POST to the MCP endpoint of a server with a tool policy: the body is read and checked first;
   * calls of tools the policy does not allow are answered here and never forwarded.
   */
  private forwardWithToolPolicy(
    ctx: RouteContext,
    server: GatewayServer,
    pathAndQuery: string,
    auth: GatewayAuthMode,
    organization?: string,
  ): void {
    const { req, res } = ctx;
    collectBody(req, this.maxBody, (err, raw) => {
      if (res.destroyed) return;
      if (err) return sendGatewayError(res, 413, 'payload_too_large', err.message, { connection: 'close' });
      const verdict = inspectRequest(raw!, server.toolPolicy!, server.name);
      if (verdict.answerAlone) return sendJson(res, 200, verdict.batch ? verdict.denied : verdict.denied[0]);
      this.forward(ctx, server, pathAndQuery, auth, raw!.length, organization, {
        body: verdict.body ?? raw!,
        denied: verdict.denied,
        batch: verdict.batch,
        readsAnswer: verdict.readsAnswer,
      });
    });
  }

  private forward(
    ctx: RouteContext,
    server: GatewayServer,
    pathAndQuery: string,
    auth: GatewayAuthMode,
    bodyLength: number,
    organization: string | undefined,
    policy?: ToolPolicyRequest,
  ): void {
    const { req, res } = ctx;
    const backend = server.backend!;
    let target = backend.basePath + pathAndQuery;
    if (target.charCodeAt(0) !== 47 /* '/' */) target = `/${target}`;
    const cors = req.headers.origin !== undefined;
    const handler = policy?.readsAnswer
      ? new ToolPolicyHandler(req, res, server, this.logger, ctx.requestId, cors, { ...policy, maxBytes: this.maxBody })
      : new ProxyHandler(req, res, server, this.logger, ctx.requestId, cors);
    handler.exchange = backend.client.request(
      {
        method: req.method!,
        path: target,
        headerLines: this.headerLines(ctx, server, auth, organization, policy?.readsAnswer === true),
        body: policy?.body ? Readable.from([policy.body]) : bodyLength === 0 ? null : req,
        bodyLength: policy?.body ? policy.body.length : bodyLength,
        maxBodyBytes: this.maxBody,
      },
      handler,
    );
    // The client went away, or its body never fully came (the listener answered 408): the
    // backend must not be left waiting for the rest until its response deadline.
    res.once('close', () => {
      if (!res.writableFinished || !req.complete) handler.abort();
    });
  }

  /**
   * The header lines the backend gets: the client's end-to-end ones, then the gateway's own.
   * An answer the tool policy reads must come unencoded (`readsAnswer`: no Accept-Encoding).
   */
  private headerLines(
    ctx: RouteContext,
    server: GatewayServer,
    auth: GatewayAuthMode,
    organization: string | undefined,
    readsAnswer: boolean,
  ): string {
    const req = ctx.req;
    const src = req.headers;
    const connectionTokens = src.connection;
    const named =
      connectionTokens && connectionTokens !== 'keep-alive' && connectionTokens !== 'close'
        ? new Set(
            connectionTokens
              .toLowerCase()
              .split(',')
              .map((t) => t.trim()),
          )
        : undefined;
    // Node's parser has validated every name and value: they go out as they came in.
    let lines = '';
    for (const name in src) {
      if (DROP_REQUEST.has(name) || named?.has(name) || isUnderscoreName(name)) continue;
      if (readsAnswer && name === 'accept-encoding') continue;
      let value = src[name]!;
      // The gateway's and the other listeners' cookies are for them, never for a backend.
      if (name === 'cookie') {
        const kept = withoutPlatformCookies(value as string);
        if (kept === undefined) continue;
        value = kept;
      }
      if (typeof value === 'string') lines += `${name}: ${value}\r\n`;
      else for (const v of value) lines += `${name}: ${v}\r\n`;
    }
    const forwardedFor = src['x-forwarded-for'];
    const remote = req.socket.remoteAddress ?? '';
    lines += `x-forwarded-for: ${this.config.trustForwardedFor && forwardedFor ? `${forwardedFor}, ${remote}` : remote}\r\n`;
    lines += `x-forwarded-proto: ${this.forwardedProto}\r\nx-forwarded-host: ${this.forwardedHost}\r\n`;
    lines += `x-forwarded-prefix: ${server.prefix}\r\nx-request-id: ${ctx.requestId}\r\n`;
    if (auth === 'gateway-key') lines += 'x-gateway-authenticated: key\r\n';
    if (organization !== undefined) lines += `x-gateway-organization: ${organization}\r\n`;
    return lines;
  }

  tryDirect(ctx: RouteContext): boolean {
    const path = ctx.path;
    if (!PROXY_METHODS.has(ctx.req.method!)) return false;
    const slash = path.indexOf('/', 1);
    const name = slash === -1 ? path.slice(1) : path.slice(1, slash);
    if (name.indexOf('%') !== -1 || this.registry.get(name) === undefined) return false;
    if (slash !== -1) {
      const next = path.indexOf('/', slash + 1);
      const second = next === -1 ? path.slice(slash + 1) : path.slice(slash + 1, next);
      if (second === 'oauth' || second === '.well-known') return false;
    }
    ctx.params = { server: name };
    this.handle(ctx);
    return true;
  }
}

/**
 * Answers a path no backend may be asked for, and says so: `/{server}/oauth` is the facade's
 * (the binding's second half is scoped to it, and must never travel with a request a backend
 * receives: oauth/binding.ts), and a path that could leave the server's base path is refused.
 */
function refusedPath(res: ServerResponse, rest: string): boolean {
  if (rest.startsWith('/oauth') && (rest.length === 6 || rest.charCodeAt(6) === 47) /* '/' */) {
    sendGatewayError(res, 404, 'not_found', 'Not Found');
    return true;
  }
  if (!isUnsafePath(rest)) return false;
  sendValidationError(
    res,
    new RequestValidationError([
      {
        type: 'value_error',
        loc: ['path', 'path'],
        msg: "Value error, the path must stay under the server's base path",
        input: rest,
        ctx: { error: "the path must stay under the server's base path" },
      },
    ]),
  );
  return true;
}
/** Reads a request body of at most `limit` bytes (a small JSON-RPC message usually comes in one chunk). */
function collectBody(req: IncomingMessage, limit: number, done: (err: BodyTooLargeError | undefined, body?: Buffer) => void): void {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return done(new BodyTooLargeError(limit));
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limit) return void chunks.push(chunk);
    req.off('data', onData).off('end', onEnd).resume();
    done(new BodyTooLargeError(limit));
  };
  const onEnd = () => done(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
  req.on('data', onData).on('end', onEnd);
}

export function unknownServer(res: ServerResponse, name: string): void {
  sendGatewayError(res, 404, 'unknown_server', `No MCP server named ${name} is registered on this gateway.`);
}
