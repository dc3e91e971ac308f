// Which MCP URLs of the gateway the platform's authorization server issues tokens for, beside the
// Brain's: those of the managed servers authorized by `platform`. Their tokens carry the
// organization picked at consent (`org`), which the gateway checks against the server's owner
// (organization-access.ts). The answer comes from the agents service, which owns the registry.
import { Code, ConnectError } from '@connectrpc/connect';
import { McpAuthKind } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { SERVER_NAME_PATTERN } from '../../services/common/gateway-server-names.ts';
import type { AppContext } from '../context.ts';

export function createPlatformResourceCheck(ctx: Pick<AppContext, 'clients' | 'config'>): (indicator: string) => Promise<boolean> {
  const prefix = `${ctx.config.publicUrls.gateway}/`;
  return async (indicator) => {
    if (!indicator.startsWith(prefix)) return false;
    const [name, ...path] = indicator.slice(prefix.length).split('/');
    if (!SERVER_NAME_PATTERN.test(name) || path.length === 0) return false;
    try {
      const { server } = await ctx.clients.mcpServers.findMcpServer({ name });
      return server!.auth?.kind === McpAuthKind.PLATFORM && server!.enabled && path.join('/') === server!.mcpPath;
    } catch (err) {
      if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument)) return false;
      throw err;
    }
  };
}
