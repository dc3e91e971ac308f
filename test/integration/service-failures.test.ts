// Failures between the edge and a service that runs as its own process, as clients see them: the
// brain process killed in the middle of a call, its address dead, its connection cut, and a brain
// that refuses the edge's internal credential. Clients get UNAVAILABLE with a plain message (an
// MCP tool error, a 503 `unavailable` problem), never socket text nor a blame on their own
// credentials; idempotent reads are tried once more; the refusing service logs the refusal.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Code, ConnectError } from '@connectrpc/connect';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { edgeFailureOf } from '../../edge/service-failures.ts';
import { startCuttingProxy, type CuttingProxy } from '../support/cutting-proxy.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../support/service-process.ts';

const TOKEN = 'the-brain-internal-token-0123456789abcdef';
const WRONG_TOKEN = 'another-internal-token-0123456789abcdefgh';
const GATEWAY_KEY = 'operator-key-0123456789abcdef';
const SOCKET_TEXT = /ECONNRESET|ECONNREFUSED|EPIPE|socket|http\/2 stream/i;

const brainDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-brain-failures-'));
let brain: ServiceProcess | undefined;
let brainPort = '0';

async function startBrain(): Promise<ServiceProcess> {
  brain = await startServiceProcess('brain', { DATA_DIR: brainDir, BRAIN_GRPC_PORT: brainPort, INTERNAL_TOKEN: TOKEN });
  brainPort = brain.address.split(':')[1]!;
  return brain;
}

/** Kills the brain process while a call is on its way: stopped, the call sent, then SIGKILL. */
async function killBrainDuring<T>(call: () => Promise<T>): Promise<T> {
  const victim = brain!;
  victim.child.kill('SIGSTOP');
  const pending = call();
  await new Promise((resolve) => setTimeout(resolve, 300));
  victim.child.kill('SIGKILL');
  await victim.exited;
  return pending;
}

async function mcpClient(platform: TestPlatform, organizationId: string): Promise<Client> {
  const client = new Client({ name: 'failures-test', version: '1.0.0' });
  const headers = { 'x-gateway-key': GATEWAY_KEY, 'x-mindgate-organization': organizationId };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${platform.urls.gateway}/brain/mcp`), { requestInit: { headers } }));
  return client;
}

/** An organization and a read API key of it, made through the (in-process) agents service. */
async function apiKeyOf(platform: TestPlatform): Promise<{ organizationId: string; key: string }> {
  const { organization } = await platform.ctx.clients.organizations.createOrganization({ name: 'Failures', ownerUserId: 'user-1' });
  const { secret } = await platform.ctx.clients.apiKeys.createApiKey({
    organizationId: organization!.organizationId,
    name: 'test',
    createdBy: 'user-1',
    scopes: ['read'],
  });
  return { organizationId: organization!.organizationId, key: secret };
}

function toolText(result: CallToolResult): string {
  return (result.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
}

afterAll(async () => {
  await stopServiceProcess(brain);
  fs.rmSync(brainDir, { recursive: true, force: true });
});

describe('the brain process dies in the middle of calls', () => {
  let platform: TestPlatform;
  let mcp: Client;
  let api: { organizationId: string; key: string };
  beforeAll(async () => {
    await startBrain();
    platform = await startTestPlatform({
      BRAIN_SERVICE_ADDR: brain!.address,
      INTERNAL_TOKEN: TOKEN,
      GATEWAY_KEYS: GATEWAY_KEY,
      WEBHOOK_RELAY: 'false',
    });
    api = await apiKeyOf(platform);
    mcp = await mcpClient(platform, api.organizationId);
  }, 120_000);
  afterAll(async () => {
    await mcp?.close();
    await platform?.stop();
  });

  it('an MCP tool result says the brain is unavailable, without socket text', async () => {
    await mcp.callTool({ name: 'search_memories', arguments: { namespace: 'knowledge', query: 'warm up' } });
    const result = (await killBrainDuring(() =>
      mcp.callTool({ name: 'search_memories', arguments: { namespace: 'knowledge', query: 'deploy steps' } }),
    )) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(toolText(result)).toMatch(/unavailable right now; retry/);
    expect(toolText(result)).not.toMatch(SOCKET_TEXT);
  }, 60_000);

  it('the REST API answers 503 `unavailable` with a plain detail', async () => {
    await startBrain();
    const res = await killBrainDuring(() =>
      fetch(`${platform.urls.api}/organizations/${api.organizationId}/usage`, { headers: { 'x-api-key': api.key } }),
    );
    expect(res.status).toBe(503);
    const problem = (await res.json()) as { type: string; detail: string };
    expect(problem.type).toMatch(/problem\/unavailable$/);
    expect(problem.detail).toBe('the brain service is unavailable; retry shortly');
  }, 60_000);

  it('a write cut in the middle is UNAVAILABLE for the edge, marked as a transport failure', async () => {
    await startBrain();
    const err = await killBrainDuring(() =>
      platform.ctx.clients.brain
        .putMemory({
          organizationId: api.organizationId,
          namespace: Namespace.KNOWLEDGE,
          key: 'cut',
          title: 'Cut',
          content: 'A write cut short.',
        })
        .catch((e: unknown) => e),
    );
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unavailable);
    expect(edgeFailureOf(err)).toBe('unreachable');
    expect((err as ConnectError).rawMessage).not.toMatch(SOCKET_TEXT);
  }, 60_000);

  it('a dead address gives the same answers', async () => {
    // The brain is dead since the last test: nothing listens at its address.
    const result = (await mcp.callTool({
      name: 'search_memories',
      arguments: { namespace: 'knowledge', query: 'anything' },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(toolText(result)).toMatch(/unavailable right now; retry/);
    const res = await fetch(`${platform.urls.api}/organizations/${api.organizationId}/usage`, { headers: { 'x-api-key': api.key } });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { detail: string }).detail).toBe('the brain service is unavailable; retry shortly');
  }, 60_000);
});

describe('a connection cut under a call', () => {
  let platform: TestPlatform;
  let proxy: CuttingProxy;
  beforeAll(async () => {
    if (!brain || brain.child.exitCode !== null || brain.child.signalCode !== null) await startBrain();
    proxy = await startCuttingProxy(brain!.address);
    // No webhooks relay: its long poll of the brain's outbox would share the connection being cut.
    platform = await startTestPlatform({ BRAIN_SERVICE_ADDR: proxy.address, INTERNAL_TOKEN: TOKEN, WEBHOOK_RELAY: 'false' });
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await proxy?.close();
  });

  it('an idempotent read is tried once more, on a new connection, and succeeds', async () => {
    const brainClient = platform.ctx.clients.brain;
    await brainClient.putMemory({
      organizationId: 'org-cut',
      namespace: Namespace.KNOWLEDGE,
      key: 'k',
      title: 'Kept',
      content: 'Still here.',
    });
    const before = proxy.connections;
    proxy.cutNextCall();
    const res = await brainClient.getMemories({ organizationId: 'org-cut', namespace: Namespace.KNOWLEDGE, keys: ['k'] });
    expect(res.memories.map((m) => m.title)).toEqual(['Kept']);
    expect(proxy.connections).toBe(before + 1);
  }, 60_000);

  it('a connection closed (not reset) under a read is the same transport failure, tried once more', async () => {
    // node's HTTP/2 client ends the session's open streams with CANCEL then: not the caller's cancel.
    const before = proxy.connections;
    proxy.cutNextCall('close');
    const res = await platform.ctx.clients.brain.getMemories({ organizationId: 'org-cut', namespace: Namespace.KNOWLEDGE, keys: ['k'] });
    expect(res.memories.map((m) => m.title)).toEqual(['Kept']);
    expect(proxy.connections).toBe(before + 1);
    proxy.cutNextCall('close');
    const err = await platform.ctx.clients.brain
      .putMemory({ organizationId: 'org-cut', namespace: Namespace.KNOWLEDGE, key: 'c', title: 'C', content: 'Closed under.' })
      .catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe(Code.Unavailable);
    expect(edgeFailureOf(err)).toBe('unreachable');
    expect((err as ConnectError).rawMessage).not.toMatch(SOCKET_TEXT);
  }, 60_000);

  it('a call its caller cancels stays cancelled, and is not tried again', async () => {
    const controller = new AbortController();
    const pending = platform.ctx.clients.brain
      .getMemories({ organizationId: 'org-cut', namespace: Namespace.KNOWLEDGE, keys: ['k'] }, { signal: controller.signal })
      .catch((e: unknown) => e);
    controller.abort();
    const err = await pending;
    expect((err as ConnectError).code).toBe(Code.Canceled);
    expect(edgeFailureOf(err)).toBeUndefined();
  }, 60_000);

  it('a write is not repeated: the caller gets UNAVAILABLE and decides', async () => {
    proxy.cutNextCall();
    const err = await platform.ctx.clients.brain
      .putMemory({ organizationId: 'org-cut', namespace: Namespace.KNOWLEDGE, key: 'w', title: 'W', content: 'Written once, if at all.' })
      .catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe(Code.Unavailable);
    expect(edgeFailureOf(err)).toBe('unreachable');
    const res = await platform.ctx.clients.brain.getMemories({ organizationId: 'org-cut', namespace: Namespace.KNOWLEDGE, keys: ['w'] });
    expect(res.memories).toEqual([]);
  }, 60_000);
});

describe('a brain that refuses the edge internal credential', () => {
  let platform: TestPlatform;
  let mcp: Client;
  let api: { organizationId: string; key: string };
  beforeAll(async () => {
    if (!brain || brain.child.exitCode !== null || brain.child.signalCode !== null) await startBrain();
    platform = await startTestPlatform({ BRAIN_SERVICE_ADDR: brain!.address, INTERNAL_TOKEN: WRONG_TOKEN, GATEWAY_KEYS: GATEWAY_KEY });
    api = await apiKeyOf(platform);
    mcp = await mcpClient(platform, api.organizationId);
  }, 120_000);
  afterAll(async () => {
    await mcp?.close();
    await platform?.stop();
  });

  it('logs the refusal on the service at warn, with the peer and the method', async () => {
    await mcp.callTool({ name: 'search_memories', arguments: { namespace: 'knowledge', query: 'anything' } });
    const refusal = brain!.logs.find((line) => String(line.msg).startsWith('refused mindgate.brain.v1.BrainService/SearchMemories'));
    expect(refusal).toMatchObject({ level: 40, rpc: 'mindgate.brain.v1.BrainService/SearchMemories', credential: 'wrong' });
    expect(refusal?.peer).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(JSON.stringify(refusal)).not.toContain(WRONG_TOKEN);
  }, 60_000);

  it('an MCP tool result says the platform is misconfigured, not that the caller is', async () => {
    const result = (await mcp.callTool({
      name: 'search_memories',
      arguments: { namespace: 'knowledge', query: 'anything' },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(toolText(result)).toMatch(/misconfigured/);
    expect(toolText(result)).toMatch(/not a problem with your access token/);
  }, 60_000);

  it('the REST API answers 503 `unavailable`, never 401', async () => {
    const res = await fetch(`${platform.urls.api}/organizations/${api.organizationId}/usage`, { headers: { 'x-api-key': api.key } });
    expect(res.status).toBe(503);
    expect(res.headers.get('www-authenticate')).toBeNull();
    const problem = (await res.json()) as { type: string; detail: string };
    expect(problem.type).toMatch(/problem\/unavailable$/);
    expect(problem.detail).toMatch(/misconfigured: the brain service refused this server's internal credential/);
  }, 60_000);
});
