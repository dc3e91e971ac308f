// One public listener: request ids, a log line per request, deadlines for request bodies (so
// that no client holds a connection forever), routing, and a last-resort error handler so that
// no failure escapes as a dropped connection or a stack trace.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pickRequestId } from '../../services/common/rpc/interceptors.ts';
import { listen, type ListenTarget } from '../../services/common/listen.ts';
import type { Logger } from '../../services/common/log.ts';
import type { HttpMetrics } from '../../services/common/metrics/http.ts';
import { createBodyDeadlines, RequestTimeoutError } from './body-deadlines.ts';
import type { ProbeHandler } from './probes.ts';
import { requestScope } from './request-context.ts';
import type { RouteContext, Router } from './router.ts';

export interface Surface {
  name: string;
  router: Router;
  /** Runs before routing; returns true when it answered the request (CORS preflight, say). */
  before?: (ctx: RouteContext) => boolean | Promise<boolean>;
  notFound: (ctx: RouteContext) => void | Promise<void>;
  methodNotAllowed: (ctx: RouteContext, allowed: string[]) => void | Promise<void>;
  /** Answers a request whose handler threw, in the shape this surface's callers expect. */
  onError: (ctx: RouteContext, err: unknown) => void | Promise<void>;
  /** Releases what the surface holds (client pools) once the listener has drained. */
  close?: () => void | Promise<void>;
}

export interface Listener {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  /** Stops accepting, waits up to `graceMs` for in-flight requests, then closes the rest. */
  close(graceMs?: number): Promise<void>;
}

export interface ListenerOptions extends ListenTarget {
  logger: Logger;
  /** Log successful requests at this level ('debug' keeps the hot path quiet). */
  accessLogLevel?: 'info' | 'debug';
  /** A request body with no progress this long while the server reads it gets a 408 (body-deadlines.ts). */
  bodyTimeoutMs?: number;
  /** A request whose body has not fully arrived this long after it started gets a 408. */
  requestTimeoutMs?: number;
  /** A request head that has not fully arrived this long after it started gets a 408. */
  headersTimeoutMs?: number;
  /** Answers `/livez` and `/readyz` before the surface sees the request (probes.ts). */
  probes?: ProbeHandler;
  /** Where each request's duration and status are counted. */
  metrics?: HttpMetrics;
}

const HEADERS_TIMEOUT_MS = 20_000;

/** Statuses for the parser's errors that are not plain malformed requests (as Node's default). */
const CLIENT_ERROR_STATUS: Record<string, string> = {
  // A head that did not arrive within headersTimeout.
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
};
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

export async function startListener(surface: Surface, options: ListenerOptions): Promise<Listener> {
  const logger = options.logger.child({ listener: surface.name });
  // Access lines hold only fixed fields (no headers, no query string), so they skip redaction,
  // which costs several times the rest of the line on the hot path.
  const accessLogger = options.logger.child({ listener: surface.name }, { redact: [] });
  const accessLevel = options.accessLogLevel ?? 'info';
  const observe = options.metrics?.listener(surface.name);

  // Node's requestTimeout stays off: body-deadlines.ts does its job and tells a stalled client
  // from a server that paused reading; the head has Node's headersTimeout.
  const headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  // Node checks heads against headersTimeout on this interval (30 s by default, which let a
  // stalled head live 50 s).
  const server = http.createServer({
    requestTimeout: 0,
    headersTimeout,
    connectionsCheckingInterval: Math.max(10, Math.min(30_000, Math.floor(headersTimeout / 4))),
  });
  server.keepAliveTimeout = 5_000;
  const deadlines = createBodyDeadlines<RequestContext>({
    idleMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    totalMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    onExpired: (ctx, reason) => expire(surface, ctx, reason, logger),
  });
  server.on('request', (req, res) => {
    const started = performance.now();
    const requestId =
      req.headers['x-request-id'] === undefined && req.headers.traceparent === undefined ? randomUUID() : pickRequestId(headersOf(req));
    res.setHeader('x-request-id', requestId);
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
    const ctx = new RequestContext(req, res, path, q === -1 ? '' : rawUrl.slice(q + 1), requestId);
    deadlines.watch(ctx);
    let probe = false;
    res.once('close', () => {
      const elapsed = performance.now() - started;
      observe?.(req.method, res.statusCode, elapsed / 1000);
      const line = {
        requestId,
        method: req.method,
        path,
        status: res.statusCode,
        ms: Math.round(elapsed * 100) / 100,
        aborted: !res.writableFinished || undefined,
      };
      // Probes come every few seconds; a readiness change is logged once by the check itself.
      if (probe) accessLogger.debug(line, 'request');
      else if (res.statusCode >= 500) accessLogger.warn(line, 'request');
      else accessLogger[accessLevel](line, 'request');
    });
    probe = options.probes?.(ctx) ?? false;
    if (probe) return;
    requestScope.run({ requestId }, () => {
      dispatch(surface, ctx).catch((err) => fail(surface, ctx, err, logger));
    });
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (socket.writable)
      socket.end(`HTTP/1.1 ${CLIENT_ERROR_STATUS[err.code ?? ''] ?? '400 Bad Request'}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    else socket.destroy();
  });

  await listen(server, options);
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    name: surface.name,
    port: addr.port,
    url: `http://${host}:${addr.port}`,
    async close(graceMs = 10_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections become idle as their last response ends: close them as they do.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      server.closeIdleConnections();
      await closed;
      deadlines.close();
      clearInterval(sweep);
      clearTimeout(timer);
      await surface.close?.();
    },
  };
}

/**
 * A request as routes see it. The query string is parsed on first use (the proxy forwards it as
 * it is), by a getter on the class: the same getter in an object literal made V8 keep every
 * request's objects alive across scavenges and promote ~10 MB per scavenge at proxy rates,
 * with 10-15 ms pauses (measured with --trace-gc-nvp under test/bench/gateway.bench.ts).
 */
class RequestContext implements RouteContext {
  readonly req: http.IncomingMessage;
  readonly res: http.ServerResponse;
  params: Record<string, string> = {};
  readonly path: string;
  readonly requestId: string;
  /** Answered with a 408 by the listener: the handler's own failure that follows is expected. */
  timedOut = false;
  private readonly rawQuery: string;
  private parsedQuery: URLSearchParams | undefined;

  constructor(req: http.IncomingMessage, res: http.ServerResponse, path: string, rawQuery: string, requestId: string) {
    this.req = req;
    this.res = res;
    this.path = path;
    this.rawQuery = rawQuery;
    this.requestId = requestId;
  }

  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.rawQuery));
  }
}

async function dispatch(surface: Surface, ctx: RouteContext): Promise<void> {
  if (surface.before && (await surface.before(ctx))) return;
  const { match, allowed } = surface.router.match(ctx.req.method ?? 'GET', ctx.path);
  if (match) {
    ctx.params = match.params;
    await match.handler(ctx);
  } else if (allowed.length > 0) {
    await surface.methodNotAllowed(ctx, allowed);
  } else {
    await surface.notFound(ctx);
  }
}

/**
 * A request body missed its deadline (body-deadlines.ts): a 408 in the surface's own shape and
 * the connection closed, or, once the response has started, the connection closed at once. The
 * handler still waiting for the body then fails, quietly (fail()).
 */
async function expire(surface: Surface, ctx: RequestContext, reason: 'idle' | 'total', logger: Logger): Promise<void> {
  ctx.timedOut = true;
  const { req, res } = ctx;
  logger.info({ requestId: ctx.requestId, reason, bytesRead: req.socket.bytesRead }, 'request body timed out');
  if (res.headersSent) {
    req.socket.destroy();
    return;
  }
  // Node closes the connection once this response is written, without waiting for the body.
  res.setHeader('connection', 'close');
  try {
    await surface.onError(ctx, new RequestTimeoutError(reason));
  } catch (err) {
    logger.error({ requestId: ctx.requestId, err }, 'error handler failed');
  }
  if (!res.writableEnded) req.socket.destroy();
}

async function fail(surface: Surface, ctx: RequestContext, err: unknown, logger: Logger): Promise<void> {
  if (ctx.timedOut) {
    if (!ctx.res.writableEnded) ctx.res.destroy();
    return;
  }
  if (ctx.res.headersSent) {
    logger.warn({ requestId: ctx.requestId, err }, 'request failed after the response started');
    ctx.res.destroy();
    return;
  }
  try {
    await surface.onError(ctx, err);
  } catch (inner) {
    logger.error({ requestId: ctx.requestId, err: inner }, 'error handler failed');
    if (!ctx.res.headersSent) {
      ctx.res.writeHead(500, { 'content-type': 'application/json' });
      ctx.res.end('{"error":"internal_error"}');
    } else {
      ctx.res.destroy();
    }
  }
}

function headersOf(req: http.IncomingMessage): Headers {
  const headers = new Headers();
  const id = req.headers['x-request-id'];
  const trace = req.headers.traceparent;
  if (typeof id === 'string') headers.set('x-request-id', id);
  if (typeof trace === 'string') headers.set('traceparent', trace);
  return headers;
}
