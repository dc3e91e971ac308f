// The streaming proxy: `GET|POST|PUT|DELETE /{server_name}/{path}` to the server's backend.
// Bodies stream both ways without buffering: the request is handed to undici as a stream, and
// each response chunk (an SSE event, say) is written to the client as it arrives, with
// backpressure both ways. This is the hot path: no per-request URL parsing, no stream.pipeline,
// no logging beyond the listener's one line.
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { secretsEqual } from '../../services/common/rpc/interceptors.ts';
import type { Logger } from '../../services/common/log.ts';
import type { RouteContext } from '../http/router.ts';
import { RequestValidationError, sendValidationError } from '../http/validation.ts';
import type { GatewayConfig } from './config.ts';
import { applyCorsToBackendHeaders } from './cors.ts';
import { sendGatewayError, serverNameError } from './errors.ts';
import { buildChallenge, type GatewayAuthMode, type GatewayServer, type ServerRegistry } from './registry.ts';

export interface ProxyOptions {
  registry: ServerRegistry;
  config: GatewayConfig;
  /** `{base_url}`: its scheme and host are what X-Forwarded-Proto and -Host announce. */
  publicUrl: string;
  logger: Logger;
}

/** Request headers never forwarded: hop-by-hop (RFC 9110 §7.6.1), ours, and the ones we set. */
const DROP_REQUEST = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'host', 'expect', 'http2-settings',
  'x-gateway-key', 'x-gateway-authenticated',
  'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-prefix', 'x-forwarded-port', 'forwarded',
]);

/** Response headers never passed back: hop-by-hop ones. */
const DROP_RESPONSE = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade',
]);

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
  const { registry, config, logger } = options;
  const keys = config.keys;
  const publicUrl = new URL(options.publicUrl);
  const forwardedProto = publicUrl.protocol.slice(0, -1);
  const forwardedHost = publicUrl.host;
  const maxBody = config.maxBodyBytes;

  /** Checks X-Gateway-Key in constant time against every configured key. */
  function keyIsValid(given: string): boolean {
    let ok = false;
    for (const key of keys) ok = secretsEqual(given, key) || ok;
    return ok;
  }

  function handle(ctx: RouteContext): void {
    const { req, res } = ctx;
    const name = ctx.params.server;
    const bad = serverNameError(name);
    if (bad) return sendValidationError(res, bad);
    const server = registry.get(name);
    if (!server) return unknownServer(res, name);

    // The raw remainder after `/{server}`: '' for `/{server}`, '/' for `/{server}/`.
    const path = ctx.path;
    const slash = path.indexOf('/', 1);
    const rest = slash === -1 ? '' : path.slice(slash);
    if (isUnsafePath(rest)) {
      return sendValidationError(res, new RequestValidationError([{
        type: 'value_error',
        loc: ['path', 'path'],
        msg: "Value error, the path must stay under the server's base path",
        input: rest,
        ctx: { error: "the path must stay under the server's base path" },
      }]));
    }

    const headers = req.headers;
    let auth: GatewayAuthMode = 'none';
    const key = headers['x-gateway-key'];
    if (key !== undefined) {
      if (typeof key !== 'string' || keys.length === 0 || !keyIsValid(key)) {
        return sendGatewayError(res, 401, 'invalid_gateway_key', 'The X-Gateway-Key is not valid.',
          server.usesOAuth ? { 'www-authenticate': server.challenge } : {});
      }
      auth = 'gateway-key';
    } else if (headers.authorization !== undefined) {
      auth = 'bearer';
    } else if (server.usesOAuth) {
      // Mcp-Session-Id is never authentication: without credentials, every request is challenged.
      return sendGatewayError(res, 401, 'unauthorized', `Server ${name} requires an access token.`, {
        'www-authenticate': server.challenge,
      });
    }

    const q = req.url!.indexOf('?');
    const search = q === -1 ? '' : req.url!.slice(q);

    if (server.local) {
      if (auth === 'gateway-key') {
        delete headers['x-gateway-key'];
      }
      delete headers['x-gateway-authenticated'];
      void Promise.resolve(
        server.local({ req, res, server, path: rest, search, requestId: ctx.requestId, auth, maxBodyBytes: maxBody }),
      ).catch((err) => {
        logger.error({ requestId: ctx.requestId, server: name, err }, 'local MCP handler failed');
        if (!res.headersSent) sendGatewayError(res, 500, 'internal_error', 'The server failed.');
        else res.destroy();
      });
      return;
    }
    if (!server.backend) {
      return sendGatewayError(res, 503, 'backend_unavailable', `Server ${name} is not available on this gateway.`);
    }

    const declared = headers['content-length'];
    let hasBody = false;
    if (declared !== undefined) {
      const n = Number(declared);
      if (n > maxBody) return sendGatewayError(res, 413, 'payload_too_large', `The request body exceeds ${maxBody} bytes.`);
      hasBody = n > 0;
    } else if (headers['transfer-encoding'] !== undefined) {
      hasBody = true;
    }

    forward(ctx, server, rest + search, auth, hasBody && declared === undefined, hasBody);
  }

  function forward(
    ctx: RouteContext,
    server: GatewayServer,
    pathAndQuery: string,
    auth: GatewayAuthMode,
    countBody: boolean,
    hasBody: boolean,
  ): void {
    const { req, res } = ctx;
    const backend = server.backend!;
    const src = req.headers;
    const out: Record<string, string | string[] | undefined> = {};
    for (const name in src) {
      if (!DROP_REQUEST.has(name)) out[name] = src[name];
    }
    const connectionTokens = src.connection;
    if (connectionTokens && connectionTokens !== 'keep-alive' && connectionTokens !== 'close') {
      for (const t of connectionTokens.split(',')) delete out[t.trim().toLowerCase()];
    }
    const forwardedFor = src['x-forwarded-for'];
    const remote = req.socket.remoteAddress ?? '';
    out['x-forwarded-for'] = config.trustForwardedFor && forwardedFor ? `${forwardedFor}, ${remote}` : remote;
    out['x-forwarded-proto'] = forwardedProto;
    out['x-forwarded-host'] = forwardedHost;
    out['x-forwarded-prefix'] = server.prefix;
    out['x-request-id'] = ctx.requestId;
    if (auth === 'gateway-key') out['x-gateway-authenticated'] = 'key';

    const handler = new ProxyHandler(req, res, server, logger, ctx.requestId, req.headers.origin !== undefined);
    // A body without Content-Length is counted as it streams; with one, Node's parser already
    // holds it to the declared length, which was checked against the limit.
    const body = !hasBody ? null : countBody ? Readable.from(limitBody(req, maxBody, handler), { objectMode: false }) : req;
    res.once('close', () => {
      if (!res.writableFinished) handler.abort(new Error('client disconnected'));
    });
    let target = backend.basePath + pathAndQuery;
    if (target.charCodeAt(0) !== 47 /* '/' */) target = `/${target}`;
    backend.pool.dispatch(
      {
        path: target,
        method: req.method!,
        headers: out,
        body,
      },
      handler,
    );
  }

  function tryDirect(ctx: RouteContext): boolean {
    const path = ctx.path;
    if (!PROXY_METHODS.has(ctx.req.method!)) return false;
    const slash = path.indexOf('/', 1);
    const name = slash === -1 ? path.slice(1) : path.slice(1, slash);
    if (name.indexOf('%') !== -1 || registry.get(name) === undefined) return false;
    if (slash !== -1) {
      const next = path.indexOf('/', slash + 1);
      const second = next === -1 ? path.slice(slash + 1) : path.slice(slash + 1, next);
      if (second === 'oauth' || second === '.well-known') return false;
    }
    ctx.params = { server: name };
    handle(ctx);
    return true;
  }

  return { handle, tryDirect };
}

/** Streams `req`, failing the request once more than `limit` bytes went through. */
async function* limitBody(req: IncomingMessage, limit: number, handler: ProxyHandler): AsyncGenerator<Buffer> {
  let seen = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    seen += chunk.length;
    if (seen > limit) {
      handler.tooLarge = true;
      throw new Error('request body too large');
    }
    yield chunk;
  }
}

export function unknownServer(res: ServerResponse, name: string): void {
  sendGatewayError(res, 404, 'unknown_server', `No MCP server named ${name} is registered on this gateway.`);
}

/** Relays one backend response to the client, chunk by chunk. */
class ProxyHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private abortReason: Error | undefined;
  tooLarge = false;
  private readonly req: IncomingMessage;
  private readonly res: ServerResponse;
  private readonly server: GatewayServer;
  private readonly logger: Logger;
  private readonly requestId: string;
  private readonly cors: boolean;
  /** Bytes of a Content-Length body still to come (-1: unknown), and its last chunk, held back. */
  private remaining = -1;
  private ended = false;

  constructor(req: IncomingMessage, res: ServerResponse, server: GatewayServer, logger: Logger, requestId: string, cors: boolean) {
    this.req = req;
    this.res = res;
    this.server = server;
    this.logger = logger;
    this.requestId = requestId;
    this.cors = cors;
  }

  abort(reason: Error): void {
    if (this.abortReason) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason) controller.abort(this.abortReason);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    if (statusCode < 200) return; // 1xx informational: Node answers 100-continue itself.
    const res = this.res;
    if (res.destroyed) {
      controller.abort(new Error('client disconnected'));
      return;
    }
    const out: OutgoingHttpHeaders = {};
    for (const name in headers) {
      if (DROP_RESPONSE.has(name)) continue;
      out[name] = headers[name];
    }
    if (headers.connection) {
      for (const token of String(headers.connection).split(',')) delete out[token.trim().toLowerCase()];
    }
    if ((statusCode === 401 || statusCode === 403) && this.server.usesOAuth) {
      out['www-authenticate'] = rewriteChallenge(headers['www-authenticate'], this.server, statusCode);
    }
    if (this.cors) applyCorsToBackendHeaders(out);
    out['x-accel-buffering'] = 'no';
    res.writeHead(statusCode, statusMessage || undefined, out);
    const length = headers['content-length'];
    if (typeof length === 'string') this.remaining = Number(length);
    const type = headers['content-type'];
    // Headers go out now for streams, so that a client sees the stream open before any event.
    if (typeof type === 'string' && type.startsWith('text/event-stream')) res.flushHeaders();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.remaining >= 0) {
      this.remaining -= chunk.length;
      // The last chunk of a sized body goes out with end(): one write, and less work in Node.
      if (this.remaining === 0) {
        this.res.end(chunk);
        this.ended = true;
        return;
      }
    }
    if (!this.res.write(chunk)) {
      controller.pause();
      this.res.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    if (!this.ended) this.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    const res = this.res;
    if (this.tooLarge) {
      if (!res.headersSent) {
        sendGatewayError(res, 413, 'payload_too_large', 'The request body is too large.', { connection: 'close' });
      } else {
        res.destroy();
      }
      this.req.resume();
      return;
    }
    if (this.abortReason) {
      // The client went away: nothing to answer.
      if (!res.destroyed) res.destroy();
      return;
    }
    const code = (err as { code?: string }).code ?? '';
    if (res.headersSent) {
      this.logger.warn({ requestId: this.requestId, server: this.server.name, code }, 'backend stream failed');
      res.destroy();
      return;
    }
    const timeout = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
    this.logger.warn({ requestId: this.requestId, server: this.server.name, code }, 'backend request failed');
    if (timeout) {
      sendGatewayError(res, 504, 'gateway_timeout', `Server ${this.server.name} did not answer in time.`);
    } else {
      sendGatewayError(res, 502, 'bad_gateway', `Server ${this.server.name} is unreachable.`);
    }
  }
}

/**
 * A backend's challenge names the backend's own metadata; clients must see the gateway's.
 * The error, its description and the scopes of the backend's challenge are kept.
 */
export function rewriteChallenge(original: string | string[] | undefined, server: GatewayServer, status: number): string {
  const header = Array.isArray(original) ? original.join(', ') : original ?? '';
  const extra: Record<string, string> = {};
  let scope: string | undefined;
  const param = /([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;
  for (let m = param.exec(header); m; m = param.exec(header)) {
    const key = m[1].toLowerCase();
    const value = (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1');
    if (key === 'error' || key === 'error_description') extra[key] = value;
    else if (key === 'scope') scope = value;
  }
  if (status === 403 && !extra.error) extra.error = 'insufficient_scope';
  return buildChallenge(server.resourceMetadataUrl, scope ? scope.split(' ').filter(Boolean) : server.config.scopes, extra);
}
