// The MCP tools an LLM run's model may call: the tools of the MCP servers its organization may use
// (its own and the shared ones, enabled), as each server's tools/list answers through the gateway
// (so the server's tool policy has already taken out what it denies), narrowed to a playbook's
// declared `tools` when the run follows one. Each becomes a function tool named `server__tool`,
// made to fit the chat-completions rule for function names (1-64 of [A-Za-z0-9_-]); two tools
// whose names come out the same get `_2`, `_3`... in the order of their server and tool names, so
// the same servers give the same names on every attempt of a run.
import type { JsonObject } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import type { McpServersService } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import type { Logger } from '../../services/common/log.ts';
import { toolAllowed } from '../../services/common/playbooks/validate.ts';
import type { ToolDefinition } from './chat-completions.ts';
import type { GatewayTools } from './gateway-tools.ts';

/** What the chat-completions API takes at most in one request (OpenAI's limit). */
export const MAX_TOOLS = 128;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1_000;

export interface McpTool {
  /** The function name the model calls. */
  name: string;
  server: string;
  tool: string;
  definition: ToolDefinition;
}

export interface McpToolsOptions {
  organizationId: string;
  mcpServers: Client<typeof McpServersService>;
  gateway: GatewayTools;
  /** A playbook's declared tools (server/tool, `*` a prefix); undefined: every tool the gateway lists. */
  declared?: string[];
  /** Function names already taken (the Brain's tools). */
  reserved: string[];
  /** How many may be added (MAX_TOOLS less the Brain's). */
  room: number;
  logger: Logger;
  signal: AbortSignal;
}

/** The servers the organization may use, enabled, with their MCP paths, by name. */
export async function usableServers(mcpServers: McpToolsOptions['mcpServers'], organizationId: string): Promise<Map<string, string>> {
  const servers = new Map<string, string>();
  let pageToken = '';
  do {
    const page = await mcpServers.listMcpServers({ organizationId, pageSize: 100, pageToken });
    for (const s of page.servers) if (s.enabled) servers.set(s.name, s.mcpPath || 'mcp');
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return servers;
}

/** Whether any declared entry could name a tool of `server` (so it is worth listing). */
function mayDeclare(declared: string[], server: string): boolean {
  const prefix = `${server}/`;
  return declared.some((d) => {
    if (!d.endsWith('*')) return d.startsWith(prefix);
    const start = d.slice(0, -1);
    return prefix.startsWith(start) || start.startsWith(prefix);
  });
}

/** `server__tool` as a function name: other characters become `_`, cut to 64. */
export function functionName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_NAME);
}

/** Gives each tool a name no other has (nor a reserved one), in a stable order. */
function nameAll<T extends { server: string; tool: string }>(found: T[], reserved: string[]): Array<T & { name: string }> {
  const taken = new Set(reserved);
  const sorted = [...found].sort((a, b) => (a.server === b.server ? (a.tool < b.tool ? -1 : 1) : a.server < b.server ? -1 : 1));
  return sorted.map((t) => {
    const base = functionName(t.server, t.tool);
    let name = base;
    for (let n = 2; taken.has(name); n += 1) name = `${base.slice(0, MAX_NAME - String(n).length - 1)}_${n}`;
    taken.add(name);
    return { ...t, name };
  });
}

function parametersOf(schema: JsonObject | undefined): Record<string, unknown> {
  // MCP input schemas are JSON Schema objects; one without properties still has to say it is an object.
  return schema && typeof schema === 'object' ? { ...schema, type: 'object' } : { type: 'object', properties: {} };
}

/**
 * The MCP tools of the run. A server that cannot be listed (its backend down, it wants a user's
 * OAuth token the runner does not have) is left out, with a warning in the log; the run goes on
 * with the others.
 */
export async function discoverMcpTools(o: McpToolsOptions, servers: Map<string, string>): Promise<McpTool[]> {
  const names = [...servers.keys()].filter((name) => o.declared === undefined || mayDeclare(o.declared, name));
  const listed = await Promise.all(
    names.map(async (server) => {
      try {
        return { server, tools: await o.gateway.list(server, o.signal) };
      } catch (err) {
        o.signal.throwIfAborted();
        o.logger.warn({ server, err: (err as Error).message }, "run: a server's tools could not be listed; the model goes without them");
        return { server, tools: [] };
      }
    }),
  );
  const found = listed.flatMap(({ server, tools }) =>
    tools
      .filter((t) => o.declared === undefined || toolAllowed(o.declared, server, t.name))
      .map((t) => ({ server, tool: t.name, about: t })),
  );
  const named = nameAll(found, o.reserved);
  if (named.length > o.room)
    o.logger.warn({ tools: named.length, kept: o.room }, 'run: more MCP tools than a model call takes; the rest left out');
  return named.slice(0, o.room).map(({ about, ...t }) => {
    const description = `${t.server}: ${about.description || t.tool}`.slice(0, MAX_DESCRIPTION);
    return {
      name: t.name,
      server: t.server,
      tool: t.tool,
      definition: { type: 'function', function: { name: t.name, description, parameters: parametersOf(about.inputSchema) } },
    };
  });
}
