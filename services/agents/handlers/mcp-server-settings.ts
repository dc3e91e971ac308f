// The settings of an MCP server as stored, and their validation: the rules of the gateway's
// servers file (services/common/gateway-server-names.ts), checked again here because the service
// owns the data whoever calls it. The edge validates the REST API's bodies first, with messages
// shaped for its callers.
import { McpAuthKind, type McpServer, type UpstreamOAuth } from '../../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import {
  isHttpUrl,
  isMcpPath,
  RESERVED_SERVER_NAMES,
  SCOPE_TOKEN,
  SERVER_NAME_PATTERN,
  TOOL_PATTERN,
} from '../../common/gateway-server-names.ts';
import { invalid, requireText } from '../../common/rpc/validate.ts';

export type AuthKindName = 'none' | 'upstream_oauth' | 'external' | 'platform';
export type TokenEndpointAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface StoredUpstream {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  clientId: string;
  /**
   * A key-encryption envelope made by the edge (context: upstreamSecretContext); opened here only
   * to seal it again under a new key-encryption key at start (sealed-records.ts).
   */
  sealedClientSecret?: string;
  clientSecretSetAt?: number;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  scopes: string[];
  resource?: string;
  audience?: string;
  /** Pairs rather than an object: parameter names may hold characters field names may not ("."). */
  extraAuthorizeParams: [string, string][];
}

/**
 * Binds a server's sealed upstream client secret to the server: an envelope copied to another
 * server does not open. The edge seals and opens with it, the agents service seals again with it.
 */
export function upstreamSecretContext(serverName: string): string {
  return `mcp_servers/${serverName}/client_secret`;
}

export interface McpServerSettings {
  shared: boolean;
  description: string;
  url: string;
  mcpPath: string;
  scopes: string[];
  auth: { kind: AuthKindName; authorizationServer?: string; upstream?: StoredUpstream };
  enabled: boolean;
  toolPolicy: { allow: string[]; deny: string[] };
  integration: string;
}

const KIND_NAMES: Partial<Record<McpAuthKind, AuthKindName>> = {
  [McpAuthKind.NONE]: 'none',
  [McpAuthKind.UPSTREAM_OAUTH]: 'upstream_oauth',
  [McpAuthKind.EXTERNAL]: 'external',
  [McpAuthKind.PLATFORM]: 'platform',
};
const AUTH_METHODS: TokenEndpointAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'none'];
const MAX_TOOLS = 200;
const MAX_SCOPES = 50;

export function requireServerName(value: string): string {
  const name = requireText('server.name', value, 64, { required: true });
  if (!SERVER_NAME_PATTERN.test(name)) invalid('server.name', 'must match [A-Za-z0-9._-]+');
  if (RESERVED_SERVER_NAMES.has(name)) invalid('server.name', 'is reserved by the gateway');
  return name;
}

function requireUrl(field: string, value: string, required: boolean): string {
  if (value === '' && !required) return '';
  if (!isHttpUrl(value) || value.length > 2_048) invalid(field, 'must be an http(s) URL without credentials or fragment');
  return value;
}

function requireScopes(field: string, values: string[]): string[] {
  if (values.length > MAX_SCOPES) invalid(field, `must have at most ${MAX_SCOPES} items`);
  values.forEach((s, i) => {
    if (!SCOPE_TOKEN.test(s) || s.length > 200) invalid(`${field}[${i}]`, 'is not a scope token');
  });
  return [...new Set(values)];
}

function requireTools(field: string, values: string[]): string[] {
  if (values.length > MAX_TOOLS) invalid(field, `must have at most ${MAX_TOOLS} items`);
  values.forEach((t, i) => {
    if (!TOOL_PATTERN.test(t)) invalid(`${field}[${i}]`, 'must be a tool name (1-128 of [A-Za-z0-9_./-]), optionally ending with *');
  });
  return [...new Set(values)];
}

function requireUpstream(u: UpstreamOAuth | undefined): StoredUpstream {
  const field = 'server.auth.upstream_oauth';
  if (!u) invalid(field, 'is required for MCP_AUTH_KIND_UPSTREAM_OAUTH');
  const issuer = requireUrl(`${field}.issuer`, u.issuer, false);
  const authorizationEndpoint = requireUrl(`${field}.authorization_endpoint`, u.authorizationEndpoint, false);
  const tokenEndpoint = requireUrl(`${field}.token_endpoint`, u.tokenEndpoint, false);
  if (!issuer && !(authorizationEndpoint && tokenEndpoint))
    invalid(field, 'needs issuer, or both authorization_endpoint and token_endpoint');
  const clientId = requireText(`${field}.client_id`, u.clientId, 512, { required: true });
  const method = u.tokenEndpointAuthMethod as TokenEndpointAuthMethod;
  if (!AUTH_METHODS.includes(method)) invalid(`${field}.token_endpoint_auth_method`, `must be one of ${AUTH_METHODS.join(', ')}`);
  if (u.sealedClientSecret && !u.sealedClientSecret.startsWith('kek1.')) {
    invalid(`${field}.sealed_client_secret`, 'must be sealed under the key-encryption key');
  }
  if (method !== 'none' && !u.sealedClientSecret) invalid(`${field}.sealed_client_secret`, `${method} needs a client secret`);
  const params = Object.entries(u.extraAuthorizeParams);
  if (params.length > 20) invalid(`${field}.extra_authorize_params`, 'must have at most 20 entries');
  return {
    issuer: issuer.replace(/\/+$/, ''),
    authorizationEndpoint,
    tokenEndpoint,
    clientId,
    sealedClientSecret: u.sealedClientSecret || undefined,
    tokenEndpointAuthMethod: method,
    scopes: requireScopes(`${field}.scopes`, u.scopes),
    resource: requireText(`${field}.resource`, u.resource, 2_048) || undefined,
    audience: requireText(`${field}.audience`, u.audience, 2_048) || undefined,
    extraAuthorizeParams: params,
  };
}

function requireAuth(server: McpServer): McpServerSettings['auth'] {
  const kind = server.auth ? KIND_NAMES[server.auth.kind] : undefined;
  if (!kind) invalid('server.auth.kind', 'must be NONE, UPSTREAM_OAUTH, EXTERNAL or PLATFORM');
  if (kind === 'external') {
    return { kind, authorizationServer: requireUrl('server.auth.authorization_server', server.auth!.authorizationServer, true) };
  }
  if (kind === 'upstream_oauth') return { kind, upstream: requireUpstream(server.auth!.upstreamOauth) };
  return { kind };
}

/** The settings of a server in a create or update request, checked. */
export function requireSettings(server: McpServer): McpServerSettings {
  const mcpPath = server.mcpPath || 'mcp';
  if (!isMcpPath(mcpPath) || mcpPath.length > 200) invalid('server.mcp_path', 'must be a relative path such as "mcp"');
  return {
    shared: server.shared,
    description: requireText('server.description', server.description, 1_000),
    url: requireUrl('server.url', server.url, true),
    mcpPath,
    scopes: requireScopes('server.scopes', server.scopes),
    auth: requireAuth(server),
    enabled: server.enabled,
    toolPolicy: {
      allow: requireTools('server.tool_policy.allow', server.toolPolicy?.allow ?? []),
      deny: requireTools('server.tool_policy.deny', server.toolPolicy?.deny ?? []),
    },
    integration: requireText('server.integration', server.integration, 64),
  };
}
