// The proxy's HTTP/1.1 client for MCP backends: a keep-alive connection pool per backend that
// writes each request head (and a body that is already in) in one write, parses responses in
// place and hands body chunks on as they arrive, with backpressure both ways.
//
// Why not undici: on the proxy's hot path, undici's general machinery (request objects, header
// validation of headers Node already validated, a WASM parser behind a JS shim, a timer per
// request) cost as much CPU per request as Node's own HTTP server. test/bench/gateway.bench.ts
// measures this client against a bare undici proxy in the same run (docs/gateway.md).
//
// What it speaks, and refuses (RFC 9112):
// - One request at a time per connection (no pipelining). Connections are reused while the
//   backend keeps them alive: never after `Connection: close`, an HTTP/1.0 answer, a response
//   delimited by closing the connection, bytes after the end of a response, or a response that
//   ended before the request body was sent.
// - An idle connection is dropped after `keepAliveMs`, or a second less than the backend's
//   `Keep-Alive: timeout=` hint, so that it is not reused just as the backend closes it.
//   Requests are never retried (a POST may have been executed): a backend that closes a
//   connection just as it is reused costs one 502.
// - Response framing: no body for HEAD, 1xx, 204 and 304; chunked (extensions and trailers
//   read and dropped); Content-Length; or until the connection closes. Interim 1xx responses
//   are skipped; 101 is refused (the gateway never asks to upgrade).
// - A response head over `maxHeadBytes`, a malformed status line, a header name that is not a
//   token, control characters, obs-fold, a bare LF line ending (at once, not at a timeout), a
//   bad or repeated Content-Length, Transfer-Encoding with Content-Length, a transfer coding
//   other than chunked (we never send TE), a malformed chunk, chunk extension or trailer is an
//   `invalid_response` error and closes the connection. test/integration/gateway-backend-
//   client-fuzz.test.ts holds these rules to llhttp's, and lists where we are stricter.
// - Request bodies stream as they arrive: with their Content-Length when the client gave one
//   (Node's parser holds the body to it), chunked otherwise, counted against `maxBodyBytes`.
// - Timeouts: waiting for a free connection (`queueTimeoutMs`: a saturated backend answers
//   fast, with a 503, instead of holding requests for the whole response timeout), connecting
//   (including TLS), waiting for the response head from when the request body was all sent (a
//   backend that leaves an upload unread gets the same time; a client slow to upload is the
//   listener's body timeout), and silence inside a response body, not counting time paused
//   because the client is the slow side. One coarse timer per client checks every deadline (at
//   a quarter of the shortest timeout, at least every 10 ms, at most every second), instead of
//   a timer per request.
import net from 'node:net';
import type { Readable } from 'node:stream';
import tls from 'node:tls';
import {
  BackendError,
  type BackendClient,
  type BackendClientOptions,
  type BackendRequest,
  type Exchange,
  type ResponseHandler,
} from './backend-client-interface.ts';
import { BAD_LINE, parseResponseHead } from './backend-response-head.ts';

export * from './backend-client-interface.ts';

const CRLF = 0x0d0a;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
// Chunk extensions as RFC 9112 §7.1.1 has them (`;name`, `;name=token`, `;name="quoted"`), but
// without the BWS it allows around `;` and `=`: llhttp (Node's parser, and undici's) refuses
// that, so no backend that works with Node clients sends it.
const CHUNK_SIZE =
  /^[0-9A-Fa-f]{1,12}(?:;[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:=(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+|"(?:[\t\x20\x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t\x20-\x7e\x80-\xff])*"))?)*$/;
/** A trailer field line: a token, a colon, a value (control characters are checked apart). */
const TRAILER_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/;
const MAX_LINE = 4096;
const MAX_TRAILER_BYTES = 64 * 1024;

// Parser states.
const HEAD = 0;
const LENGTH = 1;
const CHUNK_SIZE_LINE = 2;
const CHUNK_DATA = 3;
const CHUNK_DATA_END = 4;
const TRAILERS = 5;
const UNTIL_CLOSE = 6;
const DONE = 7;

/** What a step of the response parser returns when parsing stops for this read. */
const STOP = -1;

const CONNECTING = 0;
const IDLE = 1;
const BUSY = 2;
const CLOSED = 3;

export function createBackendClient(options: BackendClientOptions): BackendClient {
  const pool = new Pool(options);
  return {
    request: (request, handler) => pool.request(request, handler),
    close: async () => pool.close(),
    get connections() {
      return pool.all.size;
    },
  };
}

/** One backend's connections, and the requests waiting for one of them. */
class Pool {
  readonly url: URL;
  readonly secure: boolean;
  readonly hostname: string;
  readonly port: number;
  readonly hostHeader: string;
  readonly tls: tls.ConnectionOptions | undefined;
  /** Resolves the host name (an organization's server: public addresses only, services/common/net/address-policy.ts). */
  readonly lookup: net.LookupFunction | undefined;
  readonly maxConnections: number;
  readonly connectTimeoutMs: number;
  readonly responseTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly keepAliveMs: number;
  readonly maxHeadBytes: number;
  readonly queueTimeoutMs: number;
  private readonly sweepEvery: number;
  readonly all = new Set<Connection>();
  /** Idle connections, most recently used last (reused first: its peer is least likely to time out). */
  readonly idle: Connection[] = [];
  readonly waiting: Call[] = [];
  private sweeper: NodeJS.Timeout | undefined;
  closed = false;

  constructor(options: BackendClientOptions) {
    const url = options.url;
    this.url = url;
    this.secure = url.protocol === 'https:';
    if (!this.secure && url.protocol !== 'http:') throw new Error(`backend URL must be http or https: ${url.href}`);
    this.hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    this.port = Number(url.port) || (this.secure ? 443 : 80);
    this.hostHeader = url.host;
    this.tls = options.tls;
    this.lookup = options.lookup;
    this.maxConnections = options.connections;
    this.connectTimeoutMs = options.connectTimeoutMs;
    this.responseTimeoutMs = options.responseTimeoutMs;
    this.idleTimeoutMs = options.idleTimeoutMs;
    this.keepAliveMs = options.keepAliveMs ?? 4_000;
    this.maxHeadBytes = options.maxHeadBytes ?? 64 * 1024;
    this.queueTimeoutMs = options.queueTimeoutMs ?? 5_000;
    const timeouts = [this.connectTimeoutMs, this.responseTimeoutMs, this.idleTimeoutMs, this.keepAliveMs, this.queueTimeoutMs].filter(
      (t) => t > 0,
    );
    this.sweepEvery = Math.min(1_000, Math.max(10, Math.floor(Math.min(...timeouts) / 4)));
  }

  request(request: BackendRequest, handler: ResponseHandler): Exchange {
    const call = new Call(this, request, handler);
    if (this.closed) {
      queueMicrotask(() => call.fail(new BackendError('connection_closed', 'the backend client is closed')));
      return call;
    }
    const conn = this.idle.pop();
    if (conn) {
      conn.start(call);
      return call;
    }
    call.queuedUntil = performance.now() + this.queueTimeoutMs;
    this.waiting.push(call);
    if (this.all.size < this.maxConnections) new Connection(this);
    this.ensureSweeper();
    return call;
  }

  close(): void {
    this.closed = true;
    for (const call of this.waiting.splice(0)) call.fail(new BackendError('connection_closed', 'the backend client is closed'));
    for (const conn of [...this.all]) conn.destroy();
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  ensureSweeper(): void {
    if (this.sweeper || (this.all.size === 0 && this.waiting.length === 0)) return;
    this.sweeper = setInterval(() => this.sweep(), this.sweepEvery);
    this.sweeper.unref();
  }

  private sweep(): void {
    const now = performance.now();
    for (const conn of this.all) {
      if (conn.deadline > 0 && now >= conn.deadline) conn.expire();
    }
    // Every request waits the same time, so the oldest are at the front.
    const waiting = this.waiting;
    while (waiting.length > 0 && (waiting[0]!.finished || now >= waiting[0]!.queuedUntil)) {
      waiting.shift()!.fail(new BackendError('queue_timeout', `no connection to the backend was free within ${this.queueTimeoutMs} ms`));
    }
    if (this.all.size === 0 && waiting.length === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Hands an idle connection to the next waiting request, or keeps it idle. */
  release(conn: Connection): void {
    for (;;) {
      const call = this.waiting.shift();
      if (!call) break;
      if (call.finished) continue;
      conn.start(call);
      return;
    }
    conn.idleFrom(performance.now());
    this.idle.push(conn);
    this.ensureSweeper();
  }

  /** A connection went away: it no longer counts, idle or not. */
  forget(conn: Connection): void {
    this.all.delete(conn);
    const at = this.idle.indexOf(conn);
    if (at >= 0) this.idle.splice(at, 1);
  }

  private connecting(): number {
    let n = 0;
    for (const c of this.all) if (c.state === CONNECTING) n++;
    return n;
  }

  /** A connection attempt failed: waiting requests that no other attempt is opened for fail with it. */
  failWaiting(error: BackendError): void {
    const opening = this.connecting();
    while (this.waiting.length > opening) this.waiting.shift()!.fail(error);
  }

  /** A connection closed: a waiting request that no attempt is opened for gets a new one. */
  openFor(): void {
    if (this.waiting.length === 0 || this.closed) return;
    if (this.connecting() < this.waiting.length && this.all.size < this.maxConnections) new Connection(this);
  }
}

/** A request and its handler, from `request()` until its response ends or fails. */
class Call implements Exchange {
  readonly pool: Pool;
  readonly request: BackendRequest;
  readonly handler: ResponseHandler;
  conn: Connection | undefined;
  finished = false;
  /** performance.now() until which the request may wait for a connection. */
  queuedUntil = 0;

  constructor(pool: Pool, request: BackendRequest, handler: ResponseHandler) {
    this.pool = pool;
    this.request = request;
    this.handler = handler;
  }

  abort(): void {
    if (this.finished) return;
    this.finished = true;
    const at = this.pool.waiting.indexOf(this);
    if (at >= 0) this.pool.waiting.splice(at, 1);
    this.conn?.destroy();
  }

  resume(): void {
    const conn = this.conn;
    if (conn && conn.call === this) conn.resume();
  }

  fail(error: BackendError): void {
    if (this.finished) return;
    this.finished = true;
    this.handler.onError(error);
  }
}

/** One connection to the backend: writes a request, parses its response in place, and is reused. */
class Connection {
  readonly pool: Pool;
  readonly socket: net.Socket;
  state: number = CONNECTING;
  call: Call | undefined;
  /** performance.now() deadline of whatever is awaited now; 0 for none. */
  deadline: number;
  private keepAliveHintMs = Infinity;
  // Response parser.
  private phase: number = DONE;
  private pending: Buffer | undefined;
  private remaining = 0;
  private trailerBytes = 0;
  private reusable = true;
  private requestSent = false;
  private failure: Error | undefined;

  constructor(pool: Pool) {
    this.pool = pool;
    this.deadline = performance.now() + pool.connectTimeoutMs;
    const { secure, hostname, port } = pool;
    this.socket = secure
      ? tls.connect({
          host: hostname,
          port,
          servername: net.isIP(hostname) ? undefined : hostname,
          ALPNProtocols: ['http/1.1'],
          lookup: pool.lookup,
          ...pool.tls,
        })
      : net.connect({ host: hostname, port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 30_000, lookup: pool.lookup });
    if (secure) this.socket.setNoDelay(true);
    this.socket.once(secure ? 'secureConnect' : 'connect', () => this.connected());
    this.socket.on('data', (chunk: Buffer) => this.received(chunk));
    this.socket.on('error', (err) => {
      this.failure ??= err;
    });
    this.socket.on('close', () => this.closed());
    pool.all.add(this);
    pool.ensureSweeper();
  }

  private connected(): void {
    if (this.state !== CONNECTING) return;
    this.state = IDLE;
    this.pool.release(this);
  }

  /** It goes idle: dropped after `keepAliveMs`, or before the backend's own hint runs out. */
  idleFrom(now: number): void {
    this.deadline = now + Math.min(this.pool.keepAliveMs, this.keepAliveHintMs - 1_000);
  }

  /** The client caught up: reading from the backend goes on, and so does the idle clock. */
  resume(): void {
    if (this.phase !== HEAD && this.phase !== DONE && this.pool.idleTimeoutMs > 0) {
      this.deadline = performance.now() + this.pool.idleTimeoutMs;
    }
    this.socket.resume();
  }

  /** The client is the slow side: the backend's silence from now on is ours, not its. */
  private pauseForClient(): void {
    this.socket.pause();
    if (this.phase !== HEAD) this.deadline = 0;
  }

  /** Starts `call` on this connection. */
  start(call: Call): void {
    this.state = BUSY;
    this.call = call;
    call.conn = this;
    this.phase = HEAD;
    this.requestSent = false;
    this.trailerBytes = 0;
    this.write(call);
  }

  private write(call: Call): void {
    const { method, path, headerLines, body, bodyLength } = call.request;
    const socket = this.socket;
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.pool.hostHeader}\r\n${headerLines}`;
    if (body === null) {
      if (bodyLength === 0 && (method === 'POST' || method === 'PUT')) head += 'content-length: 0\r\n';
    } else if (bodyLength >= 0) {
      head += `content-length: ${bodyLength}\r\n`;
    } else {
      head += 'transfer-encoding: chunked\r\n';
    }
    head += '\r\n';
    if (body === null) {
      socket.write(head, 'latin1');
      this.sent();
      return;
    }
    // While the body uploads, the clock runs only when the backend does not read it (below).
    this.deadline = 0;
    // The head and whatever part of the body came in the same read from the client (all of a
    // small JSON-RPC message, usually) leave in one write. The body flows only from a
    // nextTick of Node's stream machinery, so the uncork waits for the check phase.
    socket.cork();
    socket.write(head, 'latin1');
    setImmediate(uncork, socket);
    this.stream(call, body, bodyLength < 0);
  }

  private stream(call: Call, body: Readable, chunked: boolean): void {
    const socket = this.socket;
    const limit = call.request.maxBodyBytes;
    let sent = 0;
    const resumeBody = () => {
      if (this.phase === HEAD && !this.requestSent) this.deadline = 0;
      body.resume();
    };
    const onData = (chunk: Buffer) => {
      if (this.call !== call) return detach();
      let ok: boolean;
      if (chunked) {
        sent += chunk.length;
        if (sent > limit) {
          detach();
          call.fail(new BackendError('body_too_large', `the request body exceeds ${limit} bytes`));
          this.destroy();
          return;
        }
        socket.cork();
        socket.write(`${chunk.length.toString(16)}\r\n`, 'latin1');
        socket.write(chunk);
        ok = socket.write('\r\n', 'latin1');
        process.nextTick(uncork, socket);
      } else {
        ok = socket.write(chunk);
      }
      if (!ok) {
        body.pause();
        socket.once('drain', resumeBody);
        if (this.phase === HEAD) this.deadline = performance.now() + this.pool.responseTimeoutMs;
      }
    };
    const onEnd = () => {
      detach();
      if (this.call !== call) return;
      if (chunked) socket.write('0\r\n\r\n', 'latin1');
      this.sent();
    };
    const detach = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      socket.off('drain', resumeBody);
    };
    body.on('data', onData);
    body.on('end', onEnd);
  }

  /** The request is all written: the response timeout starts now (unless the head came early). */
  private sent(): void {
    this.requestSent = true;
    if (this.phase === HEAD) this.deadline = performance.now() + this.pool.responseTimeoutMs;
  }

  private received(chunk: Buffer): void {
    const call = this.call;
    if (!call || call.finished) {
      // Bytes from a backend that owes us nothing: the connection cannot be trusted.
      this.destroy();
      return;
    }
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    if (this.phase !== HEAD && this.pool.idleTimeoutMs > 0) this.deadline = performance.now() + this.pool.idleTimeoutMs;
    try {
      this.parse(call, buf);
    } catch (err) {
      // The handler failed to relay what was parsed (a bug, or a header Node refuses).
      call.fail(new BackendError('invalid_response', `the response could not be relayed: ${describe(err as Error)}`, { cause: err }));
      this.destroy();
    }
  }

  /**
   * Runs the response parser over `buf`; stops when the response is complete or given up. Each
   * step reads what its phase expects from `offset` and returns where the next one starts, or
   * STOP when this read is used up (the rest waits in `pending`) or the response is done with.
   */
  private parse(call: Call, buf: Buffer): void {
    let offset = 0;
    while (offset < buf.length) {
      switch (this.phase) {
        case HEAD:
          offset = this.readHead(call, buf, offset);
          break;
        case LENGTH:
        case CHUNK_DATA:
          offset = this.readData(call, buf, offset);
          break;
        case CHUNK_SIZE_LINE:
          offset = this.readChunkSize(buf, offset);
          break;
        case CHUNK_DATA_END:
          offset = this.readChunkEnd(buf, offset);
          break;
        case TRAILERS:
          offset = this.readTrailer(buf, offset);
          break;
        case UNTIL_CLOSE:
          if (!call.handler.onData(offset === 0 ? buf : buf.subarray(offset), false)) this.pauseForClient();
          return;
        default:
          return this.destroy();
      }
      if (offset === STOP) return;
    }
  }

  private readHead(call: Call, buf: Buffer, offset: number): number {
    const end = buf.length;
    const maxHeadBytes = this.pool.maxHeadBytes;
    const stop = buf.indexOf(HEAD_END, offset);
    if (stop === -1 ? end - offset > maxHeadBytes : stop - offset > maxHeadBytes) {
      return this.invalid(`the response head exceeds ${maxHeadBytes} bytes`);
    }
    if (stop === -1) {
      // A head with bare LF line endings would never end: refuse it now, not at the timeout.
      if (hasBareLf(buf, offset)) return this.invalid('the response head has a bare LF line ending');
      this.pending = buf.subarray(offset);
      return STOP;
    }
    const problem = this.head(call, buf.toString('latin1', offset, stop));
    const next = stop + 4;
    if (problem) return this.invalid(problem);
    if (this.call !== call || call.finished) return STOP;
    // The head just read ends its response: no body follows.
    if (this.phase === DONE) return this.complete(next < end);
    return next;
  }

  /** Body bytes of a Content-Length response or of a chunk, handed on as they are. */
  private readData(call: Call, buf: Buffer, offset: number): number {
    const end = buf.length;
    const take = Math.min(this.remaining, end - offset);
    const part = offset === 0 && take === end ? buf : buf.subarray(offset, offset + take);
    const next = offset + take;
    this.remaining -= take;
    const last = this.remaining === 0 && this.phase === LENGTH;
    if (this.remaining === 0) this.phase = last ? DONE : CHUNK_DATA_END;
    if (!call.handler.onData(part, last)) this.pauseForClient();
    if (this.call !== call || call.finished) return STOP;
    if (last) return this.complete(next < end);
    return next;
  }

  private readChunkSize(buf: Buffer, offset: number): number {
    const lineEnd = this.lineEnd(buf, offset, 'a chunk-size line');
    if (lineEnd === -1) return STOP;
    const line = buf.toString('latin1', offset, lineEnd);
    if (!CHUNK_SIZE.test(line)) return this.invalid('a chunk-size line is malformed');
    const size = Number.parseInt(line, 16);
    this.remaining = size;
    this.phase = size === 0 ? TRAILERS : CHUNK_DATA;
    return lineEnd + 2;
  }

  private readChunkEnd(buf: Buffer, offset: number): number {
    if (buf.length - offset < 2) {
      this.pending = buf.subarray(offset);
      return STOP;
    }
    if (buf.readUInt16BE(offset) !== CRLF) return this.invalid('a chunk does not end with CRLF');
    this.phase = CHUNK_SIZE_LINE;
    return offset + 2;
  }

  /** One trailer line (checked, then dropped), or the empty line that ends the response. */
  private readTrailer(buf: Buffer, offset: number): number {
    const lineEnd = this.lineEnd(buf, offset, 'a trailer line');
    if (lineEnd === -1) return STOP;
    this.trailerBytes += lineEnd - offset + 2;
    if (this.trailerBytes > MAX_TRAILER_BYTES) return this.invalid('the trailers are too large');
    const empty = lineEnd === offset;
    if (!empty) {
      const line = buf.toString('latin1', offset, lineEnd);
      if (BAD_LINE.test(line) || !TRAILER_LINE.test(line)) return this.invalid('a trailer line is malformed');
    }
    const next = lineEnd + 2;
    if (!empty) return next;
    this.phase = DONE;
    return this.complete(next < buf.length);
  }

  /**
   * Where the CRLF ending the line at `offset` is; -1 when the line is not all in yet (the rest
   * waits in `pending`) or is longer than any line may be (the connection is given up).
   */
  private lineEnd(buf: Buffer, offset: number, what: string): number {
    const at = buf.indexOf('\r\n', offset, 'latin1');
    if (at !== -1) return at;
    if (buf.indexOf(10, offset) !== -1) this.invalid(`${what} ends with a bare LF`);
    else if (buf.length - offset > MAX_LINE) this.invalid(`${what} is too long`);
    else this.pending = buf.subarray(offset);
    return -1;
  }

  /**
   * Reads a response head into the parser's state and hands it to the handler (a final
   * one; interim 1xx heads are skipped). Returns what is wrong with it, if anything.
   */
  private head(call: Call, text: string): string | undefined {
    const head = parseResponseHead(text);
    if (typeof head === 'string') return head;
    if (head.status < 200) {
      // Interim response: the real one follows.
      return head.status === 101 ? 'the backend switched protocols without being asked' : undefined;
    }
    this.keepAliveHintMs = head.keepAliveHintMs;
    if (head.close) this.reusable = false;
    if (call.request.method === 'HEAD' || head.status === 204 || head.status === 304) {
      this.phase = DONE;
    } else if (head.chunked) {
      this.phase = CHUNK_SIZE_LINE;
    } else if (head.length >= 0) {
      this.phase = head.length === 0 ? DONE : LENGTH;
      this.remaining = head.length;
    } else {
      this.phase = UNTIL_CLOSE;
      this.reusable = false;
    }
    this.deadline = this.pool.idleTimeoutMs > 0 ? performance.now() + this.pool.idleTimeoutMs : 0;
    call.handler.onHead(head.status, head.reason, head.headers);
    return undefined;
  }

  /** The response is complete; `extra`: more bytes followed it. */
  private complete(extra: boolean): number {
    const call = this.call!;
    // A backend that answered before the request body was all sent (or sent more than one
    // response) leaves the connection in a state that is not worth repairing.
    if (extra || !this.requestSent) this.reusable = false;
    call.finished = true;
    this.finish();
    call.handler.onEnd();
    return STOP;
  }

  /** Gives the connection back, or closes it. */
  private finish(): void {
    if (this.state !== BUSY) return;
    this.call = undefined;
    if (!this.reusable || this.pool.closed || this.keepAliveHintMs <= 1_000) return this.destroy();
    this.state = IDLE;
    this.socket.resume();
    this.pool.release(this);
  }

  private invalid(message: string): number {
    this.call?.fail(new BackendError('invalid_response', `invalid response from the backend: ${message}`));
    this.destroy();
    return STOP;
  }

  /** A deadline passed. */
  expire(): void {
    this.deadline = 0;
    const call = this.call;
    if (this.state === CONNECTING) {
      this.failure = new BackendError('connect_timeout', `connecting took longer than ${this.pool.connectTimeoutMs} ms`);
    } else if (call && this.phase === HEAD) {
      call.fail(new BackendError('response_timeout', `no response within ${this.pool.responseTimeoutMs} ms`));
    } else if (call) {
      call.fail(new BackendError('idle_timeout', `the response body was silent for ${this.pool.idleTimeoutMs} ms`));
    }
    this.destroy();
  }

  destroy(): void {
    if (this.state === CLOSED) return;
    this.socket.destroy();
    this.closedNow();
  }

  private closed(): void {
    if (this.state === CLOSED) return;
    this.closedNow();
  }

  private closedNow(): void {
    const wasConnecting = this.state === CONNECTING;
    this.state = CLOSED;
    this.deadline = 0;
    this.pool.forget(this);
    const call = this.call;
    this.call = undefined;
    if (wasConnecting) {
      const reason = this.failure;
      const error =
        reason instanceof BackendError
          ? reason
          : new BackendError('connect_failed', `cannot connect to ${this.pool.url.origin}: ${reason ? describe(reason) : 'closed'}`, {
              cause: reason,
            });
      // Requests waiting for a connection fail with it only when no other connection can serve them.
      this.pool.failWaiting(error);
      return;
    }
    if (call && !call.finished) this.endCall(call);
    // A slot is free: a waiting request may open a new connection.
    this.pool.openFor();
  }

  /** The connection closed during `call`'s response: the end of an until-close body, or a failure. */
  private endCall(call: Call): void {
    if (this.phase === UNTIL_CLOSE && !this.failure) {
      call.finished = true;
      call.handler.onEnd();
      return;
    }
    const detail = this.failure ? describe(this.failure) : 'closed';
    call.fail(
      new BackendError('connection_closed', `the backend connection ended before the response was complete (${detail})`, {
        cause: this.failure,
      }),
    );
  }
}

function uncork(socket: net.Socket): void {
  socket.uncork();
}

/** True when a LF at or after `offset` is not preceded by CR. */
function hasBareLf(buf: Buffer, offset: number): boolean {
  for (let at = buf.indexOf(10, offset); at !== -1; at = buf.indexOf(10, at + 1)) {
    if (at === offset || buf[at - 1] !== 13) return true;
  }
  return false;
}

function describe(error: Error): string {
  const code = (error as { code?: string }).code;
  return code ? `${code}: ${error.message}` : error.message;
}
