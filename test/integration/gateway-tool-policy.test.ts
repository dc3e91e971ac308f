// Per-server tool policies enforced by the gateway, with the MCP SDK client through the proxy
// against SDK backends: tools the policy does not allow are missing from tools/list and refused
// on tools/call with a JSON-RPC error (never reaching the backend), over SSE responses of a
// stateful backend and JSON responses of a stateless one, in batches too; a policy set in the
// servers file works the same, and a change made through the API applies without a restart.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMcpBackend, type McpBackend } from '../support/gateway-backends.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let gateway: string;
let owner: ObtainedToken;
let key: string;
let sse: McpBackend;
let json: McpBackend;
let dir: string;
const call = restClient(() => platform.ctx.config.publicUrls.api);

beforeAll(async () => {
  sse = await startMcpBackend({ mode: 'sse', name: 'stateful' });
  json = await startMcpBackend({ mode: 'json', name: 'stateless' });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-policy-'));
  const serversFile = path.join(dir, 'servers.yaml');
  fs.writeFileSync(
    serversFile,
    `servers:
  - name: file-tools
    url: ${json.url}
    tool_policy: { deny: [count, "who*"] }
`,
  );
  platform = await startOAuthTestPlatform({
    GATEWAY_REGISTRY_POLL_MS: '100',
    GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true',
    GATEWAY_SERVERS_FILE: serversFile,
  });
  gateway = platform.ctx.config.publicUrls.gateway;
  owner = await obtainAccessToken(platform, { resource: platform.ctx.config.publicUrls.api });
  key = (await call(`/organizations/${owner.organizationId}/api-keys`, { token: owner.access_token, body: { name: 'agent' } })).json.secret;
  for (const [name, backend] of [
    ['sse-tools', sse],
    ['json-tools', json],
  ] as const) {
    const r = await call(`/organizations/${owner.organizationId}/mcp-servers`, {
      token: owner.access_token,
      body: { name, url: backend.url, tool_policy: { allow: ['echo', 'count', 'who*'], deny: ['whoami'] } },
    });
    expect(r.status).toBe(201);
  }
  await waitFor(async () => (await rpc('json-tools', { jsonrpc: '2.0', id: 0, method: 'ping' })).status === 200);
  await waitFor(async () => (await rpc('sse-tools', initialize(0))).status === 200);
}, 240_000);

afterAll(async () => {
  await platform?.stop();
  await sse?.close();
  await json?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const initialize = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

function rpc(server: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${gateway}/${server}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-api-key': key,
      'mcp-protocol-version': '2025-06-18',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** The JSON-RPC messages of an answer, whether JSON or SSE. */
async function messages(res: Response): Promise<Json[]> {
  const text = await res.text();
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
  }
  const parsed = JSON.parse(text);
  return Array.isArray(parsed) ? parsed : [parsed];
}

async function sdkClient(server: string, headers: Record<string, string> = { 'x-api-key': '' }): Promise<Client> {
  const client = new Client({ name: 'policy-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway}/${server}/mcp`), {
    requestInit: { headers: headers['x-api-key'] === '' ? { 'x-api-key': key } : headers },
  });
  await client.connect(transport);
  return client;
}

describe('tool policies', () => {
  for (const server of ['sse-tools', 'json-tools']) {
    it(`filters tools/list and refuses denied calls with the MCP SDK client (${server})`, async () => {
      const backend = server === 'sse-tools' ? sse : json;
      const client = await sdkClient(server);
      const tools = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(tools).toEqual(['count', 'echo']);
      const before = backend.seen.length;
      const refused = await client.callTool({ name: 'whoami', arguments: {} }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(McpError);
      expect((refused as McpError).code).toBe(-32602);
      expect((refused as McpError).message).toContain(`Tool whoami is not available: the tool policy of server ${server}`);
      expect(backend.seen.length).toBe(before);
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'allowed' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'allowed' }]);
      // Progress notifications stream through as they come (SSE on the stateful backend).
      const progress: number[] = [];
      const counted = await client.callTool({ name: 'count', arguments: { n: 3 } }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      });
      expect(counted.content).toEqual([{ type: 'text', text: 'counted 3' }]);
      if (server === 'sse-tools') expect(progress).toEqual([1, 2, 3]);
      await client.close();
    });
  }

  it('answers a batch: filtered tools/list, allowed calls from the backend, denied calls from the gateway (JSON)', async () => {
    const res = await rpc('json-tools', [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'batched' } } },
    ]);
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(0);
    const answers = await messages(res);
    const byId = new Map(answers.map((m) => [m.id, m]));
    expect(
      byId
        .get(1)!
        .result.tools.map((t: Json) => t.name)
        .sort(),
    ).toEqual(['count', 'echo']);
    expect(byId.get(2)!.error).toMatchObject({ code: -32602 });
    expect(byId.get(3)!.result.content).toEqual([{ type: 'text', text: 'batched' }]);
    // The backend never saw the denied call.
    expect(json.seen.at(-1)!.method).toBe('POST');
  });

  it('answers a batch over an SSE response, with the gateway’s error as an event of the stream', async () => {
    const init = await rpc('sse-tools', initialize(1));
    const session = init.headers.get('mcp-session-id')!;
    await init.text();
    await (await rpc('sse-tools', { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': session })).text();
    const res = await rpc(
      'sse-tools',
      [
        { jsonrpc: '2.0', id: 7, method: 'tools/list' },
        { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
      ],
      { 'mcp-session-id': session },
    );
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const answers = await messages(res);
    expect(answers.find((m) => m.id === 8)!.error).toMatchObject({ code: -32602 });
    expect(
      answers
        .find((m) => m.id === 7)!
        .result.tools.map((t: Json) => t.name)
        .sort(),
    ).toEqual(['count', 'echo']);
  });

  it('answers a call it refuses alone, without the backend', async () => {
    const before = json.seen.length;
    const single = await rpc('json-tools', { jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'whoami' } });
    expect(await single.json()).toEqual({
      jsonrpc: '2.0',
      id: 'x',
      error: { code: -32602, message: 'Tool whoami is not available: the tool policy of server json-tools does not allow it.' },
    });
    const batch = await rpc('json-tools', [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'not-listed' } }]);
    expect((await messages(batch)).map((m) => m.error.code)).toEqual([-32602]);
    expect(json.seen.length).toBe(before);
  });

  it('sees a method or a tool name spelled with JSON escapes as the backend does', async () => {
    const before = json.seen.length;
    // `\/` and `\u0077` are `/` and `w` to any JSON parser: the gateway must read them so too.
    const raw = '{"jsonrpc":"2.0","id":"e","method":"tools\\/call","params":{"name":"\\u0077hoami"}}';
    const sent = await fetch(`${gateway}/json-tools/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key },
      body: raw,
    });
    expect(await sent.json()).toMatchObject({ id: 'e', error: { code: -32602 } });
    expect(json.seen.length).toBe(before);
    const listed = await fetch(`${gateway}/json-tools/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key },
      body: '{"jsonrpc":"2.0","id":"l","method":"tools\\/list"}',
    });
    expect(((await listed.json()) as Json).result.tools.map((t: Json) => t.name).sort()).toEqual(['count', 'echo']);
  });

  it('applies a policy from the servers file the same way', async () => {
    const client = await sdkClient('file-tools', {});
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
    await expect(client.callTool({ name: 'count', arguments: { n: 1 } })).rejects.toThrow(/tool policy of server file-tools/);
    await client.close();
  });

  it('applies a changed policy without a restart', async () => {
    const list = await call(`/organizations/${owner.organizationId}/mcp-servers`, { token: owner.access_token });
    const server = list.json.mcp_servers.find((s: Json) => s.name === 'json-tools');
    const patched = await call(`/organizations/${owner.organizationId}/mcp-servers/${server.id}`, {
      token: owner.access_token,
      method: 'PATCH',
      body: { tool_policy: { allow: null, deny: ['echo'] } },
    });
    expect(patched.json.tool_policy).toEqual({ allow: [], deny: ['echo'] });
    await waitFor(async () => {
      const tools = (await messages(await rpc('json-tools', { jsonrpc: '2.0', id: 1, method: 'tools/list' })))[0].result.tools;
      return (
        tools
          .map((t: Json) => t.name)
          .sort()
          .join() === 'count,whoami'
      );
    });
    await call(`/organizations/${owner.organizationId}/mcp-servers/${server.id}`, {
      token: owner.access_token,
      method: 'PATCH',
      body: { tool_policy: null },
    });
    await waitFor(async () => {
      const tools = (await messages(await rpc('json-tools', { jsonrpc: '2.0', id: 1, method: 'tools/list' })))[0].result.tools;
      return tools.length === 3;
    });
  });
});
