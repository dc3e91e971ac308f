// The connection test of an MCP server: the API calls the server through the gateway at its public
// URL, as an agent of the organization would (edge/gateway/connection-test.ts), with the MCP SDK
// client: `initialize`, then `tools/list`. It answers what an agent would get (the tools, after the
// tool policy), how long each step took, and when a step failed, why, in plain words.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import type { McpServer } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { CONNECTION_TEST_HEADER, createConnectionTickets, type ConnectionTickets } from '../gateway/connection-test.ts';
import { resolveStateSecrets } from '../gateway/oauth/secret.ts';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { serverParams } from './mcp-server-schemas.ts';
import { errors, json, notFoundAs404, readJson, type RestRoute, type RouteDeps } from './rest-route.ts';

export const TestMcpServerSchema = z
  .object({
    access_token: z
      .string()
      .min(1)
      .max(16_384)
      .optional()
      .meta({ description: 'An access token the server accepts, sent as `Authorization: Bearer`; never stored.' }),
  })
  .strict()
  .meta({ title: 'TestMcpServer' });

export const ConnectionTestSchema = z
  .object({
    ok: z.boolean(),
    stage: z.enum(['initialize', 'tools/list']).nullable().meta({ description: 'The step that failed; null when both passed.' }),
    status: z.int().nullable().meta({ description: 'The HTTP status of the refusal, when the gateway or the server refused.' }),
    error: z.string().nullable().meta({ description: 'Why the step failed, in plain words.' }),
    server_info: z.object({ name: z.string(), version: z.string() }).nullable(),
    protocol_version: z.string().nullable(),
    tools: z
      .array(z.object({ name: z.string(), description: z.string().nullable() }))
      .meta({ description: 'What agents see: after the tool policy.' }),
    latency_ms: z.object({ initialize: z.number().nullable(), tools_list: z.number().nullable() }),
    gateway_url: z.string(),
  })
  .meta({ title: 'ConnectionTest' });
export type ConnectionTest = z.output<typeof ConnectionTestSchema>;

interface Refusal {
  status: number;
  challenge: string | null;
  body: Record<string, unknown>;
}

const TIMEOUT_MS = 10_000;
const round = (ms: number) => Math.round(ms * 10) / 10;

/** A fetch that remembers the last refusal, whose status, body and challenge say more than the SDK's error. */
function watchedFetch(): { fetch: typeof fetch; last(): Refusal | undefined } {
  let refusal: Refusal | undefined;
  return {
    last: () => refusal,
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if (res.status >= 400 && init?.method === 'POST') {
        const text = await res.clone().text();
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(text);
        } catch {}
        refusal = { status: res.status, challenge: res.headers.get('www-authenticate'), body };
      }
      return res;
    },
  };
}

/** Why a step failed, as an operator would want to read it. */
export function explain(
  err: unknown,
  refusal: Refusal | undefined,
  server: McpServer,
  gatewayUrl: string,
): { status: number | null; error: string } {
  if (refusal) {
    const code = String(refusal.body.error ?? '');
    const detail = String(
      refusal.body.detail ?? refusal.body.error_description ?? (refusal.body.error as Record<string, unknown>)?.message ?? '',
    );
    const described = /error_description="([^"]*)"/.exec(refusal.challenge ?? '')?.[1];
    const messages: Record<number, string> = {
      401: `The server asks for authorization${described ? ` (${described})` : detail ? ` (${detail})` : ''}: test again with an access_token it accepts${server.auth?.upstreamOauth ? ', obtained through the gateway’s OAuth facade' : ''}.`,
      403: `The server refused the credentials${detail ? `: ${detail}` : ''}.`,
      404:
        code === 'unknown_server'
          ? 'The gateway does not serve this server yet: test again in a few seconds.'
          : `The server has no MCP endpoint at ${gatewayUrl} (404).`,
      502: `The gateway could not reach the server at ${server.url}, or it answered with something that is not HTTP: ${detail || 'bad gateway'}.`,
      503:
        code === 'server_disabled'
          ? 'The server is disabled: enable it first.'
          : `The server is unavailable: ${detail || 'try again shortly'}.`,
      504: `The server at ${server.url} did not answer in time.`,
    };
    return {
      status: refusal.status,
      error: messages[refusal.status] ?? `The server answered HTTP ${refusal.status}${detail ? `: ${detail}` : ''}.`,
    };
  }
  if (err instanceof McpError) {
    if (err.code === ErrorCode.RequestTimeout) return { status: null, error: `No answer within ${TIMEOUT_MS / 1000} s.` };
    return { status: null, error: `The server answered with a JSON-RPC error ${err.code}: ${err.message}` };
  }
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (err instanceof TypeError && cause) {
    return {
      status: null,
      error: `The API could not reach the gateway at ${gatewayUrl} (${cause.code ?? cause.message}): check PUBLIC_GATEWAY_URL.`,
    };
  }
  return { status: null, error: `The test failed: ${(err as Error).message}` };
}

/** Runs initialize and tools/list through the gateway for `organizationId`. */
export async function testConnection(options: {
  server: McpServer;
  organizationId: string;
  publicGatewayUrl: string;
  tickets: ConnectionTickets;
  accessToken?: string;
}): Promise<ConnectionTest> {
  const { server } = options;
  const gatewayUrl = `${options.publicGatewayUrl}/${server.name}/${server.mcpPath}`;
  const watched = watchedFetch();
  const headers: Record<string, string> = { [CONNECTION_TEST_HEADER]: options.tickets.issue(server.name, options.organizationId) };
  if (options.accessToken) headers.authorization = `Bearer ${options.accessToken}`;
  const client = new Client({ name: 'mindgate-connection-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(gatewayUrl), { requestInit: { headers }, fetch: watched.fetch });
  const result: ConnectionTest = {
    ok: false,
    stage: 'initialize',
    status: null,
    error: null,
    server_info: null,
    protocol_version: null,
    tools: [],
    latency_ms: { initialize: null, tools_list: null },
    gateway_url: gatewayUrl,
  };
  try {
    let started = performance.now();
    await client.connect(transport, { timeout: TIMEOUT_MS });
    result.latency_ms.initialize = round(performance.now() - started);
    const info = client.getServerVersion();
    result.server_info = info ? { name: info.name, version: info.version } : null;
    result.protocol_version = transport.protocolVersion ?? null;
    result.stage = 'tools/list';
    started = performance.now();
    const { tools } = await client.listTools(undefined, { timeout: TIMEOUT_MS });
    result.latency_ms.tools_list = round(performance.now() - started);
    result.tools = tools.map((t) => ({ name: t.name, description: t.description ?? null }));
    return { ...result, ok: true, stage: null };
  } catch (err) {
    return { ...result, ...explain(err, watched.last(), server, gatewayUrl) };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** `POST /organizations/{organization_id}/mcp-servers/{server_id}/test`. */
export function testMcpServerRoute(deps: RouteDeps): RestRoute {
  const { ctx, limit } = deps;
  const tickets = createConnectionTickets(resolveStateSecrets(ctx.config.gateway.stateSecrets, ctx.config.storage.dataDir), ctx.now);
  // A server just saved reaches every replica within a poll: a 404 from the gateway is retried that long.
  const patienceMs = Math.max(2_000, 3 * ctx.config.gateway.registryPollMs);
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/mcp-servers/:server_id/test',
      operationId: 'testMcpServer',
      summary: 'Test an MCP server',
      description:
        "Runs MCP `initialize` and `tools/list` through the gateway at its public URL (PUBLIC_GATEWAY_URL), as an agent of the organization would, and answers the tools found (after the server's tool policy), the latency of each step and, when a step fails, why in plain words. The body is optional; `access_token` is sent to the server as `Authorization: Bearer` and never stored.",
      tags: ['MCP servers'],
      params: serverParams,
      responses: {
        '200': json(ConnectionTestSchema, 'What the test found, whether it passed or not.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '422': errors['422'],
      },
      handler: async (c) => {
        const { organization_id: organizationId, server_id: serverId } = c.input.params;
        const empty = c.req.headers['content-length'] === '0' || (!c.req.headers['content-type'] && !c.req.headers['transfer-encoding']);
        const body = empty ? {} : await readJson(c, TestMcpServerSchema, limit);
        const { server } = await notFoundAs404(() => ctx.clients.mcpServers.getMcpServer({ organizationId, serverId }));
        const run = () =>
          testConnection({
            server: server!,
            organizationId,
            publicGatewayUrl: ctx.config.publicUrls.gateway,
            tickets,
            accessToken: body.access_token,
          });
        const until = Date.now() + patienceMs;
        let result = await run();
        while (!result.ok && result.status === 404 && result.error?.startsWith('The gateway does not serve') && Date.now() < until) {
          await new Promise((r) => setTimeout(r, 200));
          result = await run();
        }
        sendJson(c.res, 200, result, { 'cache-control': 'no-store' });
      },
    }),
    body: TestMcpServerSchema,
  };
}
