// MCP tool calls of a run (a playbook's steps, the LLM runner's model), and the listing of a
// server's tools, made through the gateway (this replica's own listener) as a client of the
// organization, never straight to the backend: the gateway's organization check (only the
// organization's own servers), its tool policy and its private-address rules apply to the runner
// as to any agent. The runner's credential is the same signed ticket as the Agents API's
// connection test (edge/gateway/connection-test.ts: the server and the organization, 30 seconds,
// no operator rights), issued afresh for every HTTP request so a long run never outlives it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Client as RpcClient } from '@connectrpc/connect';
import type { JsonObject } from '@bufbuild/protobuf';
import type { McpServersService } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { CONNECTION_TEST_HEADER, type ConnectionTickets } from '../gateway/connection-test.ts';

export interface ToolCallOutcome {
  ok: boolean;
  result: JsonObject;
  error: string;
}

/** A tool as the server's tools/list gave it (through the gateway: the tool policy applied). */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: JsonObject;
}

export interface GatewayTools {
  call(server: string, tool: string, args: JsonObject, signal: AbortSignal): Promise<ToolCallOutcome>;
  /** The server's tools, every page; throws when the server cannot be reached or refuses. */
  list(server: string, signal: AbortSignal): Promise<ListedTool[]>;
  close(): Promise<void>;
}

export interface GatewayToolsOptions {
  organizationId: string;
  gatewayUrl: string;
  tickets: ConnectionTickets;
  mcpServers: RpcClient<typeof McpServersService>;
  timeoutMs: number;
  /** The MCP paths of servers already read from the registry (by name), saving a listing per server. */
  mcpPaths?: ReadonlyMap<string, string>;
  /** How the runner introduces itself to servers (MCP clientInfo.name). */
  clientName?: string;
}

/** At most this many tools/list pages of one server (a server paging forever cannot hold a run). */
const MAX_LIST_PAGES = 20;

/** The MCP path of the organization's server `name` (its registry entry), or 'mcp' when it is not one of its own. */
async function mcpPathOf(options: GatewayToolsOptions, name: string): Promise<string> {
  let pageToken = '';
  do {
    const page = await options.mcpServers.listMcpServers({ organizationId: options.organizationId, pageSize: 100, pageToken });
    const found = page.servers.find((s) => s.name === name);
    if (found) return found.mcpPath || 'mcp';
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return 'mcp';
}

/** Why a call failed, in words the run's record keeps: the gateway's refusal with its status, or the error. */
function describe(err: unknown): string {
  const e = err as { code?: number; message?: string };
  if (typeof e.code === 'number' && e.code >= 400 && e.code < 600) return `the gateway answered HTTP ${e.code}: ${e.message ?? ''}`.trim();
  return e.message ?? String(err);
}

/** Tool calls for one run: one MCP session per server, opened on first use and closed with the run. */
export function createGatewayTools(options: GatewayToolsOptions): GatewayTools {
  const clients = new Map<string, Promise<Client>>();

  async function connect(server: string): Promise<Client> {
    const url = new URL(`${options.gatewayUrl}/${server}/${options.mcpPaths?.get(server) ?? (await mcpPathOf(options, server))}`);
    const ticketed: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set(CONNECTION_TEST_HEADER, options.tickets.issue(server, options.organizationId));
      return fetch(input, { ...init, headers });
    };
    const client = new Client({ name: options.clientName ?? 'mindgate-playbook-runner', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { fetch: ticketed }), { timeout: options.timeoutMs });
    return client;
  }

  function clientOf(server: string): Promise<Client> {
    let pending = clients.get(server);
    if (!pending) {
      pending = connect(server);
      clients.set(server, pending);
      // A failed connection is not kept: the next step tries again.
      pending.catch(() => clients.delete(server));
    }
    return pending;
  }

  return {
    async list(server, signal) {
      const client = await clientOf(server);
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
        const res = await client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout: options.timeoutMs });
        for (const t of res.tools)
          tools.push({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema as unknown as JsonObject });
        cursor = res.nextCursor;
        if (cursor === undefined) break;
      }
      return tools;
    },
    async call(server, tool, args, signal) {
      try {
        const client = await clientOf(server);
        const result = await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: options.timeoutMs });
        const isError = result.isError === true;
        const text = Array.isArray(result.content) ? result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n') : '';
        return { ok: !isError, result: JSON.parse(JSON.stringify(result)) as JsonObject, error: isError ? text.slice(0, 10_000) : '' };
      } catch (err) {
        signal.throwIfAborted();
        // The gateway itself unreachable is the platform's failure, not the tool's: the attempt ends
        // and the run is taken up again when its lease expires.
        if (err instanceof TypeError && (err as { cause?: unknown }).cause !== undefined) throw err;
        const error = describe(err).slice(0, 10_000);
        return { ok: false, result: { error }, error };
      }
    },
    async close() {
      const all = [...clients.values()];
      clients.clear();
      await Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => undefined)));
    },
  };
}
