// The facade in front of the platform's own authorization server `{auth_url}`, for servers
// authorized by `platform` (the Brain). Toward `{auth_url}` the gateway is a confidential client
// like toward any upstream IdP, but nobody registers it by hand: everything about the client
// follows from the configuration, and the platform registers it at start
// (edge/oauth/gateway-client.ts), so replicas that share GATEWAY_STATE_SECRET and
// PUBLIC_GATEWAY_URL all present, and all write, the same client.
import { hkdfSync } from 'node:crypto';
import { GATEWAY_CLIENT_PREFIX } from '../../oauth/gateway-client.ts';
import type { UpstreamOAuthConfig } from '../config.ts';
import type { GatewayServer } from '../registry.ts';
import { callbackUrl } from './facade.ts';

/** The gateway's client at `{auth_url}` for one server. */
export interface PlatformClient {
  clientId: string;
  /** Shown on the authorization server's consent page and in the dashboard's client list. */
  clientName: string;
  /** `{base_url}/{server}/oauth/callback`. */
  redirectUri: string;
  /** Derived from the first GATEWAY_STATE_SECRET: what is registered and presented first. */
  secret: string;
  /** Derived from the other configured secrets: presented when the first is refused (rotation). */
  previousSecrets: string[];
}

export function platformClientId(serverName: string): string {
  return `${GATEWAY_CLIENT_PREFIX}${serverName}`;
}

/** HKDF-SHA256 of a state secret, bound to the client id: 43 base64url characters. */
export function derivePlatformClientSecret(stateSecret: string, clientId: string): string {
  return Buffer.from(hkdfSync('sha256', stateSecret, 'mindgate-gateway-platform-client', clientId, 32)).toString('base64url');
}

export function platformClientFor(server: GatewayServer, stateSecrets: string[]): PlatformClient {
  const clientId = platformClientId(server.name);
  const [secret, ...previousSecrets] = stateSecrets.map((s) => derivePlatformClientSecret(s, clientId));
  return {
    clientId,
    clientName: `Mindgate gateway (${server.name})`,
    redirectUri: callbackUrl(server),
    secret,
    previousSecrets,
  };
}

/**
 * The upstream of the server's facade: `{auth_url}` (endpoints from its metadata), the gateway's
 * client with HTTP Basic, and `resource` = the server's MCP URL, so that the access tokens carry
 * that audience and the organization picked at `{auth_url}`'s consent (`org`), as the Brain needs.
 */
export function platformUpstream(server: GatewayServer, authUrl: string, client: PlatformClient): UpstreamOAuthConfig {
  return {
    issuer: authUrl,
    clientId: client.clientId,
    clientSecret: client.secret,
    previousClientSecrets: client.previousSecrets,
    tokenEndpointAuthMethod: 'client_secret_basic',
    scopes: server.config.scopes,
    resource: server.resource,
    extraAuthorizeParams: {},
  };
}
