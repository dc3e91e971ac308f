// The gateway's streaming proxy against real backends (SDK-built MCP servers with a few raw
// routes): routing, credentials, headers, path containment, limits, failures, streaming both
// ways, disconnects, CORS, local handlers, and the gateway's own documents.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewaySurface } from '../../edge/gateway/index.ts';
import { startListener, type Listener } from '../../edge/http/listener.ts';
import { GATEWAY_KEY, startGatewayEnv, type GatewayEnv } from '../support/gateway-env.ts';
import { obtainTokens, rawRequest } from '../support/gateway-flow.ts';
import { rawExchange } from '../support/raw-http.ts';

let env: GatewayEnv;
const logs: string[] = [];
let alphaToken: string;

beforeAll(async () => {
  env = await startGatewayEnv({
    env: { GATEWAY_MAX_BODY_BYTES: '4096', GATEWAY_RESPONSE_TIMEOUT_MS: '1500', BODY_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '5000' },
    logs,
  });
  alphaToken = String((await obtainTokens(env.base, 'alpha')).access_token);
}, 120_000);

afterAll(async () => {
  await env?.stop();
});

interface Echo {
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  body: string;
}

async function echo(path: string, init: RequestInit = {}): Promise<{ res: Response; echo: Echo }> {
  const res = await fetch(`${env.base}${path}`, init);
  expect(res.status).toBe(200);
  return { res, echo: (await res.json()) as Echo };
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('routing', () => {
  it("forwards the path and query under the backend's base path", async () => {
    const { echo: e } = await echo('/open/echo/a/b%20c?x=1&y=%2F&x=2', { method: 'POST', body: 'hello' });
    expect(e.url).toBe('/raw/echo/a/b%20c?x=1&y=%2F&x=2');
    expect(e.method).toBe('POST');
    expect(e.body).toBe('hello');
  });

  it('routes /{server} and /{server}/ to the base path itself', async () => {
    const before = env.alpha.seen.length;
    await fetch(`${env.base}/open`);
    await fetch(`${env.base}/open/`);
    const urls = env.alpha.seen.slice(before).map((s) => s.url);
    expect(urls).toEqual(['/raw', '/raw/']);
  });

  it('proxies GET, POST, PUT and DELETE, and refuses other methods', async () => {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const { echo: e } = await echo('/open/echo/m', { method });
      expect(e.method).toBe(method);
    }
    const patch = await fetch(`${env.base}/open/echo/m`, { method: 'PATCH' });
    expect(patch.status).toBe(405);
    expect(patch.headers.get('allow')).toContain('POST');
  });

  it('answers an unknown server with a JSON 404 and a malformed name with a 422', async () => {
    const unknown = await fetch(`${env.base}/nosuch/mcp`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'unknown_server', detail: 'No MCP server named nosuch is registered on this gateway.' });
    for (const name of ['bad%24name', 'a%20b', 'x%2Fy', '%C3%A9t%C3%A9']) {
      const res = await fetch(`${env.base}/${name}/mcp`);
      expect(res.status, name).toBe(422);
      const body = (await res.json()) as { detail: { type: string; loc: unknown[] }[] };
      expect(body.detail[0]).toMatchObject({ type: 'string_pattern_mismatch', loc: ['path', 'server_name'] });
    }
  });

  it.each([
    '/open/../alpha/mcp',
    '/open/%2e%2e/secret',
    '/open/%2E%2E%2Fsecret',
    '/open/a/%252e%252e/%252e%252e/secret',
    '/open/a/..%2f..%2fsecret',
    '/open/a\\..\\secret',
    '/open/a/%5c../secret',
    '/open/./echo',
    '/open/echo/%00',
    '/open/echo/%zz',
    '/open/%25252e%25252e/x',
  ])('keeps %s inside the base path (422, nothing forwarded)', async (path) => {
    const before = env.alpha.seen.length;
    const res = await rawRequest(env.base, 'GET', path);
    expect(res.status).toBe(422);
    expect(JSON.parse(res.body).detail[0]).toMatchObject({ loc: ['path', 'path'], type: 'value_error' });
    expect(env.alpha.seen.length).toBe(before);
  });

  it('forwards dots that are not path segments', async () => {
    const { echo: e } = await echo('/open/echo/v1.2/file..txt/.hidden');
    expect(e.url).toBe('/raw/echo/v1.2/file..txt/.hidden');
  });
});

describe('credentials', () => {
  it('challenges a request without credentials to a server that uses OAuth', async () => {
    const res = await fetch(`${env.base}/alpha/mcp`, { method: 'POST', headers: MCP_HEADERS, body: INIT });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${env.base}/.well-known/oauth-protected-resource/alpha/mcp", scope="openid offline_access mcp"`,
    );
    expect(await res.json()).toMatchObject({ error: 'unauthorized' });
  });

  it('passes Authorization through unchanged for the backend to check', async () => {
    const { echo: e } = await echo('/alpha/raw/echo', { headers: { authorization: 'Bearer some-user-token' } });
    expect(e.headers.authorization).toBe('Bearer some-user-token');
  });

  it('lets a valid X-Gateway-Key through, strips it, and says so to the backend', async () => {
    const { echo: e } = await echo('/alpha/raw/echo', { headers: { 'x-gateway-key': GATEWAY_KEY, 'x-gateway-authenticated': 'forged' } });
    expect(e.headers['x-gateway-key']).toBeUndefined();
    expect(e.headers['x-gateway-authenticated']).toBe('key');
    const second = await echo('/alpha/raw/echo', { headers: { 'x-gateway-key': 'second-operator-key-0123456789' } });
    expect(second.echo.headers['x-gateway-authenticated']).toBe('key');
  });

  it('refuses a wrong X-Gateway-Key even with a bearer token', async () => {
    const before = env.alpha.seen.length;
    for (const key of ['wrong', `${GATEWAY_KEY}x`, GATEWAY_KEY.slice(0, -1), '']) {
      const res = await fetch(`${env.base}/alpha/raw/echo`, { headers: { 'x-gateway-key': key, authorization: 'Bearer t' } });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'invalid_gateway_key' });
    }
    expect(env.alpha.seen.length).toBe(before);
  });

  it('never treats Mcp-Session-Id as authentication', async () => {
    const init = await fetch(`${env.base}/alpha/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${alphaToken}` },
      body: INIT,
    });
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id')!;
    expect(session).toBeTruthy();
    await init.body?.cancel();
    const res = await fetch(`${env.base}/alpha/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
  });

  it("rewrites a backend's 401 challenge to the gateway's metadata, keeping its error", async () => {
    const res = await fetch(`${env.base}/alpha/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: 'Bearer not.a.token' },
      body: INIT,
    });
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toContain(`resource_metadata="${env.base}/.well-known/oauth-protected-resource/alpha/mcp"`);
    expect(challenge).toContain('error="invalid_token"');
    expect(challenge).not.toContain(env.alpha.url);
  });

  it("rewrites a backend's 403 insufficient_scope challenge, keeping its scopes", async () => {
    const res = await fetch(`${env.base}/alpha/raw/status/403`, { headers: { 'x-gateway-key': GATEWAY_KEY } });
    expect(res.status).toBe(403);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="mcp admin"');
    expect(challenge).toContain(`resource_metadata="${env.base}/.well-known/oauth-protected-resource/alpha/mcp"`);
  });

  it('refuses a token minted for another resource (the backend checks the audience)', async () => {
    const res = await fetch(`${env.base}/beta/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${alphaToken}` },
      body: INIT,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain(`${env.base}/.well-known/oauth-protected-resource/beta/mcp`);
  });

  it('never logs the gateway key or authorization headers', async () => {
    await fetch(`${env.base}/alpha/raw/echo?probe=logs`, {
      headers: { 'x-gateway-key': GATEWAY_KEY, authorization: 'Bearer secret-bearer-value' },
    });
    await fetch(`${env.base}/alpha/raw/echo`, { headers: { 'x-gateway-key': 'wrong-key-value-123' } });
    const all = logs.join('\n');
    expect(all).toContain('/alpha/raw/echo');
    expect(all).not.toContain(GATEWAY_KEY);
    expect(all).not.toContain('wrong-key-value-123');
    expect(all).not.toContain('secret-bearer-value');
  });
});

describe('headers', () => {
  it('passes the MCP headers, sets X-Forwarded-*, and drops hop-by-hop headers', async () => {
    // A raw request: fetch would refuse to send a Connection header.
    const res = await rawRequest(env.base, 'GET', '/open/echo', {
      'mcp-session-id': 'sess-1',
      'mcp-protocol-version': '2025-06-18',
      'last-event-id': 'ev-42',
      'x-forwarded-for': '6.6.6.6',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'gopher',
      connection: 'x-private-hop',
      'x-private-hop': 'do not forward',
      'x-custom': 'kept',
    });
    const e = JSON.parse(res.body) as Echo;
    expect(e.headers['mcp-session-id']).toBe('sess-1');
    expect(e.headers['mcp-protocol-version']).toBe('2025-06-18');
    expect(e.headers['last-event-id']).toBe('ev-42');
    expect(e.headers['x-custom']).toBe('kept');
    expect(e.headers['x-private-hop']).toBeUndefined();
    expect(e.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(e.headers['x-forwarded-host']).toBe(new URL(env.base).host);
    expect(e.headers['x-forwarded-proto']).toBe('http');
    expect(e.headers['x-forwarded-prefix']).toBe('/open');
    expect(e.headers.host).toBe(new URL(env.alpha.url).host);
    expect(e.headers['x-request-id']).toBeTruthy();
  });

  it('takes X-Forwarded-Host from the configured public URL, never from Host', async () => {
    const res = await rawRequest(env.base, 'GET', '/open/echo', { host: 'attacker.example' });
    expect(JSON.parse(res.body).headers['x-forwarded-host']).toBe(new URL(env.base).host);
  });

  it('drops request header names with underscores, as nginx does', async () => {
    // CGI/WSGI-style backends map X_Forwarded_For and X-Forwarded-For to the same variable, so an
    // underscore spelling would pass for a header the gateway sets and backends trust.
    const res = await rawRequest(env.base, 'GET', '/open/echo', {
      X_Gateway_Authenticated: 'key',
      X_Forwarded_For: '6.6.6.6',
      x_custom_value: 'dropped',
      'x-custom-value': 'kept',
    });
    const e = JSON.parse(res.body) as Echo;
    expect(Object.keys(e.headers).filter((name) => name.includes('_'))).toEqual([]);
    expect(e.headers['x-custom-value']).toBe('kept');
    expect(e.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(e.headers['x-gateway-authenticated']).toBeUndefined();
  });

  it("replaces a client's X-Request-Id with the gateway's one instead of adding a second", async () => {
    for (const given of ['client-id-1', 'not a valid id']) {
      const before = env.alpha.seen.length;
      const res = await rawRequest(env.base, 'GET', '/open/echo', { 'x-request-id': given });
      const seen = env.alpha.seen.slice(before).find((r) => r.url === '/raw/echo')!;
      const ids = seen.rawHeaders.filter((_v, i) => i % 2 === 0 && seen.rawHeaders[i].toLowerCase() === 'x-request-id');
      expect(ids.length, given).toBe(1);
      expect(seen.headers['x-request-id']).toBe(res.headers['x-request-id']);
    }
  });

  it("passes response headers but drops the backend's hop-by-hop ones", async () => {
    const res = await rawRequest(env.base, 'GET', '/open/echo');
    expect(res.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(res.headers['x-backend-hop']).toBeUndefined();
    expect(res.headers['keep-alive']).not.toBe('timeout=5');
    expect(res.headers['x-accel-buffering']).toBe('no');
  });
});

describe('failures and limits', () => {
  it('answers 502 with a JSON error when the backend is down', async () => {
    const res = await fetch(`${env.base}/down/mcp`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ error: 'bad_gateway', detail: 'Server down is unreachable.' });
  });

  it('answers 504 when the backend does not answer in time, and closes the backend request', async () => {
    const res = await fetch(`${env.base}/open/hang`);
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ error: 'gateway_timeout' });
    await env.alpha.hangClosed;
  });

  it('refuses a declared body over the limit with 413 without contacting the backend', async () => {
    const before = env.alpha.seen.length;
    const res = await rawRequest(env.base, 'POST', '/open/upload', { 'content-type': 'application/octet-stream' }, Buffer.alloc(5000));
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ error: 'payload_too_large' });
    expect(env.alpha.seen.length).toBe(before);
  });

  it('refuses a chunked body that grows over the limit with 413', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(env.base);
      const req = http.request({ host: u.hostname, port: u.port, method: 'POST', path: '/open/upload', agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      for (let i = 0; i < 4; i++) req.write(Buffer.alloc(2000));
      req.end();
    });
    expect(status).toBe(413);
  });

  it('answers a proxied upload whose body stops arriving with 408, and closes the connection', async () => {
    const { hostname, port } = new URL(env.base);
    const before = env.alpha.seen.length;
    const cutBefore = env.alpha.uploadsCutShort;
    const reply = await rawExchange(
      hostname,
      Number(port),
      'POST /open/upload HTTP/1.1\r\nhost: gw\r\ncontent-length: 1000\r\n\r\nfirst bytes',
    );
    expect(reply.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(reply.text).toContain('"error":"request_timeout"');
    expect(reply.closed).toBe(true);
    // The backend had the request, and is not left waiting for the rest: its request is closed.
    expect(env.alpha.seen.slice(before).some((r) => r.url === '/raw/upload')).toBe(true);
    while (env.alpha.uploadsCutShort === cutBefore) await new Promise((r) => setTimeout(r, 20));
    // ... because the gateway closed it, not because its own response deadline ran out later.
    const requestId = /x-request-id: ([^\r]+)/i.exec(reply.text)![1];
    expect(logs.filter((line) => line.includes(requestId) && line.includes('"code":"response_timeout"'))).toEqual([]);
    const res = await fetch(`${env.base}/open/echo`);
    expect(res.status).toBe(200);
  });

  it("passes the backend's 404 for an unknown session through unchanged", async () => {
    const res = await fetch(`${env.base}/alpha/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${alphaToken}`, 'mcp-session-id': 'no-such-session' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
  });
});

describe('streaming', () => {
  it('forwards SSE events one by one, as the backend writes them', async () => {
    const res = await fetch(`${env.base}/open/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    // The backend says so too: the client must see one value, not `no, no`.
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    await env.alpha.eventsOpened;
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    const until = async (needle: string) => {
      while (!received.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${needle}`);
        received += decoder.decode(value, { stream: true });
      }
    };
    // Each event is written only after the previous one reached the client: a buffering proxy
    // would hold the first and the test would never get to send the second.
    await until(': open');
    for (const n of [1, 2, 3]) {
      env.alpha.sendEvent(`event-${n}`);
      await until(`data: event-${n}\n\n`);
    }
    await reader.cancel();
    // The client went away: the backend's stream is closed too.
    await env.alpha.eventsClosed;
  });

  it('streams a request body to the backend as it is sent', async () => {
    const u = new URL(env.base);
    let firstSeen!: () => void;
    const first = new Promise<void>((r) => (firstSeen = r));
    env.alpha.onUploadChunk = () => firstSeen();
    const response = new Promise<string>((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, method: 'POST', path: '/open/upload', agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.write('first chunk;');
      // The second chunk is sent only once the backend has the first: a buffering proxy would wait forever.
      void first.then(() => req.end('second chunk'));
    });
    expect(JSON.parse(await response)).toEqual({ bytes: 'first chunk;second chunk'.length });
    env.alpha.onUploadChunk = undefined;
  });
});

describe('CORS', () => {
  it('answers preflights for MCP requests from browser clients', async () => {
    const res = await fetch(`${env.base}/alpha/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://localhost:6274',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const allowed = res.headers
      .get('access-control-allow-headers')!
      .split(',')
      .map((h) => h.trim());
    expect(allowed).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']),
    );
    expect(res.headers.get('access-control-allow-methods')).toContain('DELETE');
  });

  it('exposes WWW-Authenticate and Mcp-Session-Id on responses, errors included', async () => {
    const challenged = await fetch(`${env.base}/alpha/mcp`, { method: 'POST', headers: { origin: 'http://localhost:6274' } });
    expect(challenged.status).toBe(401);
    expect(challenged.headers.get('access-control-allow-origin')).toBe('*');
    expect(challenged.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate/);
    expect(challenged.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/);
    const proxied = await fetch(`${env.base}/open/echo`, { headers: { origin: 'http://localhost:6274' } });
    // The backend's own CORS answer is replaced by the gateway's.
    expect(proxied.headers.get('access-control-allow-origin')).toBe('*');
    expect(proxied.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/);
  });
});

describe('local servers and the Brain', () => {
  it('challenges the Brain with metadata naming the platform authorization server, then the facade in front of it', async () => {
    const res = await fetch(`${env.base}/brain/mcp`, { method: 'POST', headers: MCP_HEADERS, body: INIT });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain(`resource_metadata="${env.base}/.well-known/oauth-protected-resource/brain/mcp"`);
    const prm = (await (await fetch(`${env.base}/.well-known/oauth-protected-resource/brain/mcp`)).json()) as Record<string, unknown>;
    expect(prm.resource).toBe(`${env.base}/brain/mcp`);
    expect(prm.authorization_servers).toEqual([env.platform.ctx.config.publicUrls.auth, `${env.base}/brain`]);
  });

  it('serves a mounted local handler in-process, with the key checked and stripped', async () => {
    const ctx = env.platform.ctx;
    const seen: { path: string; search: string; auth: string; key?: string }[] = [];
    const surface = createGatewaySurface(ctx, {
      localHandlers: {
        brain: ({ res, path, search, auth, req }) => {
          seen.push({ path, search, auth, key: req.headers['x-gateway-key'] as string | undefined });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"local":true}');
        },
      },
    });
    let listener: Listener | undefined;
    try {
      listener = await startListener(surface, { host: '127.0.0.1', port: 0, logger: ctx.logger });
      const keyed = await fetch(`${listener.url}/brain/mcp?x=1`, { method: 'POST', headers: { 'x-gateway-key': GATEWAY_KEY } });
      expect(await keyed.json()).toEqual({ local: true });
      const bearer = await fetch(`${listener.url}/brain/mcp`, { method: 'POST', headers: { authorization: 'Bearer t' } });
      expect(bearer.status).toBe(200);
      const none = await fetch(`${listener.url}/brain/mcp`, { method: 'POST' });
      expect(none.status).toBe(401);
      expect(seen).toEqual([
        { path: '/mcp', search: '?x=1', auth: 'gateway-key', key: undefined },
        { path: '/mcp', search: '', auth: 'bearer', key: undefined },
      ]);
      expect(() => surface.registry.mountLocal('alpha', () => undefined)).toThrow(/backend URL/);
      expect(() => surface.registry.mountLocal('nosuch', () => undefined)).toThrow(/no MCP server/);
    } finally {
      await listener?.close(0);
    }
  });

  it('answers 503 for a local server while no handler is mounted', async () => {
    const ctx = env.platform.ctx;
    const listener = await startListener(createGatewaySurface(ctx), { host: '127.0.0.1', port: 0, logger: ctx.logger });
    try {
      const res = await fetch(`${listener.url}/brain/mcp`, { method: 'POST', headers: { authorization: 'Bearer t' } });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ error: 'backend_unavailable' });
    } finally {
      await listener.close(0);
    }
  });
});

describe('documents', () => {
  it('serves its OpenAPI 3.1.0 document, version 0.3.0, with every operation', async () => {
    const doc = (await (await fetch(`${env.base}/openapi.json`)).json()) as Record<string, any>;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('0.3.0');
    const ops: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(item)) ops.push(`${method.toUpperCase()} ${path}`);
    }
    expect(ops).toEqual(
      expect.arrayContaining([
        'GET /health',
        'GET /.well-known/oauth-protected-resource',
        'GET /.well-known/oauth-authorization-server',
        'GET /.well-known/openid-configuration',
        'GET /{server_name}/.well-known/oauth-protected-resource',
        'GET /{server_name}/.well-known/oauth-authorization-server',
        'GET /{server_name}/.well-known/openid-configuration',
        'GET /.well-known/oauth-authorization-server/{server_path}',
        'GET /.well-known/openid-configuration/{server_path}',
        'GET /.well-known/oauth-protected-resource/{server_path}',
        'POST /{server_name}/oauth/register',
        'GET /{server_name}/oauth/authorize',
        'GET /{server_name}/oauth/callback',
        'POST /{server_name}/oauth/token',
        'GET /{server_name}/{path}',
        'POST /{server_name}/{path}',
        'PUT /{server_name}/{path}',
        'DELETE /{server_name}/{path}',
      ]),
    );
    for (const name of ['DCRRequest', 'DCRResponse', 'HTTPValidationError', 'ValidationError']) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    expect(doc.components.schemas.DCRRequest.required).toEqual(['redirect_uris']);
    expect(doc.components.schemas.DCRRequest.properties.redirect_uris.minItems).toBe(1);
    expect(doc.components.schemas.HTTPValidationError.properties.detail.items).toEqual({ $ref: '#/components/schemas/ValidationError' });
    expect(doc.components.securitySchemes.BearerToken).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(doc.components.securitySchemes.GatewayKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Gateway-Key' });
    expect(doc.components.securitySchemes.OAuth2.flows.authorizationCode).toMatchObject({
      authorizationUrl: `${env.base}/alpha/oauth/authorize`,
      tokenUrl: `${env.base}/alpha/oauth/token`,
    });
    expect(Object.keys(doc.components.securitySchemes.OAuth2.flows.authorizationCode.scopes)).toEqual([
      'openid',
      'profile',
      'email',
      'offline_access',
    ]);
    // §5: the proxy declares BearerToken or GatewayKey; nothing else declares a requirement.
    for (const m of ['get', 'post', 'put', 'delete']) {
      expect(doc.paths['/{server_name}/{path}'][m].security).toEqual([{ BearerToken: [] }, { GatewayKey: [] }]);
    }
    expect(doc.paths['/{server_name}/oauth/token'].post.security).toBeUndefined();
    expect(doc.security).toBeUndefined();
    // §4.1 rule 7: the 422 of every operation with parameters is an HTTPValidationError.
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        if (op.parameters?.length || op.requestBody) {
          expect(op.responses['422']?.content['application/json'].schema, `${method} ${path}`).toEqual({
            $ref: '#/components/schemas/HTTPValidationError',
          });
        }
      }
    }
    expect(doc.paths['/{server_name}/oauth/register'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/DCRRequest',
    });
    expect(doc.paths['/{server_name}/oauth/token'].post.requestBody.content).toHaveProperty(['application/x-www-form-urlencoded']);
  });

  it('serves an interactive reference at /docs with every asset from the gateway itself', async () => {
    const res = await fetch(`${env.base}/docs`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(2);
    for (const ref of refs) {
      expect(ref.startsWith('/docs/')).toBe(true);
      const asset = await fetch(`${env.base}${ref}`);
      expect(asset.status, ref).toBe(200);
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    const init = await (await fetch(`${env.base}/docs/assets/init.js`)).text();
    expect(init).toContain('"/openapi.json"');
    expect((await fetch(`${env.base}/docs/assets/nope.js`)).status).toBe(404);
  });
});
