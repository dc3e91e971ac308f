// Servers managed through the Agents API, as the gateway runs them: the agents service's records
// (McpServer) turned into the same settings a servers-file entry gives, with the upstream client
// secret opened from its key-encryption envelope. The REST API seals with the same context.
import type { McpServer } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { McpAuthKind } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { upstreamSecretContext } from '../../services/agents/handlers/mcp-server-settings.ts';
import type { KeyEncryption } from '../../services/common/key-encryption.ts';
import { defaultScopes, type GatewayServerAuth, type GatewayServerConfig } from './config.ts';

const DEFAULT_UPSTREAM_SCOPES = ['openid', 'profile', 'email', 'offline_access'];

function authOf(server: McpServer, kek: KeyEncryption): GatewayServerAuth {
  const auth = server.auth;
  switch (auth?.kind) {
    case McpAuthKind.UPSTREAM_OAUTH: {
      const u = auth.upstreamOauth!;
      return {
        kind: 'facade',
        upstream: {
          issuer: u.issuer || undefined,
          authorizationEndpoint: u.authorizationEndpoint || undefined,
          tokenEndpoint: u.tokenEndpoint || undefined,
          clientId: u.clientId,
          clientSecret: u.sealedClientSecret ? kek.open(u.sealedClientSecret, upstreamSecretContext(server.name)) : undefined,
          tokenEndpointAuthMethod: u.tokenEndpointAuthMethod as 'client_secret_basic' | 'client_secret_post' | 'none',
          // As for a servers-file entry: the server's scopes when the upstream names none.
          scopes: u.scopes.length > 0 ? [...u.scopes] : server.scopes.length > 0 ? [...server.scopes] : [...DEFAULT_UPSTREAM_SCOPES],
          resource: u.resource || undefined,
          audience: u.audience || undefined,
          extraAuthorizeParams: { ...u.extraAuthorizeParams },
        },
      };
    }
    case McpAuthKind.EXTERNAL:
      return { kind: 'external', authorizationServer: auth.authorizationServer };
    case McpAuthKind.PLATFORM:
      return { kind: 'platform' };
    default:
      return { kind: 'none' };
  }
}

/** The gateway's settings of a managed server; throws KeyEncryptionError when its secret does not open. */
export function managedServerConfig(server: McpServer, kek: KeyEncryption): GatewayServerConfig {
  const policy = server.toolPolicy;
  const auth = authOf(server, kek);
  return {
    name: server.name,
    url: server.url,
    mcpPath: server.mcpPath || 'mcp',
    scopes: server.scopes.length > 0 ? [...server.scopes] : defaultScopes(auth),
    auth,
    toolPolicy:
      policy && (policy.allow.length > 0 || policy.deny.length > 0) ? { allow: [...policy.allow], deny: [...policy.deny] } : undefined,
    managed: { id: server.serverId, owner: server.shared ? undefined : server.organizationId, enabled: server.enabled },
  };
}
