import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startListener, type Listener } from '../../edge/http/listener.ts';
import { createProblemSurface } from '../../edge/http/problem-surface.ts';
import { readBody, sendJson } from '../../edge/http/respond.ts';
import { rawExchange, trickle } from '../support/raw-http.ts';
import { Router } from '../../edge/http/router.ts';
import { createLogger } from '../../services/common/log.ts';

const logger = createLogger({ level: 'silent' });
let listener: Listener | undefined;
afterEach(async () => {
  await listener?.close(0);
  listener = undefined;
});

function router() {
  return new Router()
    .get('/slow', async ({ res }) => {
      await new Promise((r) => setTimeout(r, 300));
      sendJson(res, 200, { done: true });
    })
    .post('/echo', async ({ req, res }) => sendJson(res, 200, JSON.parse((await readBody(req, 16)).toString())))
    .get('/boom', () => {
      throw new Error('secret internals');
    })
    .get('/items/:id', ({ res, params }) => sendJson(res, 200, params))
    .get('/files/*rest', ({ res, params }) => sendJson(res, 200, params));
}

describe('listener', () => {
  it('finishes in-flight requests when closing, and refuses new connections', async () => {
    listener = await startListener(createProblemSurface('t', router(), logger), { host: '127.0.0.1', port: 0, logger });
    const inflight = fetch(`${listener.url}/slow`);
    await new Promise((r) => setTimeout(r, 50));
    const url = listener.url;
    const closing = listener.close(5_000);
    const res = await inflight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    await closing;
    listener = undefined;
    await expect(fetch(`${url}/slow`)).rejects.toThrow();
  });

  it('answers errors as problems without leaking internals', async () => {
    listener = await startListener(createProblemSurface('t', router(), logger), { host: '127.0.0.1', port: 0, logger });
    const boom = await fetch(`${listener.url}/boom`);
    expect(boom.status).toBe(500);
    expect(boom.headers.get('content-type')).toBe('application/problem+json');
    const body = await boom.json();
    expect(body).toMatchObject({ status: 500, title: 'Internal Server Error' });
    expect(JSON.stringify(body)).not.toContain('secret internals');

    const big = await fetch(`${listener.url}/echo`, { method: 'POST', body: JSON.stringify({ much: 'too long for sixteen' }) });
    expect(big.status).toBe(413);
    const missing = await fetch(`${listener.url}/nope`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { instance: string }).instance).toBe('/nope');
    const wrong = await fetch(`${listener.url}/echo`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
  });

  it('decodes parameters, keeps the rest raw, and echoes a sane request id', async () => {
    listener = await startListener(createProblemSurface('t', router(), logger), { host: '127.0.0.1', port: 0, logger });
    expect(await (await fetch(`${listener.url}/items/a%20b`)).json()).toEqual({ id: 'a b' });
    expect(await (await fetch(`${listener.url}/files/a/b%2Fc`)).json()).toEqual({ rest: 'a/b%2Fc' });
    const withId = await fetch(`${listener.url}/items/1`, { headers: { 'x-request-id': 'abc-123' } });
    expect(withId.headers.get('x-request-id')).toBe('abc-123');
    const traced = await fetch(`${listener.url}/items/1`, {
      headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    });
    expect(traced.headers.get('x-request-id')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    const hostile = await fetch(`${listener.url}/items/1`, { headers: { 'x-request-id': 'a\tb c' } });
    expect(hostile.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers a malformed HTTP request with 400', async () => {
    listener = await startListener(createProblemSurface('t', router(), logger), { host: '127.0.0.1', port: 0, logger });
    const { port } = new URL(listener.url);
    const reply = await new Promise<string>((resolve) => {
      const socket = new net.Socket();
      let data = '';
      socket.connect(Number(port), '127.0.0.1', () => socket.write('GARBAGE\r\n\r\n'));
      socket.on('data', (d: Buffer) => (data += d));
      socket.on('close', () => resolve(data));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400/);
  });
});

describe('slow and stuck request bodies', () => {
  // Small deadlines so that the outcomes come quickly; the tests wait for the outcome, with no
  // assertion on how long it took.
  const deadlines = { bodyTimeoutMs: 300, requestTimeoutMs: 1_500 };

  function streams() {
    return new Router()
      .post('/sink', async ({ req, res }) => sendJson(res, 200, { bytes: (await readBody(req, 1 << 20)).length }))
      .get('/events', async ({ res }) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        // Silent for longer than both deadlines, as an SSE stream between events is.
        await new Promise((r) => setTimeout(r, 2_000));
        res.end('data: second\n\n');
      })
      .post('/answer-then-stream', async ({ req, res }) => {
        await readBody(req, 1024);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        await new Promise((r) => setTimeout(r, 2_000));
        res.end('data: second\n\n');
      });
  }

  async function start() {
    listener = await startListener(createProblemSurface('t', streams(), logger), { host: '127.0.0.1', port: 0, logger, ...deadlines });
    return new URL(listener.url);
  }

  it('answers a request whose body never comes with 408 and closes the connection', async () => {
    const { hostname, port } = await start();
    const reply = await rawExchange(
      hostname,
      Number(port),
      'POST /sink HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"a":',
    );
    expect(reply.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(reply.text.toLowerCase()).toContain('connection: close');
    expect(reply.text).toContain('"status":408');
    expect(reply.closed).toBe(true);
  });

  it('ends a body that trickles in, byte by byte, past the total deadline', async () => {
    const { hostname, port } = await start();
    const reply = await trickle(hostname, Number(port), 'POST /sink HTTP/1.1\r\nhost: t\r\ncontent-length: 100000\r\n\r\n', 100);
    expect(reply.closed).toBe(true);
    // The deadline came long before the body could have: whatever was answered is a 408.
    expect(reply.text === '' || /^HTTP\/1\.1 408 /.test(reply.text)).toBe(true);
    expect(reply.bytesSent).toBeLessThan(100_000);
  });

  it('ends a chunked body that stops arriving', async () => {
    const { hostname, port } = await start();
    const reply = await rawExchange(
      hostname,
      Number(port),
      'POST /sink HTTP/1.1\r\nhost: t\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n',
    );
    expect(reply.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(reply.closed).toBe(true);
  });

  it('never cuts a streamed response or a long GET stream, however long it is silent', async () => {
    const { href } = await start();
    const get = await fetch(`${href}events`);
    expect(await get.text()).toBe('data: first\n\ndata: second\n\n');
    const post = await fetch(`${href}answer-then-stream`, { method: 'POST', body: '{}' });
    expect(await post.text()).toBe('data: first\n\ndata: second\n\n');
  });

  it('does not blame the client while the server itself is not reading (backpressure)', async () => {
    const router = new Router().post('/late', async ({ req, res }) => {
      // Longer than the idle deadline: the client's bytes wait in buffers, and Node stops
      // reading the socket once they are full.
      await new Promise((r) => setTimeout(r, 1_500));
      sendJson(res, 200, { bytes: (await readBody(req, 64 << 20)).length });
    });
    listener = await startListener(createProblemSurface('t', router, logger), {
      host: '127.0.0.1',
      port: 0,
      logger,
      bodyTimeoutMs: 300,
      requestTimeoutMs: 30_000,
    });
    const body = Buffer.alloc(16 << 20, 1);
    const res = await fetch(`${listener.url}/late`, { method: 'POST', body });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ bytes: body.length });
  });

  it('answers a head that never ends with 408, not 400, and closes the connection', async () => {
    listener = await startListener(createProblemSurface('t', streams(), logger), {
      host: '127.0.0.1',
      port: 0,
      logger,
      headersTimeoutMs: 300,
    });
    const { hostname, port } = new URL(listener.url);
    const reply = await rawExchange(hostname, Number(port), 'POST /sink HTTP/1.1\r\nhost: t\r\ncontent-le');
    expect(reply.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(reply.closed).toBe(true);
  });

  it('answers a head larger than Node accepts with 431', async () => {
    const { hostname, port } = await start();
    const reply = await rawExchange(hostname, Number(port), `GET / HTTP/1.1\r\nhost: t\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(reply.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(reply.closed).toBe(true);
  });

  it('lets a complete body through, on a connection kept alive for the next request', async () => {
    const { hostname, port } = await start();
    const body = '{"a":1}';
    const request = `POST /sink HTTP/1.1\r\nhost: t\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    const reply = await rawExchange(hostname, Number(port), request + request, {
      until: (text) => text.split('HTTP/1.1 200').length === 3,
    });
    expect(reply.text.split('HTTP/1.1 200').length).toBe(3);
  });
});
