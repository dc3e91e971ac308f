// Differential fuzzing of the gateway's backend client against Node's own HTTP client (llhttp):
// the same random and malformed responses, built from a seeded generator, go to both through a
// raw TCP server that writes them and closes; both must make the same accept/reject decision
// and, when they accept, hand over the same body bytes. Where the gateway is stricter by
// design, the case is an explicit, documented exception (STRICTER below): we must refuse it,
// llhttp may accept it. Any other disagreement fails with the response that caused it.
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createBackendClient, type BackendClient } from '../../edge/gateway/backend-client.ts';
import { seededRandom } from '../support/random.ts';

const SEED = 0x5eed_2026;
const CASES = 400;

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const chance = (r: Rand, p: number) => r() < p;

const STATUS_LINES = [
  'HTTP/1.1 200 OK',
  'HTTP/1.1 200 OK',
  'HTTP/1.1 200 OK',
  'HTTP/1.1 201 Created',
  'HTTP/1.1 404 Not Found',
  'HTTP/1.1 500 Internal Server Error',
  'HTTP/1.1 200',
  'HTTP/1.0 200 OK',
  'HTTP/1.1 204 No Content',
  'HTTP/1.1 304 Not Modified',
  'HTTP/1.1 299 Odd',
  'HTTP/1.1 099 Low',
  'HTTP/1.1 101 Switching Protocols',
  'HTTP/2 200 OK',
  'HTTP/1.1 20 OK',
  'HTTP/1.1 2000 OK',
  'HTTP/1.2 200 OK',
  'HTTP/1.1  200 OK',
  'http/1.1 200 OK',
  'HTTP/1.1 200 O\u0001K',
];
const PLAIN_HEADERS = [
  'content-type: application/json',
  'x-custom: a b c',
  'cache-control: no-cache',
  'x-empty:',
  'x-latin: caf\u00e9',
  'set-cookie: a=1',
  'mcp-session-id: 1f2e',
  'x-ows:   spaced   ',
];
const BAD_HEADERS = [
  'broken',
  'bad name: 1',
  'x-a : 1',
  ' x-folded: 1',
  'x-nul: a\u0000b',
  'x-ctl: a\u0001b',
  'x-del: a\u007fb',
  'x-cr: a\rb',
  ': no-name',
  'x-lf: a\nb',
];
const CHUNK_EXTS = ['', '', '', ';a', ';a=b', ';a="q v"', ';a=b;c', '; a', ';a b', ';a=', ' ', '\t;a'];
const TRAILERS = ['', '', 'x-sum: 1\r\n', 'x-a: 1\r\nx-b: 2\r\n', 'broken\r\n', 'x-ctl: \u0001\r\n'];
const TRANSFER_CODINGS = ['chunked', 'chunked', 'chunked', 'Chunked', 'gzip, chunked', 'gzip', 'identity', 'chunked, chunked'];

interface Case {
  bytes: Buffer;
}

function generate(r: Rand): Case {
  const body = Buffer.from(
    Array.from({ length: Math.floor(r() * 40) }, () => pick(r, ['a', 'b', '{', '"', ' ', '\n', '\r', '\u00ff'])).join(''),
    'latin1',
  );
  const lines = [chance(r, 0.6) ? 'HTTP/1.1 200 OK' : pick(r, STATUS_LINES)];
  for (let n = Math.floor(r() * 3); n > 0; n--) lines.push(pick(r, PLAIN_HEADERS));
  if (chance(r, 0.15)) lines.splice(1 + Math.floor(r() * lines.length), 0, pick(r, BAD_HEADERS));
  let payload: Buffer;
  const framing = pick(r, ['length', 'length', 'chunked', 'chunked', 'close', 'length-bad', 'both']);
  if (framing === 'length' || framing === 'length-bad') {
    const declared =
      framing === 'length'
        ? String(body.length)
        : pick(r, [
            String(body.length + 5),
            `+${body.length}`,
            `${body.length}x`,
            '',
            `${body.length}, ${body.length}`,
            `0${body.length}`,
            ` ${body.length} `,
          ]);
    lines.push(`content-length: ${declared}`);
    if (chance(r, 0.1)) lines.push(`content-length: ${pick(r, [String(body.length), String(body.length + 1)])}`);
    payload = body;
  } else if (framing === 'chunked' || framing === 'both') {
    lines.push(`transfer-encoding: ${pick(r, TRANSFER_CODINGS)}`);
    if (framing === 'both') lines.push(`content-length: ${body.length}`);
    payload = chunk(r, body);
  } else {
    payload = body;
  }
  const eol = chance(r, 0.05) ? '\n' : '\r\n';
  let head = `${lines.join(eol)}${eol}${eol}`;
  if (chance(r, 0.05)) head = head.replace('\r\n', '\n');
  let bytes = Buffer.concat([Buffer.from(head, 'latin1'), payload]);
  if (chance(r, 0.1)) bytes = bytes.subarray(0, Math.floor(r() * bytes.length));
  return { bytes };
}

function chunk(r: Rand, body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    const size = Math.min(body.length - at, 1 + Math.floor(r() * 12));
    const sizeText = chance(r, 0.05) ? pick(r, ['zz', '0x1', '-1', '']) : size.toString(16);
    const ext = chance(r, 0.3) ? pick(r, CHUNK_EXTS) : '';
    parts.push(
      Buffer.from(`${sizeText}${ext}\r\n`, 'latin1'),
      body.subarray(at, at + size),
      Buffer.from(chance(r, 0.03) ? 'X\r\n' : '\r\n', 'latin1'),
    );
    at += size;
  }
  parts.push(Buffer.from(`0${chance(r, 0.2) ? pick(r, CHUNK_EXTS) : ''}\r\n${chance(r, 0.3) ? pick(r, TRAILERS) : ''}\r\n`, 'latin1'));
  return Buffer.concat(parts);
}

/**
 * Where the gateway refuses what llhttp accepts, on purpose. Each returns why, or undefined.
 * The gateway relays what it accepts to clients it does not know, so it keeps to RFC 9112.
 */
const STRICTER: ((head: string) => string | undefined)[] = [
  // We never send TE, so chunked is the only transfer coding a backend may apply (RFC 9112 §7.4);
  // llhttp reads `gzip, chunked` as chunked and a lone `gzip` until close, passing gzip on.
  (head) => (/\r?\ntransfer-encoding:[ \t]*(?!chunked[ \t]*\r?\n)/i.test(head) ? 'a transfer coding other than chunked' : undefined),
  // A status code must start with 1-5..9 (RFC 9110 §15); llhttp takes any three digits.
  (head) => (/^HTTP\/1\.[01] 0\d\d/.test(head) ? 'a status code below 100' : undefined),
  // The reason phrase is relayed to clients: no control characters (RFC 9112 §4); llhttp takes them.
  (head) =>
    /^[^\r\n]*[\x00-\x08\x0a-\x1f\x7f][^\n]*\n/.test(head.slice(0, head.indexOf('\n') + 1))
      ? 'a control character in the status line'
      : undefined,
  // The gateway never asks to switch protocols; llhttp reports a 101 as a response.
  (head) => (/^HTTP\/1\.[01] 101/.test(head) ? 'a 101 nobody asked for' : undefined),
];

interface Outcome {
  accepted: boolean;
  body: Buffer;
  why: string;
}

let server: net.Server;
let port: number;
let current: Buffer = Buffer.alloc(0);
let ours: BackendClient;

beforeAll(async () => {
  server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => socket.end(current));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
  ours = createBackendClient({
    url: new URL(`http://127.0.0.1:${port}`),
    connections: 1,
    connectTimeoutMs: 5_000,
    responseTimeoutMs: 5_000,
    idleTimeoutMs: 5_000,
  });
});

afterAll(async () => {
  await ours.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function viaOurs(): Promise<Outcome> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    ours.request(
      { method: 'GET', path: '/', headerLines: '', body: null, bodyLength: 0, maxBodyBytes: 0 },
      {
        onHead: () => undefined,
        onData: (chunk) => {
          parts.push(Buffer.from(chunk));
          return true;
        },
        onEnd: () => resolve({ accepted: true, body: Buffer.concat(parts), why: 'complete' }),
        onError: (error) => resolve({ accepted: false, body: Buffer.concat(parts), why: error.message }),
      },
    );
  });
}

function viaLlhttp(): Promise<Outcome> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let done = false;
    const finish = (o: Outcome) => {
      if (!done) resolve(o);
      done = true;
    };
    let response: http.IncomingMessage | undefined;
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      response = res;
      res.on('data', (chunk: Buffer) => parts.push(chunk));
      res.on('end', () => finish({ accepted: res.complete, body: Buffer.concat(parts), why: res.complete ? 'complete' : 'incomplete' }));
      res.on('aborted', () => finish({ accepted: false, body: Buffer.concat(parts), why: 'aborted' }));
      res.on('error', (e) => finish({ accepted: false, body: Buffer.concat(parts), why: e.message }));
    });
    req.on('error', (e) => {
      // Bytes after a complete response (a body after a 204, say) fail llhttp's parse of the next
      // response; the response itself was complete, as the gateway's client also reports it
      // (and then never reuses the connection).
      if (response?.complete) {
        for (let c = response.read() as Buffer | null; c !== null; c = response.read() as Buffer | null) parts.push(c);
        return finish({ accepted: true, body: Buffer.concat(parts), why: `complete, then ${e.message}` });
      }
      finish({ accepted: false, body: Buffer.concat(parts), why: e.message });
    });
  });
}

it(`agrees with llhttp on ${CASES} generated responses, but for documented stricter rules`, async () => {
  const r = seededRandom(SEED);
  const disagreements: string[] = [];
  let accepted = 0;
  let excepted = 0;
  for (let i = 0; i < CASES; i++) {
    current = generate(r).bytes;
    const a = await viaOurs();
    const b = await viaLlhttp();
    if (a.accepted) accepted++;
    const text = JSON.stringify(current.toString('latin1'));
    if (a.accepted === b.accepted && (!a.accepted || a.body.equals(b.body))) continue;
    const head = current.toString('latin1');
    const reason = STRICTER.map((rule) => rule(head)).find(Boolean);
    if (reason && !a.accepted && b.accepted) {
      excepted++;
      continue;
    }
    disagreements.push(
      `case ${i} ${text}: ours ${a.accepted ? 'accepts' : 'refuses'} (${a.why}), llhttp ${b.accepted ? 'accepts' : 'refuses'} (${b.why})${a.accepted && b.accepted ? ` with bodies ${JSON.stringify(a.body.toString('latin1'))} / ${JSON.stringify(b.body.toString('latin1'))}` : ''}`,
    );
  }
  expect(disagreements).toEqual([]);
  // The generator must exercise both sides, and the exceptions must stay exceptions.
  expect(accepted).toBeGreaterThan(CASES / 4);
  expect(accepted).toBeLessThan(CASES - CASES / 10);
  expect(excepted).toBeLessThan(CASES / 5);
});
