// The proxy's HTTP/1.1 backend client against raw TCP (and TLS) servers that write exactly the
// bytes each case needs: response framing (Content-Length, chunked with extensions and
// trailers, until close, no body), responses split at every byte, interim responses, refused
// malformed answers, connection reuse and its rules, timeouts, request bodies, the pool limit,
// aborts, backpressure and https.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import tls from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUndiciBackendClient } from '../../edge/gateway/backend-client-undici.ts';
import {
  createBackendClient,
  type BackendClient,
  type BackendClientOptions,
  type BackendError,
  type BackendRequest,
} from '../../edge/gateway/backend-client.ts';

interface Received {
  head: string;
  body: Buffer;
}

/** A raw server: parses each request (Content-Length or chunked body) and lets `respond` answer. */
interface RawServer {
  port: number;
  /** Connections accepted so far. */
  accepted: number;
  requests: Received[];
  sockets: Set<net.Socket>;
  closedSockets: number;
  close(): Promise<void>;
}

type Responder = (socket: net.Socket, request: Received, index: number) => void;

const servers: RawServer[] = [];
const clients: BackendClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function parseRequests(socket: net.Socket, onRequest: (r: Received) => void): void {
  let buf = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = buf.toString('latin1', 0, end);
      let rest = buf.subarray(end + 4);
      const length = /\r\ncontent-length: (\d+)/i.exec(head);
      let body: Buffer;
      if (length) {
        const n = Number(length[1]);
        if (rest.length < n) return;
        body = rest.subarray(0, n);
        rest = rest.subarray(n);
      } else if (/\r\ntransfer-encoding: chunked/i.test(head)) {
        const parts: Buffer[] = [];
        let at = 0;
        for (;;) {
          const lineEnd = rest.indexOf('\r\n', at);
          if (lineEnd === -1) return;
          const size = Number.parseInt(rest.toString('latin1', at, lineEnd), 16);
          if (size === 0) {
            if (rest.length < lineEnd + 4) return;
            rest = rest.subarray(lineEnd + 4);
            break;
          }
          if (rest.length < lineEnd + 2 + size + 2) return;
          parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
          at = lineEnd + 2 + size + 2;
        }
        body = Buffer.concat(parts);
      } else {
        body = Buffer.alloc(0);
      }
      buf = rest;
      onRequest({ head, body });
    }
  });
}

async function rawServer(respond: Responder, options: { tls?: tls.TlsOptions } = {}): Promise<RawServer> {
  const state: RawServer = {
    port: 0,
    accepted: 0,
    requests: [],
    sockets: new Set(),
    closedSockets: 0,
    close: async () => {
      for (const s of state.sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const onConnection = (socket: net.Socket) => {
    state.accepted++;
    state.sockets.add(socket);
    socket.on('close', () => {
      state.sockets.delete(socket);
      state.closedSockets++;
    });
    socket.on('error', () => undefined);
    parseRequests(socket, (request) => {
      state.requests.push(request);
      respond(socket, request, state.requests.length - 1);
    });
  };
  const server = options.tls ? tls.createServer(options.tls, onConnection) : net.createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as net.AddressInfo).port;
  servers.push(state);
  return state;
}

/** Every implementation of the port runs the same suite. */
const IMPLEMENTATIONS = [
  { name: 'builtin', create: createBackendClient },
  { name: 'undici', create: createUndiciBackendClient },
];
let create = createBackendClient;
/** Where undici keeps its own documented behaviour (edge/gateway/backend-client-undici.ts). */
const undici = () => create === createUndiciBackendClient;

function client(port: number, options: Partial<BackendClientOptions> = {}, scheme = 'http'): BackendClient {
  const c = create({
    url: new URL(`${scheme}://127.0.0.1:${port}`),
    connections: 8,
    connectTimeoutMs: 2_000,
    responseTimeoutMs: 2_000,
    idleTimeoutMs: 2_000,
    ...options,
  });
  clients.push(c);
  return c;
}

interface Outcome {
  status?: number;
  reason?: string;
  headers: string[];
  body: Buffer;
  chunks: number;
  lastFlagged: boolean;
  error?: BackendError;
}

function send(c: BackendClient, request: Partial<BackendRequest> = {}): Promise<Outcome> & { abort(): void } {
  let abort = () => {};
  const promise = new Promise<Outcome>((resolve) => {
    const out: Outcome = { headers: [], body: Buffer.alloc(0), chunks: 0, lastFlagged: false };
    const exchange = c.request(
      { method: 'GET', path: '/x', headerLines: 'x-test: 1\r\n', body: null, bodyLength: 0, maxBodyBytes: 1 << 20, ...request },
      {
        onHead(status, reason, headers) {
          out.status = status;
          out.reason = reason;
          out.headers = headers;
        },
        onData(chunk, last) {
          out.body = Buffer.concat([out.body, chunk]);
          out.chunks++;
          out.lastFlagged ||= last;
          return true;
        },
        // The next request comes from another read in the proxy: never in the same tick.
        onEnd: () => setImmediate(resolve, out),
        onError(error) {
          out.error = error;
          resolve(out);
        },
      },
    );
    abort = () => exchange.abort();
  });
  return Object.assign(promise, { abort: () => abort() });
}

/**
 * One connection served every request. undici's pool hands a request that comes before the
 * previous connection is released (a tick after its response) to a new connection, and closes
 * the connection after a HEAD: how far it reuses is its own business.
 */
function expectReused(server: RawServer): void {
  if (!undici()) expect(server.accepted).toBe(1);
}

const header = (o: Outcome, name: string) => {
  const i = o.headers.findIndex((h, n) => n % 2 === 0 && h === name);
  return i === -1 ? undefined : o.headers[i + 1];
};

const ok = (body: string, extra = '') => `HTTP/1.1 200 OK\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

describe.each(IMPLEMENTATIONS)('$name', ({ create: implementation }) => {
  beforeEach(() => {
    create = implementation;
  });

  describe('response framing', () => {
    it('reads a Content-Length body, flags its last chunk, and reuses the connection', async () => {
      const server = await rawServer((s) => s.write(ok('hello', 'content-type: text/plain\r\nX-Custom: A\r\n')));
      const c = client(server.port);
      for (let i = 0; i < 3; i++) {
        const r = await send(c);
        expect(r.error).toBeUndefined();
        expect(r.status).toBe(200);
        expect(r.reason).toBe('OK');
        expect(r.body.toString()).toBe('hello');
        expect(r.lastFlagged).toBe(true);
        expect(r.headers).toEqual(['content-length', '5', 'content-type', 'text/plain', 'x-custom', 'A']);
      }
      expectReused(server);
      // undici says `connection: keep-alive`, which HTTP/1.1 implies.
      expect(server.requests[0]!.head).toMatch(
        /^GET \/x HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\n(?:connection: keep-alive\r\n)?x-test: 1$/,
      );
    });

    it('decodes a chunked body with extensions and trailers, and drops hop-by-hop fields', async () => {
      const server = await rawServer((s) =>
        s.write(
          'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive, x-hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=30\r\n' +
            'Trailer: x-sum\r\ncontent-type: text/event-stream\r\n\r\n' +
            '5;name=value\r\nhello\r\n1\r\n,\r\n6\r\n world\r\n0\r\nx-sum: 11\r\n\r\n',
        ),
      );
      const c = client(server.port);
      const r = await send(c);
      expect(r.error).toBeUndefined();
      expect(r.body.toString()).toBe('hello, world');
      expect(r.headers).toEqual(['content-type', 'text/event-stream']);
      const again = await send(c);
      expect(again.body.toString()).toBe('hello, world');
      expectReused(server);
    });

    it('parses a response split at every byte', async () => {
      const response = Buffer.from(
        'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nt: 1\r\n\r\n',
        'latin1',
      );
      let split = 1;
      const server = await rawServer((s) => {
        const at = split;
        s.setNoDelay(true);
        s.write(response.subarray(0, at));
        setTimeout(() => s.write(response.subarray(at)), 1);
      });
      const c = client(server.port);
      for (split = 1; split < response.length; split++) {
        const r = await send(c);
        expect(r.error, `split at ${split}`).toBeUndefined();
        expect(r.body.toString(), `split at ${split}`).toBe('abcde');
      }
      expectReused(server);
    });

    it('reads a body delimited by the connection closing, and does not reuse that connection', async () => {
      const server = await rawServer((s) => {
        s.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil ');
        setTimeout(() => s.end('close'), 10);
      });
      const c = client(server.port);
      const first = await send(c);
      expect(first.error).toBeUndefined();
      expect(first.body.toString()).toBe('until close');
      expect(first.lastFlagged).toBe(false);
      await send(c);
      expect(server.accepted).toBe(2);
    });

    it('expects no body after HEAD, 204 and 304, and keeps the connection', async () => {
      const server = await rawServer((s, _r, i) => {
        if (i === 0) s.write('HTTP/1.1 200 OK\r\ncontent-length: 1234\r\n\r\n');
        else if (i === 1) s.write('HTTP/1.1 204 No Content\r\n\r\n');
        else if (i === 2) s.write('HTTP/1.1 304 Not Modified\r\netag: "x"\r\n\r\n');
        else s.write(ok('after'));
      });
      const c = client(server.port);
      const head = await send(c, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(header(head, 'content-length')).toBe('1234');
      expect(head.body.length).toBe(0);
      expect((await send(c)).status).toBe(204);
      expect((await send(c)).status).toBe(304);
      expect((await send(c)).body.toString()).toBe('after');
      expectReused(server);
    });

    it('skips interim 1xx responses', async () => {
      const server = await rawServer((s) =>
        s.write(`HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n${ok('final')}`),
      );
      const r = await send(client(server.port));
      if (undici()) {
        // undici takes a 100 Continue it did not ask for as a broken connection.
        expect(r.error?.code).toBe('connection_closed');
        return;
      }
      expect(r.status).toBe(200);
      expect(r.body.toString()).toBe('final');
      expect(header(r, 'link')).toBeUndefined();
    });

    it('refuses Transfer-Encoding with Content-Length, as llhttp and nginx do, and never reuses the connection', async () => {
      const server = await rawServer((s, _r, i) =>
        s.write(i === 0 ? 'HTTP/1.1 200 OK\r\ncontent-length: 100\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n' : ok('fine')),
      );
      const c = client(server.port);
      const r = await send(c);
      expect(r.error?.code).toBe('invalid_response');
      expect(r.status).toBeUndefined();
      expect((await send(c)).body.toString()).toBe('fine');
      expect(server.accepted).toBe(2);
    });
  });

  describe('malformed responses', () => {
    const cases: [string, string][] = [
      ['a status line that is not HTTP/1.x', 'HTTP/2 200 OK\r\ncontent-length: 0\r\n\r\n'],
      ['a status code that is not three digits', 'HTTP/1.1 20 OK\r\ncontent-length: 0\r\n\r\n'],
      ['a header line without a colon', 'HTTP/1.1 200 OK\r\nbroken\r\ncontent-length: 0\r\n\r\n'],
      ['a header name with a space', 'HTTP/1.1 200 OK\r\nbad name: 1\r\ncontent-length: 0\r\n\r\n'],
      ['a bare LF inside a header line', 'HTTP/1.1 200 OK\r\nx-a: 1\nx-b: 2\r\ncontent-length: 0\r\n\r\n'],
      ['a bare CR inside a header value', 'HTTP/1.1 200 OK\r\nx-a: 1\rx-b: 2\r\ncontent-length: 0\r\n\r\n'],
      ['a NUL in a header value', 'HTTP/1.1 200 OK\r\nx-a: 1\u0000\r\ncontent-length: 0\r\n\r\n'],
      ['obsolete line folding', 'HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\ncontent-length: 0\r\n\r\n'],
      ['a Content-Length that is not a number', 'HTTP/1.1 200 OK\r\ncontent-length: 12abc\r\n\r\n'],
      ['two equal Content-Length fields', 'HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 3\r\n\r\nabc'],
      ['Content-Length values that disagree', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nabc'],
      ['a 101 the client never asked for', 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n'],
    ];
    it.each(cases)('refuses %s, and never reuses the connection', async (_name, response) => {
      const server = await rawServer((s, _r, i) => s.write(i === 0 ? response : ok('fine')));
      const c = client(server.port);
      const r = await send(c);
      expect(r.error?.code).toBe('invalid_response');
      expect(r.status).toBeUndefined();
      expect((await send(c)).body.toString()).toBe('fine');
      expect(server.accepted).toBe(2);
    });

    const bodyCases: [string, string][] = [
      ['a chunk size that is not hexadecimal', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n'],
      ['a chunk size followed by whitespace', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n'],
      ['a chunk extension that is not a token', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3;a b\r\nabc\r\n0\r\n\r\n'],
      ['a trailer line without a colon', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nbroken\r\n\r\n'],
      ['a chunk without its CRLF', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n'],
      ['a chunk-size line that never ends', `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${'1'.repeat(5000)}`],
    ];
    it.each(bodyCases)('fails a body with %s after its head, and never reuses the connection', async (_name, response) => {
      const server = await rawServer((s, _r, i) => s.write(i === 0 ? response : ok('fine')));
      const c = client(server.port);
      const r = await send(c);
      expect(r.status).toBe(200);
      expect(r.error?.code).toBe('invalid_response');
      expect((await send(c)).body.toString()).toBe('fine');
      expect(server.accepted).toBe(2);
    });

    it('refuses a response head over the limit', async () => {
      const server = await rawServer((s) => s.write(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(2000)}\r\ncontent-length: 0\r\n\r\n`));
      const r = await send(client(server.port, { maxHeadBytes: 1024 }));
      expect(r.error?.code).toBe('invalid_response');
      expect(r.error?.message).toMatch(/exceeds 1024 bytes/);
    });

    it('does not reuse a connection that sent bytes after its response', async () => {
      const server = await rawServer((s, _r, i) => s.write(i === 0 ? `${ok('one')}HTTP/1.1 200 OK\r\n` : ok('two')));
      const c = client(server.port);
      expect((await send(c)).body.toString()).toBe('one');
      expect((await send(c)).body.toString()).toBe('two');
      expect(server.accepted).toBe(2);
    });

    it('fails a response whose connection ends inside the body', async () => {
      const server = await rawServer((s) => s.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort'));
      const r = await send(client(server.port));
      expect(r.status).toBe(200);
      expect(r.error?.code).toBe('connection_closed');
    });
  });

  describe('connections', () => {
    it('closes after Connection: close and after an HTTP/1.0 answer', async () => {
      const server = await rawServer((s, _r, i) =>
        s.write(i === 0 ? ok('a', 'connection: close\r\n') : i === 1 ? 'HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\nb' : ok('c')),
      );
      const c = client(server.port);
      expect((await send(c)).body.toString()).toBe('a');
      expect((await send(c)).body.toString()).toBe('b');
      expect((await send(c)).body.toString()).toBe('c');
      expect(server.accepted).toBe(3);
    });

    it('drops idle connections after keepAliveMs, and never keeps one the backend times out within a second', async () => {
      const server = await rawServer((s, _r, i) => s.write(ok('x', i === 1 ? 'keep-alive: timeout=1\r\n' : '')));
      const c = client(server.port, { keepAliveMs: 100 });
      await send(c);
      expect(c.connections).toBe(1);
      await expect.poll(() => c.connections, { timeout: 2_000 }).toBe(0);
      await send(c);
      await expect.poll(() => c.connections).toBe(0);
      expect(server.accepted).toBe(2);
    });

    it('opens a new connection when the backend closed an idle one', async () => {
      const server = await rawServer((s) => {
        s.write(ok('x'));
        setTimeout(() => s.end(), 5);
      });
      const c = client(server.port);
      await send(c);
      await expect.poll(() => c.connections).toBe(0);
      expect((await send(c)).error).toBeUndefined();
      expect(server.accepted).toBe(2);
    });

    it('keeps to the connection limit, serving waiting requests in turn', async () => {
      const server = await rawServer((s, _r, i) => setTimeout(() => s.write(ok(`r${i}`)), 20));
      const c = client(server.port, { connections: 1 });
      const results = await Promise.all([send(c), send(c), send(c)]);
      expect(results.map((r) => r.body.toString())).toEqual(['r0', 'r1', 'r2']);
      expect(server.accepted).toBe(1);
    });

    it('never sends a request aborted while it waited for a connection, and serves the next one', async () => {
      let answerFirst!: () => void;
      const firstAnswered = new Promise<void>((resolve) => (answerFirst = resolve));
      const server = await rawServer((s, _r, i) => {
        if (i === 0) void firstAnswered.then(() => s.write(ok('first')));
        else s.write(ok(`r${i}`));
      });
      const c = client(server.port, { connections: 1 });
      const first = send(c);
      await expect.poll(() => server.requests.length).toBe(1);
      const abandoned = send(c);
      abandoned.abort();
      const third = send(c);
      answerFirst();
      expect((await first).body.toString()).toBe('first');
      expect((await third).body.toString()).toBe('r1');
      expect(server.requests).toHaveLength(2);
      // undici cannot take a request back from its queue: aborted, it is dropped when its turn
      // comes, by destroying the connection it was given.
      expect(server.accepted).toBe(undici() ? 2 : 1);
    });

    it('fails at once when the backend refuses connections, and every waiting request with it', async () => {
      const port = await new Promise<number>((resolve) => {
        const s = net.createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as net.AddressInfo).port;
          s.close(() => resolve(p));
        });
      });
      const c = client(port, { connections: 1 });
      const started = performance.now();
      const results = await Promise.all([send(c), send(c)]);
      expect(results.map((r) => r.error?.code)).toEqual(['connect_failed', 'connect_failed']);
      expect(results[0]!.error?.message).toMatch(/ECONNREFUSED/);
      expect(performance.now() - started).toBeLessThan(1_500);
    });

    it('times out a backend that accepts but never answers, and closes that connection', async () => {
      const server = await rawServer(() => undefined);
      const r = await send(client(server.port, { responseTimeoutMs: 150 }));
      expect(r.error?.code).toBe('response_timeout');
      await expect.poll(() => server.closedSockets).toBe(1);
    });

    it('times out a response body that goes silent', async () => {
      const server = await rawServer((s) => s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n'));
      const r = await send(client(server.port, { idleTimeoutMs: 150 }));
      expect(r.status).toBe(200);
      expect(r.body.toString()).toBe('hi');
      expect(r.error?.code).toBe('idle_timeout');
    });

    it('closes the backend connection when the exchange is aborted', async () => {
      const server = await rawServer((s) => s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n'));
      const c = client(server.port);
      const pending = send(c);
      await expect.poll(() => server.requests.length).toBe(1);
      pending.abort();
      await expect.poll(() => server.closedSockets).toBe(1);
      expect(c.connections).toBe(0);
    });
  });

  describe('request bodies', () => {
    it('sends a body of known length with its Content-Length', async () => {
      const server = await rawServer((s, r) => s.write(ok(`got ${r.body.length}`)));
      const c = client(server.port);
      const body = Readable.from([Buffer.from('{"jsonrpc":"2.0","id":1}')]);
      const r = await send(c, { method: 'POST', body, bodyLength: 24 });
      expect(r.body.toString()).toBe('got 24');
      expect(server.requests[0]!.head).toMatch(/\r\ncontent-length: 24$/);
      expect(server.requests[0]!.body.toString()).toBe('{"jsonrpc":"2.0","id":1}');
    });

    it('sends POST without a body with Content-Length: 0, and GET without one', async () => {
      const server = await rawServer((s) => s.write(ok('.')));
      const c = client(server.port);
      await send(c, { method: 'POST' });
      await send(c, { method: 'GET' });
      expect(server.requests[0]!.head).toMatch(/\r\ncontent-length: 0$/);
      expect(server.requests[1]!.head).not.toMatch(/content-length/);
    });

    it('streams a body of unknown length chunked, as it is written', async () => {
      const server = await rawServer((s, r) => s.write(ok(r.body.toString().toUpperCase())));
      const c = client(server.port);
      const body = new PassThrough();
      const pending = send(c, { method: 'POST', body, bodyLength: -1 });
      body.write('first ');
      await new Promise((resolve) => setTimeout(resolve, 20));
      body.end('second');
      const r = await pending;
      expect(r.body.toString()).toBe('FIRST SECOND');
      expect(server.requests[0]!.head).toMatch(/\r\ntransfer-encoding: chunked$/);
    });

    it('fails a chunked body over maxBodyBytes and closes the connection', async () => {
      const server = await rawServer((s) => s.write(ok('never')));
      const c = client(server.port);
      const body = new PassThrough();
      const pending = send(c, { method: 'POST', body, bodyLength: -1, maxBodyBytes: 10 });
      body.write('0123456789');
      body.write('x');
      const r = await pending;
      expect(r.error?.code).toBe('body_too_large');
      expect(c.connections).toBe(0);
    });
  });

  describe('flow control', () => {
    it('pauses reading while the handler is full and resumes on request, losing nothing', async () => {
      const big = Buffer.alloc(2 * 1024 * 1024, 'a');
      const server = await rawServer((s) => {
        s.write(`HTTP/1.1 200 OK\r\ncontent-length: ${big.length}\r\n\r\n`);
        s.write(big);
      });
      const c = client(server.port);
      let received = 0;
      let pauses = 0;
      await new Promise<void>((resolve, reject) => {
        const exchange = c.request(
          { method: 'GET', path: '/', headerLines: '', body: null, bodyLength: 0, maxBodyBytes: 0 },
          {
            onHead: () => undefined,
            onData(chunk) {
              received += chunk.length;
              pauses++;
              setTimeout(() => exchange.resume(), 1);
              return false;
            },
            onEnd: () => resolve(),
            onError: reject,
          },
        );
      });
      expect(received).toBe(big.length);
      expect(pauses).toBeGreaterThan(1);
    });
  });

  describe('https backends', () => {
    it('speaks HTTP/1.1 over TLS, verifying the certificate', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backend-tls-'));
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=localhost',
          '-addext',
          'subjectAltName=DNS:localhost,IP:127.0.0.1',
          '-keyout',
          path.join(dir, 'key.pem'),
          '-out',
          path.join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      const key = fs.readFileSync(path.join(dir, 'key.pem'));
      const cert = fs.readFileSync(path.join(dir, 'cert.pem'));
      fs.rmSync(dir, { recursive: true, force: true });
      const server = await rawServer((s) => s.write(ok('secure')), { tls: { key, cert } });

      const trusted = client(server.port, { tls: { ca: cert } }, 'https');
      expect((await send(trusted)).body.toString()).toBe('secure');
      expect((await send(trusted)).body.toString()).toBe('secure');
      expectReused(server);

      const untrusted = await send(client(server.port, {}, 'https'));
      expect(untrusted.error?.code).toBe('connect_failed');
      expect(untrusted.error?.message).toMatch(/self[- ]signed|certificate/i);
    });
  });

  describe('issue 10 defects', () => {
    it('expires an idle connection that never served a request', async () => {
      const server = await rawServer((s) => s.write(ok('x')));
      const c = client(server.port, { keepAliveMs: 100 });
      // Aborted before the connection is up: the connection then goes idle without ever serving.
      send(c).abort();
      await expect.poll(() => server.accepted).toBe(1);
      await expect.poll(() => c.connections, { timeout: 2_000 }).toBe(0);
    });

    it('refuses a transfer coding other than chunked (we never send TE), and never reuses the connection', async () => {
      const server = await rawServer((s, _r, i) =>
        s.write(i === 0 ? 'HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n' : ok('fine')),
      );
      const c = client(server.port);
      const r = await send(c);
      expect(r.error?.code).toBe('invalid_response');
      expect(r.error?.message).toMatch(/transfer coding/i);
      expect(r.status).toBeUndefined();
      expect((await send(c)).body.toString()).toBe('fine');
      expect(server.accepted).toBe(2);
    });

    it('does not count time paused for a slow client against the idle timeout', async () => {
      const server = await rawServer((s) =>
        s.write(`HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nab`, () => setTimeout(() => s.write('cd'), 20)),
      );
      const c = client(server.port, { idleTimeoutMs: 100 });
      const result = await new Promise<{ body: string; error?: BackendError }>((resolve) => {
        let body = '';
        const exchange = c.request(
          { method: 'GET', path: '/', headerLines: '', body: null, bodyLength: 0, maxBodyBytes: 0 },
          {
            onHead: () => undefined,
            onData(chunk) {
              body += chunk.toString();
              // The client is the slow side for three idle timeouts.
              setTimeout(() => exchange.resume(), 400);
              return false;
            },
            onEnd: () => resolve({ body }),
            onError: (error) => resolve({ body, error }),
          },
        );
      });
      expect(result.error).toBeUndefined();
      expect(result.body).toBe('abcd');
    });

    it('starts the response timeout when the request body has been sent, not while it uploads', async () => {
      const server = await rawServer((s, r) => s.write(ok(`got ${r.body.length}`)));
      const c = client(server.port, { responseTimeoutMs: 150 });
      const body = new PassThrough();
      const pending = send(c, { method: 'POST', body, bodyLength: 10 });
      body.write('01234');
      await new Promise((resolve) => setTimeout(resolve, 500));
      body.end('56789');
      const r = await pending;
      expect(r.error).toBeUndefined();
      expect(r.body.toString()).toBe('got 10');
    });

    it('refuses a response head with bare LF line endings at once, not at the response timeout', async () => {
      const server = await rawServer((s) => s.write('HTTP/1.1 200 OK\ncontent-length: 2\n\nok'));
      const r = await send(client(server.port, { responseTimeoutMs: 60_000 }));
      expect(r.error?.code).toBe('invalid_response');
      if (!undici()) expect(r.error?.message).toMatch(/bare LF/);
    });

    it('refuses a chunk-size line ended by a bare LF at once', async () => {
      const server = await rawServer((s) => s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\nok\n0\n\n'));
      const r = await send(client(server.port, { idleTimeoutMs: 60_000 }));
      expect(r.error?.code).toBe('invalid_response');
    });

    it('gives a request that waits for a free connection its own deadline', async () => {
      const server = await rawServer(() => undefined);
      const c = client(server.port, { connections: 1, responseTimeoutMs: 60_000, queueTimeoutMs: 150 });
      const stuck = send(c, { method: 'POST', body: new PassThrough(), bodyLength: 100 });
      await expect.poll(() => server.accepted).toBe(1);
      const queued = await send(c);
      expect(queued.error?.code).toBe('queue_timeout');
      stuck.abort();
    });
  });
});
