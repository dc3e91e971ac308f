// An MCP server for the playbook runner's durability tests (the MCP SDK's, stateless, on port 0)
// with one tool, `collect`, that records the tag of every call; a tag put in `hangOnce` makes its
// next call hang (never answer), so that a test can kill the runner inside that call and count the
// calls made again after the takeover.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { startStatelessMcpServer } from './stateless-mcp.ts';

export interface CollectingMcpServer {
  /** The backend URL to register (its MCP endpoint is /mcp). */
  url: string;
  /** The tag of every `collect` call, in order. */
  calls: string[];
  /** Tags whose next call hangs; each is taken out when its call hangs. */
  hangOnce: Set<string>;
  close(): Promise<void>;
}

export async function startCollectingMcpServer(): Promise<CollectingMcpServer> {
  const calls: string[] = [];
  const hangOnce = new Set<string>();
  const served = await startStatelessMcpServer(() => {
    const server = new McpServer({ name: 'ops', version: '1.0.0' });
    server.registerTool('collect', { description: 'Records a call', inputSchema: { tag: z.string() } }, async ({ tag }) => {
      calls.push(tag);
      if (hangOnce.delete(tag)) await new Promise(() => undefined);
      return { content: [{ type: 'text', text: `collected ${tag}` }] };
    });
    return server;
  });
  return { url: served.url, calls, hangOnce, close: served.close };
}
