// The gateway's settings: the registry of MCP servers (GATEWAY_SERVERS_FILE, JSON or YAML,
// validated at start), operator keys, the state secret of the OAuth facade, and proxy limits.
import fs from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, readBool, readEnum, readInt, readString, type Env } from '../../services/common/config.ts';
import { RESERVED_SERVER_NAMES, SERVER_NAME_PATTERN } from '../../services/common/gateway-server-names.ts';
import {
  hasUpstreamEndpoints,
  httpUrl,
  SERVER_FIELDS,
  UPSTREAM_ENDPOINTS_MESSAGE,
  UPSTREAM_FIELDS,
  type UpstreamEntry,
} from './server-schema.ts';

/** The upstream identity provider behind a server's OAuth facade, and the gateway's client there. */
export interface UpstreamOAuthConfig {
  /** Issuer whose metadata (RFC 8414 or OIDC discovery) names the endpoints. */
  issuer?: string;
  /** Explicit endpoints; they win over discovered ones. */
  authorizationEndpoint?: string;
  tokenEndpoint?: string;
  /** The client pre-registered at the upstream for this server: what DCR hands out. */
  clientId: string;
  clientSecret?: string;
  /**
   * Earlier secrets of the same client, tried in order when the upstream refuses `clientSecret`
   * with `invalid_client` (the platform's client while a GATEWAY_STATE_SECRET rotation rolls out).
   */
  previousClientSecrets?: string[];
  tokenEndpointAuthMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  /** Scopes requested upstream and advertised to MCP clients. */
  scopes: string[];
  /** Sent upstream as `resource` (RFC 8707) instead of whatever the client sent. */
  resource?: string;
  /** Sent upstream as `audience` (Auth0, Okta). */
  audience?: string;
  /** Extra parameters added to the upstream authorization request. */
  extraAuthorizeParams: Record<string, string>;
}

export type GatewayServerAuth =
  /** The backend needs no OAuth: the proxy forwards without a challenge. */
  | { kind: 'none' }
  /** The gateway's stateless OAuth facade in front of an upstream IdP. */
  | { kind: 'facade'; upstream: UpstreamOAuthConfig }
  /**
   * The platform's own authorization server `{auth_url}` (`authorization_server: platform`, the
   * Brain's): clients register there themselves, and the gateway's facade also fronts it, with a
   * confidential client of the gateway's that the platform registers at start
   * (oauth/platform-client.ts). Protected-resource metadata names `{auth_url}` first, the facade
   * `{base_url}/{name}` second.
   */
  | { kind: 'platform' }
  /**
   * Another authorization server that registers clients itself: the gateway only publishes
   * protected-resource metadata naming it.
   */
  | { kind: 'external'; authorizationServer: string };

/** Which tools of a server the gateway lets through (tool-policy.ts). */
export interface ToolPolicyConfig {
  /** When not empty, only these tools (a name ending with `*` is a prefix). */
  allow: string[];
  /** Never these tools. */
  deny: string[];
}

export interface GatewayServerConfig {
  name: string;
  /** Backend base URL; undefined when the server is served in-process (see mountLocal). */
  url?: string;
  /** Path segment(s) of the MCP endpoint under `/{name}`, used in resource URLs and challenges. */
  mcpPath: string;
  /** Scopes named in challenges and metadata. */
  scopes: string[];
  auth: GatewayServerAuth;
  /** Tools the gateway filters from tools/list and refuses in tools/call; none when absent. */
  toolPolicy?: ToolPolicyConfig;
  /**
   * Servers managed through the Agents API (managed-servers.ts): their id, the organization that
   * alone may use them (undefined: shared with every organization), and whether they are enabled.
   * Servers of the servers file have none of these: they are shared and always enabled.
   */
  managed?: { id: string; owner?: string; enabled: boolean };
}

export interface GatewayConfig {
  serversFile?: string;
  servers: GatewayServerConfig[];
  /** The server the root well-known forms and root /authorize, /token, /register describe. */
  defaultServer: string;
  /** Operator keys accepted in X-Gateway-Key (beside those created through the Agents API). */
  keys: string[];
  /** How often each replica asks the agents service whether the managed registry changed. */
  registryPollMs: number;
  /** Organizations' servers may reach loopback, private and link-local addresses (services/common/net/address-policy.ts). */
  allowPrivateBackends: boolean;
  /** HMAC/encryption secrets of the facade (first one signs; all verify). Empty: generated. */
  stateSecrets: string[];
  maxBodyBytes: number;
  connectTimeoutMs: number;
  /** Time allowed for a backend's response headers. */
  responseTimeoutMs: number;
  /** Longest silence between two chunks of a backend response body (0: no limit). */
  idleTimeoutMs: number;
  /** Keep-alive connections per backend. */
  backendConnections: number;
  /** Longest wait for a free backend connection before a 503 with Retry-After. */
  backendQueueTimeoutMs: number;
  /** Which HTTP/1.1 client speaks to backends (edge/gateway/backend-client-interface.ts). */
  backendClient: BackendClientKind;
  /** Append to a client's X-Forwarded-For instead of replacing it (behind a trusted proxy). */
  trustForwardedFor: boolean;
  /** Keep V8's allocation-site pretenuring (off by default: see v8-tuning.ts). */
  v8Pretenuring: boolean;
}

export const BACKEND_CLIENTS = ['builtin', 'undici'] as const;
export type BackendClientKind = (typeof BACKEND_CLIENTS)[number];

export { RESERVED_SERVER_NAMES, SERVER_NAME_PATTERN };

/** The registry without a servers file: just the Brain, served by this platform. */
export const BRAIN_SERVER: GatewayServerConfig = {
  name: 'brain',
  mcpPath: 'mcp',
  scopes: ['openid', 'profile', 'email', 'offline_access'],
  auth: { kind: 'platform' },
};

export function readGatewayConfig(env: Env): GatewayConfig {
  const serversFile = readString(env, 'GATEWAY_SERVERS_FILE');
  const { servers, defaultServer } = serversFile ? readServersFile(serversFile, env) : { servers: [BRAIN_SERVER], defaultServer: 'brain' };
  return {
    serversFile,
    servers,
    defaultServer,
    keys: readList(env, 'GATEWAY_KEYS', 16),
    registryPollMs: readInt(env, 'GATEWAY_REGISTRY_POLL_MS', 1_000, { min: 50, max: 60_000 }),
    allowPrivateBackends: readBool(env, 'GATEWAY_ALLOW_PRIVATE_BACKENDS', false),
    stateSecrets: readList(env, 'GATEWAY_STATE_SECRET', 32),
    maxBodyBytes: readInt(env, 'GATEWAY_MAX_BODY_BYTES', 4 * 1_048_576, { min: 1_024, max: 1_073_741_824 }),
    connectTimeoutMs: readInt(env, 'GATEWAY_CONNECT_TIMEOUT_MS', 5_000, { min: 100, max: 600_000 }),
    responseTimeoutMs: readInt(env, 'GATEWAY_RESPONSE_TIMEOUT_MS', 120_000, { min: 100, max: 3_600_000 }),
    idleTimeoutMs: readInt(env, 'GATEWAY_IDLE_TIMEOUT_MS', 300_000, { min: 0, max: 86_400_000 }),
    backendConnections: readInt(env, 'GATEWAY_BACKEND_CONNECTIONS', 128, { min: 1, max: 65_536 }),
    backendQueueTimeoutMs: readInt(env, 'GATEWAY_BACKEND_QUEUE_TIMEOUT_MS', 5_000, { min: 10, max: 600_000 }),
    backendClient: readEnum(env, 'GATEWAY_BACKEND_CLIENT', BACKEND_CLIENTS, 'builtin'),
    trustForwardedFor: readBool(env, 'GATEWAY_TRUST_FORWARDED_FOR', false),
    v8Pretenuring: readBool(env, 'GATEWAY_V8_PRETENURING', false),
  };
}

/** Comma-separated secrets, each at least `minLength` characters; never echoed in errors. */
function readList(env: Env, name: string, minLength: number): string[] {
  const value = readString(env, name);
  if (!value) return [];
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  items.forEach((item, i) => {
    if (item.length < minLength) throw new ConfigError(name, `entry ${i + 1} must be at least ${minLength} characters long`);
  });
  return items;
}

// --- the servers file --------------------------------------------------------------------------

const upstreamSchema = z
  .object({
    ...UPSTREAM_FIELDS,
    client_secret: z.string().min(1).optional(),
    client_secret_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
      .optional(),
  })
  .strict()
  .refine(hasUpstreamEndpoints, { message: UPSTREAM_ENDPOINTS_MESSAGE })
  .refine((u) => !(u.client_secret && u.client_secret_env), { message: 'client_secret and client_secret_env are exclusive' });

const serverSchema = z
  .object({
    ...SERVER_FIELDS,
    url: httpUrl.optional(),
    local: z.boolean().optional(),
    oauth: upstreamSchema.optional(),
  })
  .strict()
  .refine((s) => Boolean(s.url) !== Boolean(s.local), { message: 'needs exactly one of url or local: true' })
  .refine((s) => !(s.oauth && s.authorization_server), { message: 'oauth and authorization_server are exclusive' });

const fileSchema = z
  .object({
    default_server: z.string().optional(),
    servers: z.array(serverSchema).min(1),
  })
  .strict();

/** What an entry of the servers file (or an API body of the same shape) says about authorization. */
export interface AuthEntry {
  scopes?: string[];
  oauth?: UpstreamEntry;
  authorization_server?: string;
}

/** The authorization of an entry, with the client secret it names (from the file or the environment). */
export function authOfEntry(s: AuthEntry, secret: string | undefined, fail: (message: string) => never): GatewayServerAuth {
  if (s.oauth) {
    const o = s.oauth;
    const method = o.token_endpoint_auth_method ?? (secret ? 'client_secret_basic' : 'none');
    if (method !== 'none' && !secret) fail(`${method} needs client_secret or client_secret_env`);
    return {
      kind: 'facade',
      upstream: {
        issuer: o.issuer?.replace(/\/+$/, ''),
        authorizationEndpoint: o.authorization_endpoint,
        tokenEndpoint: o.token_endpoint,
        clientId: o.client_id,
        clientSecret: secret,
        tokenEndpointAuthMethod: method,
        scopes: o.scopes ?? s.scopes ?? ['openid', 'profile', 'email', 'offline_access'],
        resource: o.resource,
        audience: o.audience,
        extraAuthorizeParams: o.extra_authorize_params ?? {},
      },
    };
  }
  if (s.authorization_server === 'platform') return { kind: 'platform' };
  if (s.authorization_server) {
    return { kind: 'external', authorizationServer: s.authorization_server.replace(/\/+$/, '') || s.authorization_server };
  }
  return { kind: 'none' };
}

/** The scopes a server names when its entry lists none. */
export function defaultScopes(auth: GatewayServerAuth): string[] {
  if (auth.kind === 'facade') return auth.upstream.scopes;
  return auth.kind === 'none' ? [] : BRAIN_SERVER.scopes;
}

function readServersFile(file: string, env: Env): { servers: GatewayServerConfig[]; defaultServer: string } {
  const fail = (message: string): never => {
    throw new ConfigError('GATEWAY_SERVERS_FILE', `${file}: ${message}`);
  };
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    fail(`cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let data: unknown;
  try {
    // YAML 1.2 is a superset of JSON, so one parser reads both.
    data = parseYaml(text);
  } catch (err) {
    fail(`is neither JSON nor YAML (${(err as Error).message.split('\n')[0]})`);
  }
  const parsed = fileSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path
      .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
      .join('')
      .replace(/^\./, '');
    fail(`${where || 'document'}: ${issue.message}`);
  }
  const doc = parsed.data!;
  const servers: GatewayServerConfig[] = [];
  const seen = new Set<string>();
  for (const [i, s] of doc.servers.entries()) {
    if (seen.has(s.name)) fail(`servers[${i}].name: duplicate server "${s.name}"`);
    seen.add(s.name);
    let secret = s.oauth?.client_secret;
    if (s.oauth?.client_secret_env) {
      secret = readString(env, s.oauth.client_secret_env);
      if (!secret) fail(`servers[${i}].oauth.client_secret_env: ${s.oauth.client_secret_env} is not set`);
    }
    const auth = authOfEntry(s, secret, (message) => fail(`servers[${i}].oauth: ${message}`));
    servers.push({
      name: s.name,
      url: s.url,
      mcpPath: s.mcp_path ?? 'mcp',
      scopes: s.scopes ?? defaultScopes(auth),
      auth,
      toolPolicy: s.tool_policy && { allow: s.tool_policy.allow ?? [], deny: s.tool_policy.deny ?? [] },
    });
  }
  // The Brain is always there, served by this platform, unless the file describes it itself.
  if (!seen.has('brain')) servers.push(BRAIN_SERVER);
  const defaultServer = doc.default_server ?? 'brain';
  if (!servers.some((s) => s.name === defaultServer)) fail(`default_server: no server named "${defaultServer}"`);
  return { servers, defaultServer };
}
