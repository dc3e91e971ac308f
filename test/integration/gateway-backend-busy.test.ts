// The gateway in front of backends that hold their connections (stuck uploads, silence) or answer
// with bare LF line endings: a request that finds every backend connection busy waits at most
// GATEWAY_BACKEND_QUEUE_TIMEOUT_MS and gets a 503 with Retry-After, and a bare-LF answer is a
// 502 at once, long before the response timeout.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

const backends: net.Server[] = [];
let stuck: number;
let bareLf: number;

/** A backend that reads whatever comes and answers with `answer` once a request head is in (or never). */
async function rawBackend(answer: string | undefined): Promise<number> {
  const server = net.createServer((socket) => {
    let head = '';
    socket.on('data', (chunk) => {
      head += chunk.toString('latin1');
      if (answer !== undefined && head.includes('\r\n\r\n')) socket.write(answer);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  backends.push(server);
  return (server.address() as net.AddressInfo).port;
}

beforeAll(async () => {
  stuck = await rawBackend(undefined);
  bareLf = await rawBackend('HTTP/1.1 200 OK\ncontent-length: 2\n\nok');
});

afterAll(() => {
  for (const s of backends) s.close();
});

describe.each(['builtin', 'undici'])('with GATEWAY_BACKEND_CLIENT=%s', (backendClient) => {
  let platform: TestPlatform;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-busy-'));
    const serversFile = path.join(dir, 'servers.yaml');
    fs.writeFileSync(
      serversFile,
      `default_server: stuck
servers:
  - name: stuck
    url: http://127.0.0.1:${stuck}/
  - name: bare
    url: http://127.0.0.1:${bareLf}/
`,
    );
    platform = await startTestPlatform({
      GATEWAY_SERVERS_FILE: serversFile,
      GATEWAY_BACKEND_CLIENT: backendClient,
      GATEWAY_BACKEND_CONNECTIONS: '1',
      GATEWAY_BACKEND_QUEUE_TIMEOUT_MS: '200',
      GATEWAY_RESPONSE_TIMEOUT_MS: '600000',
    });
    base = platform.urls.gateway;
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers a request that waited for a connection with 503 and Retry-After, while an upload holds the only one', async () => {
    // An upload that never finishes holds the backend's only connection.
    const upload = http.request(`${base}/stuck/mcp`, { method: 'POST', headers: { 'content-length': '1000' } });
    upload.on('error', () => undefined);
    upload.write('{"jsonrpc":');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const res = await fetch(`${base}/stuck/mcp`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(await res.json()).toMatchObject({ error: 'backend_busy' });
    upload.destroy();
  });

  it('answers a bare-LF backend with a 502 at once, not a 504 at the response timeout', async () => {
    const res = await fetch(`${base}/bare/mcp`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ error: 'bad_gateway' });
  });
});
