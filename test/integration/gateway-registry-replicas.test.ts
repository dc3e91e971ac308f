// Two edge replicas sharing a MongoDB-wire server: one in this process, one started as its own
// process (`node edge/main.ts`). A server registered through the first replica's REST API is
// served by the second replica's gateway within a poll; an agent there uses it with the MCP SDK
// client after its tools were restricted, without a restart; a stream in flight through the
// second replica is not cut by changes to other servers, nor by a change to its own server's
// settings, and a removed server's stream finishes where it started while new requests get 404.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdgeProcess, type EdgeProcess } from '../support/edge-process.ts';
import { startMcpBackend, type McpBackend } from '../support/gateway-backends.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

describe.runIf(shouldRunMongoSuite('gateway registry across replicas'))('the gateway registry across replicas', () => {
  let mongo: MongoWireServer;
  let first: TestPlatform;
  let second: EdgeProcess;
  let backend: McpBackend;
  let owner: ObtainedToken;
  let key: string;
  let dir: string;
  const call = restClient(() => first.ctx.config.publicUrls.api);
  const servers = (p = '') => `/organizations/${owner.organizationId}/mcp-servers${p}`;

  beforeAll(async () => {
    mongo = await startMongoWireServer();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-replicas-'));
    const kek = path.join(dir, 'kek');
    fs.writeFileSync(kek, crypto.randomBytes(32).toString('base64url'), { mode: 0o600 });
    const shared = {
      MONGODB_URL: mongo.url,
      MONGODB_DATABASE: `replicas_${crypto.randomBytes(4).toString('hex')}`,
      KEY_ENCRYPTION_KEY_FILE: kek,
      INTERNAL_TOKEN: crypto.randomBytes(24).toString('base64url'),
      GATEWAY_STATE_SECRET: crypto.randomBytes(24).toString('base64url'),
      GATEWAY_REGISTRY_POLL_MS: '250',
      GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true',
    };
    backend = await startMcpBackend({ mode: 'sse', name: 'replicated' });
    first = await startOAuthTestPlatform(shared);
    // The second replica answers under the same public URLs, as replicas behind one load balancer do.
    const urls = first.ctx.config.publicUrls;
    second = await startEdgeProcess({
      ...shared,
      PUBLIC_GATEWAY_URL: urls.gateway,
      PUBLIC_API_URL: urls.api,
      PUBLIC_WEB_URL: urls.web,
      PUBLIC_AUTH_URL: urls.auth,
    });
    owner = await obtainAccessToken(first, { resource: urls.api });
    key = (await call(`/organizations/${owner.organizationId}/api-keys`, { token: owner.access_token, body: { name: 'agent' } })).json
      .secret;
  }, 300_000);

  afterAll(async () => {
    await second?.stop();
    await first?.stop();
    await backend?.close();
    await mongo?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const onSecond = (server: string, p = '/mcp') => `${second.urls.gateway}/${server}${p}`;

  async function until<T>(work: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const value = await work();
      if (done(value) || Date.now() > end) return value;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  const initialize = (server: string) =>
    fetch(onSecond(server), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
      }),
    }).then(async (r) => {
      await r.arrayBuffer();
      return r.status;
    });

  it('serves a server registered on one replica from the other, restricted, without a restart', async () => {
    const created = await call(servers(), { token: owner.access_token, body: { name: 'replicated', url: backend.url } });
    expect(created.status).toBe(201);
    const started = performance.now();
    expect(
      await until(
        () => initialize('replicated'),
        (s) => s === 200,
      ),
    ).toBe(200);
    console.log(`registry change served by the second replica after ${Math.round(performance.now() - started)} ms (poll 250 ms)`);

    await call(servers(`/${created.json.id}`), { token: owner.access_token, method: 'PATCH', body: { tool_policy: { deny: ['count'] } } });
    const agent = await until(
      async () => {
        const client = new Client({ name: 'agent', version: '1.0.0' });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(onSecond('replicated')), { requestInit: { headers: { 'x-api-key': key } } }),
        );
        const names = (await client.listTools()).tools.map((t) => t.name);
        if (names.includes('count')) await client.close();
        return { client, names };
      },
      (v) => !v.names.includes('count'),
    );
    expect(agent.names.sort()).toEqual(['echo', 'whoami']);
    const echoed = await agent.client.callTool({ name: 'echo', arguments: { text: 'from the other replica' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'from the other replica' }]);
    await agent.client.close();
    // The second replica logged the registry version it applied.
    expect(second.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('gateway registry at version'))).toBe(true);
  });

  it('keeps a stream in flight through every change but its server’s removal, and finishes that one too', async () => {
    const id = (await call(servers(), { token: owner.access_token, body: { name: 'streaming', url: backend.url } })).json.id;
    await until(
      () => initialize('streaming'),
      (s) => s === 200,
    );
    const res = await fetch(onSecond('streaming', '/raw/events'), { headers: { 'x-api-key': key } });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    let received = '';
    const next = async (text: string) => {
      while (!received.includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${text}`);
        received += Buffer.from(value).toString();
      }
    };
    await backend.eventsOpened;
    backend.sendEvent('before');
    await next('before');

    // Changes to other servers, and to this one's settings (not its backend), on the first replica.
    const other = (await call(servers(), { token: owner.access_token, body: { name: 'unrelated', url: backend.url } })).json.id;
    await call(servers(`/${id}`), { token: owner.access_token, method: 'PATCH', body: { description: 'renamed while streaming' } });
    await until(
      () => initialize('unrelated'),
      (s) => s === 200,
    );
    await call(servers(`/${other}`), { token: owner.access_token, method: 'DELETE' });
    await until(
      () => initialize('unrelated'),
      (s) => s === 404,
    );
    backend.sendEvent('after-changes');
    await next('after-changes');

    // Its own removal: new requests get 404, the stream in flight goes on until it ends.
    await call(servers(`/${id}`), { token: owner.access_token, method: 'DELETE' });
    expect(
      await until(
        () => initialize('streaming'),
        (s) => s === 404,
      ),
    ).toBe(404);
    backend.sendEvent('after-removal');
    await next('after-removal');
    await reader.cancel();
    await backend.eventsClosed;
  });

  it('checks gateway keys created on one replica on the other, and stops a revoked one', async () => {
    first.ctx.config.api.operatorOrganizationId = owner.organizationId;
    const created = await call(`/organizations/${owner.organizationId}/gateway-keys`, { token: owner.access_token, body: { name: 'ops' } });
    const shared = await call(servers(), { token: owner.access_token, body: { name: 'ops-shared', url: backend.url, shared: true } });
    expect(shared.status).toBe(201);
    const withKey = () =>
      fetch(onSecond('ops-shared', '/raw/echo'), { headers: { 'x-gateway-key': created.json.secret } }).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      });
    expect(await until(withKey, (s) => s === 200)).toBe(200);
    await call(`/organizations/${owner.organizationId}/gateway-keys/${created.json.gateway_key.id}`, {
      token: owner.access_token,
      method: 'DELETE',
    });
    expect(await until(withKey, (s) => s === 401)).toBe(401);
    const list = await call(servers(), { token: owner.access_token });
    expect(list.json.mcp_servers.map((s: Json) => s.name)).toContain('ops-shared');
  });
});
