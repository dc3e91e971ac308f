// Registering a test's MCP backend as one of an organization's MCP servers, through the agents
// service as the REST API would: enabled, without auth, its MCP endpoint at /mcp (as the backends
// of stateless-mcp.ts serve it). The gateway serves it once its registry poll has seen it.
import { McpAuthKind } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import type { TestPlatform } from './platform.ts';

export async function registerMcpServer(platform: TestPlatform, organizationId: string, name: string, url: string): Promise<void> {
  await platform.ctx.clients.mcpServers.createMcpServer({
    organizationId,
    server: { name, url, mcpPath: 'mcp', enabled: true, auth: { kind: McpAuthKind.NONE } },
    createdBy: 'usr_test',
  });
}
