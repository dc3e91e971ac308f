// undici behind the BackendClient port (backend-client-interface.ts): GATEWAY_BACKEND_CLIENT=undici.
// A Pool per backend, driven through `dispatch` with a handler (no request objects, no body
// stream of its own), so that backpressure reaches the proxy exactly as with the gateway's own
// client. The port's documented behaviour is kept where undici leaves room:
// - the same timeouts: undici's headersTimeout already runs only once the request is sent, and
//   its bodyTimeout stops while the handler has paused; the wait for a free connection
//   (`queueTimeoutMs`) is this adapter's, since undici queues without a deadline;
// - the same refusals on top of llhttp's: a transfer coding other than chunked; hop-by-hop
//   fields and those Connection names are dropped, and Content-Length beside Transfer-Encoding;
// - the same error codes, mapped from undici's error classes.
// Differences that remain, asserted as such in the shared suite: undici closes the connection
// after a HEAD request, and it destroys the request body stream when a request fails while its
// body is being sent.
import { PassThrough, Transform, type Readable } from 'node:stream';
import { Pool, errors, type Dispatcher } from 'undici';
import {
  BackendError,
  type BackendClient,
  type BackendClientOptions,
  type BackendErrorCode,
  type BackendRequest,
  type Exchange,
  type ResponseHandler,
} from './backend-client-interface.ts';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export function createUndiciBackendClient(options: BackendClientOptions): BackendClient {
  const url = options.url;
  const maxHeadBytes = options.maxHeadBytes ?? 64 * 1024;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`backend URL must be http or https: ${url.href}`);
  const keepAliveMs = options.keepAliveMs ?? 4_000;
  const queueTimeoutMs = options.queueTimeoutMs ?? 5_000;
  let open = 0;
  let closed = false;
  const pool = new Pool(url.origin, {
    connections: options.connections,
    pipelining: 1,
    connectTimeout: options.connectTimeoutMs,
    headersTimeout: options.responseTimeoutMs,
    bodyTimeout: options.idleTimeoutMs,
    // As the gateway's client: idle for keepAliveMs, or a second less than the backend's hint.
    keepAliveTimeout: keepAliveMs,
    keepAliveMaxTimeout: keepAliveMs,
    keepAliveTimeoutThreshold: 1_000,
    maxHeaderSize: maxHeadBytes,
    connect: options.tls || options.lookup ? { ...options.tls, ...(options.lookup ? { lookup: options.lookup } : {}) } : undefined,
  });
  pool.on('connect', () => open++);
  pool.on('disconnect', () => open--);

  return {
    request(request, handler) {
      const call = new UndiciCall(handler, request, queueTimeoutMs, maxHeadBytes);
      if (closed) {
        queueMicrotask(() => call.fail(new BackendError('connection_closed', 'the backend client is closed')));
        return call;
      }
      pool.dispatch(dispatchOptions(request, call), call);
      return call;
    },
    async close() {
      closed = true;
      await pool.destroy(new BackendError('connection_closed', 'the backend client is closed'));
    },
    get connections() {
      return open;
    },
  };
}

function dispatchOptions(request: BackendRequest, call: UndiciCall): Dispatcher.DispatchOptions {
  const headers: string[] = [];
  const lines = request.headerLines;
  // The proxy writes each line as `name: value\r\n` (BackendRequest.headerLines).
  for (let at = 0; at < lines.length; ) {
    const end = lines.indexOf('\r\n', at);
    const colon = lines.indexOf(':', at);
    if (end === -1 || colon === -1 || colon > end) break;
    headers.push(lines.slice(at, colon), lines.slice(colon + 1, end).trim());
    at = end + 2;
  }
  let body: Readable | null = request.body;
  if (body !== null && request.bodyLength >= 0) headers.push('content-length', String(request.bodyLength));
  else if (body !== null) body = limited(body, request.maxBodyBytes, call);
  return { path: request.path, method: request.method as Dispatcher.HttpMethod, headers, body };
}

/**
 * A body of unknown length, counted against the limit. Piped (not pipelined), so that an error
 * here or in undici never destroys the client's request: the proxy still answers it (413).
 */
function limited(body: Readable, limit: number, call: UndiciCall): Readable {
  let sent = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sent += chunk.length;
      if (sent <= limit) return done(null, chunk);
      body.unpipe(counted);
      call.fail(new BackendError('body_too_large', `the request body exceeds ${limit} bytes`));
      done();
    },
  });
  body.pipe(counted);
  // undici reads an async iterable or a stream; a PassThrough keeps `counted` private.
  return counted.pipe(new PassThrough());
}

/** One request: the undici handler, and the proxy's Exchange. */
class UndiciCall implements Exchange, Dispatcher.DispatchHandler {
  private readonly handler: ResponseHandler;
  private readonly method: string;
  private controller: Dispatcher.DispatchController | undefined;
  private finished = false;
  private queueTimer: NodeJS.Timeout | undefined;
  /** Body bytes still expected when Content-Length frames it; -1 otherwise. */
  private remaining = -1;

  private readonly maxHeadBytes: number;

  constructor(handler: ResponseHandler, request: BackendRequest, queueTimeoutMs: number, maxHeadBytes: number) {
    this.handler = handler;
    this.maxHeadBytes = maxHeadBytes;
    this.method = request.method;
    this.queueTimer = setTimeout(() => {
      this.fail(new BackendError('queue_timeout', `no connection to the backend was free within ${queueTimeoutMs} ms`));
    }, queueTimeoutMs);
    this.queueTimer.unref();
  }

  abort(): void {
    if (this.finished) return;
    this.finished = true;
    this.stop();
  }

  resume(): void {
    this.controller?.resume();
  }

  /** Reports `error` (once) and ends the exchange. */
  fail(error: BackendError): void {
    if (this.finished) return;
    this.finished = true;
    this.stop(error);
    this.handler.onError(error);
  }

  private stop(reason?: Error): void {
    clearTimeout(this.queueTimer);
    this.controller?.abort(reason ?? new errors.RequestAbortedError());
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    clearTimeout(this.queueTimer);
    this.controller = controller;
    // Aborted (or timed out) while it waited for a connection: never sent.
    if (this.finished) controller.abort(new errors.RequestAbortedError());
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, _parsed: unknown, reason?: string): void {
    if (this.finished) return;
    if (status === 101) {
      return this.fail(
        new BackendError('invalid_response', 'invalid response from the backend: the backend switched protocols without being asked'),
      );
    }
    const raw = (controller as { rawHeaders?: Buffer[] }).rawHeaders ?? [];
    const headers: string[] = [];
    let codings: string | undefined;
    let length = -1;
    let named: string[] | undefined;
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!.toString('latin1').toLowerCase();
      const value = raw[i + 1]!.toString('latin1').trim();
      if (name === 'transfer-encoding') codings = codings === undefined ? value : `${codings}, ${value}`;
      else if (name === 'connection') for (const t of value.toLowerCase().split(',')) (named ??= []).push(t.trim());
      if (HOP_BY_HOP.has(name)) continue;
      if (name === 'content-length') {
        if (length !== -1) continue;
        length = Number(value);
      }
      headers.push(name, value);
    }
    if (codings !== undefined && codings.toLowerCase() !== 'chunked') {
      return this.fail(
        new BackendError(
          'invalid_response',
          `invalid response from the backend: the backend used a transfer coding other than chunked: ${codings}`,
        ),
      );
    }
    for (let i = headers.length - 2; i >= 0; i -= 2) {
      const name = headers[i]!;
      if (named?.includes(name) || (codings !== undefined && name === 'content-length')) headers.splice(i, 2);
    }
    const bodyless = this.method === 'HEAD' || status === 204 || status === 304;
    this.remaining = codings === undefined && !bodyless && length > 0 ? length : -1;
    this.handler.onHead(status, reason ?? '', headers);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    let last = false;
    if (this.remaining > 0) {
      this.remaining -= chunk.length;
      last = this.remaining <= 0;
    }
    if (!this.handler.onData(chunk, last)) controller.pause();
  }

  onResponseEnd(): void {
    if (this.finished) return;
    this.finished = true;
    this.handler.onEnd();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    clearTimeout(this.queueTimer);
    if (this.finished) return;
    this.finished = true;
    this.handler.onError(
      error instanceof errors.HeadersOverflowError
        ? new BackendError('invalid_response', `invalid response from the backend: the response head exceeds ${this.maxHeadBytes} bytes`, {
            cause: error,
          })
        : toBackendError(error),
    );
  }
}

/** undici's errors, by class, as the port's codes. */
function toBackendError(error: Error): BackendError {
  if (error instanceof BackendError) return error;
  const code = codeOf(error);
  const detail = (error as { code?: string }).code ? `${(error as { code?: string }).code}: ${error.message}` : error.message;
  return new BackendError(code, `${messageOf(code)} (${detail})`, { cause: error });
}

function codeOf(error: Error): BackendErrorCode {
  if (error instanceof errors.ConnectTimeoutError) return 'connect_timeout';
  if (error instanceof errors.HeadersTimeoutError) return 'response_timeout';
  if (error instanceof errors.BodyTimeoutError) return 'idle_timeout';
  if (
    error instanceof errors.HeadersOverflowError ||
    error instanceof errors.HTTPParserError ||
    error instanceof errors.ResponseContentLengthMismatchError
  )
    return 'invalid_response';
  if (
    error instanceof errors.SocketError ||
    error instanceof errors.ClientDestroyedError ||
    error instanceof errors.ClientClosedError ||
    error instanceof errors.InformationalError
  )
    return 'connection_closed';
  const sys = (error as { code?: string }).code ?? '';
  if (/^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ERR_TLS_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_|CERT_)/.test(sys))
    return 'connect_failed';
  return 'connection_closed';
}

function messageOf(code: BackendErrorCode): string {
  switch (code) {
    case 'connect_timeout':
      return 'connecting to the backend took too long';
    case 'response_timeout':
      return 'no response from the backend in time';
    case 'idle_timeout':
      return 'the response body was silent for too long';
    case 'invalid_response':
      return 'invalid response from the backend';
    case 'connect_failed':
      return 'cannot connect to the backend';
    default:
      return 'the backend connection ended before the response was complete';
  }
}
