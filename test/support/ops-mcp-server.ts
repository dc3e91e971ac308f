// An operations MCP server for the runners' tests, built on the MCP SDK (stateless Streamable HTTP,
// JSON answers), on port 0: `list_deploys` answers what was deployed, `restart_service` is what a
// tool policy denies, `slow_query` can be made to hang (so a test can kill the runner inside the
// call). Every call is recorded with its arguments, so a test can count how often a tool was called.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { startStatelessMcpServer } from './stateless-mcp.ts';

export interface OpsCall {
  tool: string;
  args: Record<string, unknown>;
}

export interface OpsMcpServer {
  /** The backend URL to register (its MCP endpoint is /mcp). */
  url: string;
  calls: OpsCall[];
  /** How many of the next slow_query calls hang (never answer). */
  hangSlowQueries: number;
  /** Resolves when a slow_query call is hanging. */
  hanging(): Promise<void>;
  close(): Promise<void>;
}

export async function startOpsMcpServer(): Promise<OpsMcpServer> {
  const calls: OpsCall[] = [];
  let hungWaiters: Array<() => void> = [];
  const state: OpsMcpServer = {
    url: '',
    calls,
    hangSlowQueries: 0,
    hanging: () => new Promise<void>((resolve) => hungWaiters.push(resolve)),
    close: async () => undefined,
  };

  function build(): McpServer {
    const server = new McpServer({ name: 'ops', version: '1.0.0' });
    server.registerTool(
      'list_deploys',
      { description: 'The deploys of a service in the last hours', inputSchema: { service: z.string() } },
      async ({ service }) => {
        calls.push({ tool: 'list_deploys', args: { service } });
        return { content: [{ type: 'text', text: `deploy 42 of ${service} at 09:35 lowered the payment client timeout to 2 s` }] };
      },
    );
    server.registerTool('restart_service', { description: 'Restarts a service', inputSchema: { service: z.string() } }, async (args) => {
      calls.push({ tool: 'restart_service', args });
      return { content: [{ type: 'text', text: 'restarted' }] };
    });
    server.registerTool('slow_query', { description: 'A slow metrics query', inputSchema: { q: z.string() } }, async ({ q }) => {
      calls.push({ tool: 'slow_query', args: { q } });
      if (state.hangSlowQueries > 0) {
        state.hangSlowQueries -= 1;
        for (const wake of hungWaiters) wake();
        hungWaiters = [];
        await new Promise(() => undefined);
      }
      return { content: [{ type: 'text', text: `p99 of ${q}: 2.3 s` }] };
    });
    return server;
  }

  const served = await startStatelessMcpServer(build);
  state.url = served.url;
  state.close = served.close;
  return state;
}
