// MCP backends for the gateway tests, built on the MCP SDK: Streamable HTTP servers (stateful
// with SSE responses, or stateless with JSON responses) behind the SDK's bearer middleware, which
// verifies the upstream IdP's JWT access tokens (issuer, audience, expiry). Each also serves a few
// raw routes, outside MCP, that let tests watch exactly what the gateway forwards and control
// when a streamed event is written.
import { randomUUID } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { statelessMcpHandler } from './stateless-mcp.ts';

export interface SeenRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
}

export interface McpBackend {
  url: string;
  /** Every request received, in order. */
  seen: SeenRequest[];
  /** Live MCP sessions (stateful backends). */
  sessions: Map<string, StreamableHTTPServerTransport>;
  /** The raw SSE stream at /raw/events: resolves when a client has it open. */
  eventsOpened: Promise<void>;
  /** Writes one SSE event on the open /raw/events stream. */
  sendEvent(data: string): void;
  /** Resolves when the /raw/events stream was closed by the other side (client disconnect). */
  eventsClosed: Promise<void>;
  /** Resolves when /raw/hang has been reached, and then when that request was closed. */
  hangReached: Promise<void>;
  hangClosed: Promise<void>;
  /** Called for each chunk /raw/upload receives. */
  onUploadChunk?: (chunk: Buffer) => void;
  /** Uploads to /raw/upload whose connection closed before their body was complete. */
  uploadsCutShort: number;
  close(): Promise<void>;
}

export interface McpBackendOptions {
  /** The IdP whose tokens the backend verifies; without it, the backend asks for no token. */
  issuer?: string;
  jwksUri?: string;
  /** The audience tokens must carry (the resource this backend is). */
  audience?: string;
  /** `sse`: stateful sessions answering with SSE streams; `json`: stateless JSON responses. */
  mode: 'sse' | 'json';
  name: string;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export async function startMcpBackend(options: McpBackendOptions): Promise<McpBackend> {
  const jwks = options.jwksUri ? createRemoteJWKSet(new URL(options.jwksUri)) : undefined;
  const seen: SeenRequest[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const opened = deferred();
  const closedEvents = deferred();
  const hangReached = deferred();
  const hangClosed = deferred();
  let eventsRes: http.ServerResponse | undefined;
  const hanging: http.ServerResponse[] = [];

  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      try {
        const { payload } = await jwtVerify(token, jwks!, { issuer: options.issuer, audience: options.audience });
        return {
          token,
          clientId: String(payload.client_id ?? ''),
          scopes: typeof payload.scope === 'string' ? payload.scope.split(' ') : [],
          expiresAt: payload.exp,
          extra: { sub: payload.sub, aud: payload.aud },
        };
      } catch (err) {
        throw new InvalidTokenError(`token rejected: ${(err as Error).message}`);
      }
    },
  };

  function buildServer(): McpServer {
    const server = new McpServer({ name: `test-${options.name}`, version: '1.0.0' });
    server.registerTool('whoami', { description: 'Who the token says the caller is', inputSchema: {} }, async (_args, extra) => ({
      content: [
        { type: 'text', text: JSON.stringify({ backend: options.name, sub: extra.authInfo?.extra?.sub, aud: extra.authInfo?.extra?.aud }) },
      ],
    }));
    server.registerTool('echo', { description: 'Echo', inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    server.registerTool(
      'count',
      { description: 'Sends n progress notifications', inputSchema: { n: z.number().int() } },
      async ({ n }, extra) => {
        const token = extra._meta?.progressToken;
        for (let i = 1; i <= n; i++) {
          if (token !== undefined) {
            await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n } });
          }
        }
        return { content: [{ type: 'text', text: `counted ${n}` }] };
      },
    );
    return server;
  }

  const app = createMcpExpressApp();
  let url = '';
  const auth = (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) =>
    !jwks
      ? next()
      : requireBearerAuth({ verifier, resourceMetadataUrl: `${url}/.well-known/oauth-protected-resource/mcp` })(
          req as never,
          res as never,
          next,
        );

  if (options.mode === 'json') {
    app.post('/mcp', auth, statelessMcpHandler(buildServer));
    app.all('/mcp', auth, (_req, res) => {
      res
        .status(405)
        .set('allow', 'POST')
        .json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
    });
  } else {
    app.all('/mcp', auth, async (req, res) => {
      const id = req.headers['mcp-session-id'];
      if (typeof id === 'string') {
        const transport = sessions.get(id);
        if (!transport) {
          res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
          return;
        }
        await transport.handleRequest(req, res, req.body);
        return;
      }
      if (req.method !== 'POST') {
        res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Mcp-Session-Id required' }, id: null });
        return;
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.set(sid, transport);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await buildServer().connect(transport);
      await transport.handleRequest(req, res, req.body);
    });
  }
  app.get('/.well-known/oauth-protected-resource/mcp', (_req, res) => {
    res.json({ resource: `${url}/mcp`, authorization_servers: [options.issuer] });
  });

  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers }, rawHeaders: [...req.rawHeaders] });
    const path = (req.url ?? '/').split('?')[0];
    if (path.startsWith('/raw/')) return raw(req, res, path);
    app(req, res);
  });

  function raw(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    if (path.startsWith('/raw/echo')) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.stringify({
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          // Hop-by-hop and CORS headers the gateway must not pass on as they are.
          connection: 'keep-alive, x-backend-hop',
          'x-backend-hop': 'secret-hop',
          'keep-alive': 'timeout=5',
          'access-control-allow-origin': 'https://backend.example',
          'set-cookie': ['a=1; Path=/', 'b=2; Path=/'],
        });
        res.end(body);
      });
      return;
    }
    if (path === '/raw/set-cookie') {
      // A hostile backend: sets whatever cookies the query names (`c`, repeated), verbatim, and
      // with `clear`, asks the browser to clear every cookie of the site.
      const query = new URL(req.url ?? '/', 'http://backend').searchParams;
      const headers: Record<string, string | string[] | number> = {
        'content-type': 'text/html',
        'set-cookie': query.getAll('c'),
        'content-length': 2,
      };
      if (query.has('clear')) headers['clear-site-data'] = '"cookies", "storage"';
      res.writeHead(200, headers);
      res.end('ok');
      return;
    }
    if (path === '/raw/events') {
      eventsRes = res;
      // As many SSE servers do, for an nginx in front of them; the gateway sends its own.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
      res.write(': open\n\n');
      res.on('close', () => closedEvents.resolve());
      opened.resolve();
      return;
    }
    if (path === '/raw/hang') {
      hanging.push(res);
      res.on('close', () => hangClosed.resolve());
      hangReached.resolve();
      return;
    }
    if (path === '/raw/upload') {
      let bytes = 0;
      req.on('data', (c: Buffer) => {
        bytes += c.length;
        backend.onUploadChunk?.(c);
      });
      req.on('close', () => {
        if (!req.complete) backend.uploadsCutShort += 1;
      });
      req.on('end', () => {
        const body = JSON.stringify({ bytes });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
      return;
    }
    if (path.startsWith('/raw/status/')) {
      const status = Number(path.slice('/raw/status/'.length)) || 500;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (status === 401) {
        headers['www-authenticate'] =
          `Bearer error="invalid_token", error_description="expired", resource_metadata="${url}/.well-known/oauth-protected-resource/mcp"`;
      }
      if (status === 403) {
        headers['www-authenticate'] =
          `Bearer error="insufficient_scope", scope="mcp admin", resource_metadata="${url}/.well-known/oauth-protected-resource/mcp"`;
      }
      res.writeHead(status, headers);
      res.end(JSON.stringify({ status }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"no such raw route"}');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const backend: McpBackend = {
    url,
    seen,
    sessions,
    eventsOpened: opened.promise,
    eventsClosed: closedEvents.promise,
    hangReached: hangReached.promise,
    hangClosed: hangClosed.promise,
    uploadsCutShort: 0,
    sendEvent(data) {
      eventsRes?.write(`data: ${data}\n\n`);
    },
    async close() {
      for (const t of sessions.values()) await t.close().catch(() => undefined);
      for (const r of hanging) r.destroy();
      eventsRes?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return backend;
}
