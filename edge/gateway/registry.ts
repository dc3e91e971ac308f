// The registry of MCP servers the gateway fronts: each with its public URLs (resource, issuer,
// metadata), its authorization mode, and either a backend (a keep-alive connection pool) or a local
// in-process handler mounted by the platform (the Brain).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createBackendClient, type BackendClient } from './backend-client.ts';
import { createUndiciBackendClient } from './backend-client-undici.ts';
import type { GatewayConfig, GatewayServerConfig, UpstreamOAuthConfig } from './config.ts';

/** How the gateway let a request through to a server. */
export type GatewayAuthMode = 'bearer' | 'gateway-key' | 'api-key' | 'none';

/** What a local handler receives for a request under `/{server}`. */
export interface LocalRequest {
  req: IncomingMessage;
  res: ServerResponse;
  server: GatewayServer;
  /** The path under `/{server}`, still percent-encoded: `/mcp`, `/` or `` for `/{server}`. */
  path: string;
  /** `?…` or ``. */
  search: string;
  requestId: string;
  /**
   * `bearer`: an Authorization header is present, unchecked (the handler validates it);
   * `gateway-key`: a valid X-Gateway-Key (already removed from the headers); `api-key`: an
   * x-api-key header, unchecked, without Authorization (local servers only: the Brain checks it
   * against the organization's API keys); `none`: none of these.
   */
  auth: GatewayAuthMode;
  /** The gateway's body limit, for handlers that read bodies themselves. */
  maxBodyBytes: number;
}

export type LocalHandler = (request: LocalRequest) => void | Promise<void>;

export interface Backend {
  /** `http://host:port`. */
  origin: string;
  /** The backend's base path without a trailing slash (`` for the root). */
  basePath: string;
  client: BackendClient;
}

export interface GatewayServer {
  name: string;
  config: GatewayServerConfig;
  /** `/{name}`: what X-Forwarded-Prefix announces. */
  prefix: string;
  /** `<base>/{name}`: the per-server issuer of the OAuth facade. */
  base: string;
  /** `<base>/{name}/{mcpPath}`: the MCP endpoint, the resource clients use. */
  resource: string;
  /** The protected-resource metadata URL named in challenges. */
  resourceMetadataUrl: string;
  /** Authorization servers named in protected-resource metadata (none for kind `none`). */
  authorizationServers: string[];
  /** True when the gateway challenges requests that carry no credentials. */
  usesOAuth: boolean;
  /**
   * The facade's upstream, when the servers file configured one (`oauth`). The upstream of a
   * server authorized by `platform` is built by the gateway surface, which derives its secret.
   */
  upstream?: UpstreamOAuthConfig;
  /** `WWW-Authenticate` for a request without credentials. */
  challenge: string;
  backend?: Backend;
  local?: LocalHandler;
}

export interface ServerRegistry {
  get(name: string): GatewayServer | undefined;
  readonly defaultServer: GatewayServer;
  list(): GatewayServer[];
  /** Serves `name` in-process with `handler` (the server must be configured without a url). */
  mountLocal(name: string, handler: LocalHandler): void;
  close(): Promise<void>;
}

export interface RegistryOptions {
  config: GatewayConfig;
  /** The gateway's public origin (`{base_url}`), without a trailing slash. */
  publicUrl: string;
  /** The platform's authorization server (`{auth_url}`), for servers whose AS is `platform`. */
  platformAuthUrl: string;
}

export function createServerRegistry(options: RegistryOptions): ServerRegistry {
  const { config, publicUrl } = options;
  const servers = new Map<string, GatewayServer>();
  for (const sc of config.servers) {
    const base = `${publicUrl}/${sc.name}`;
    const resource = `${base}/${sc.mcpPath}`;
    const resourceMetadataUrl = `${publicUrl}/.well-known/oauth-protected-resource/${sc.name}/${sc.mcpPath}`;
    let authorizationServers: string[] = [];
    if (sc.auth.kind === 'facade') authorizationServers = [base];
    if (sc.auth.kind === 'external') authorizationServers = [sc.auth.authorizationServer];
    // Clients take the first (RFC 9728 allows several): `{auth_url}` itself, where they register
    // and are listed and revoked per client; the facade in front of it is the alternative.
    if (sc.auth.kind === 'platform') authorizationServers = [options.platformAuthUrl, base];
    const usesOAuth = sc.auth.kind !== 'none';
    servers.set(sc.name, {
      name: sc.name,
      prefix: `/${sc.name}`,
      config: sc,
      base,
      resource,
      resourceMetadataUrl,
      authorizationServers,
      usesOAuth,
      upstream: sc.auth.kind === 'facade' ? sc.auth.upstream : undefined,
      challenge: buildChallenge(resourceMetadataUrl, sc.scopes),
      backend: sc.url ? createBackend(sc.url, config) : undefined,
    });
  }
  const defaultServer = servers.get(config.defaultServer);
  if (!defaultServer) throw new Error(`default server ${config.defaultServer} is not configured`);
  return {
    get: (name) => servers.get(name),
    defaultServer,
    list: () => [...servers.values()],
    mountLocal(name, handler) {
      const server = servers.get(name);
      if (!server) throw new Error(`no MCP server named ${name} is configured`);
      if (server.backend) throw new Error(`MCP server ${name} has a backend URL; it cannot be served locally`);
      server.local = handler;
    },
    async close() {
      await Promise.allSettled([...servers.values()].map((s) => s.backend?.client.close()));
    },
  };
}

function createBackend(url: string, config: GatewayConfig): Backend {
  const u = new URL(url);
  return {
    origin: u.origin,
    basePath: u.pathname.replace(/\/+$/, ''),
    client: (config.backendClient === 'undici' ? createUndiciBackendClient : createBackendClient)({
      url: u,
      connections: config.backendConnections,
      connectTimeoutMs: config.connectTimeoutMs,
      responseTimeoutMs: config.responseTimeoutMs,
      idleTimeoutMs: config.idleTimeoutMs,
      queueTimeoutMs: config.backendQueueTimeoutMs,
    }),
  };
}

/** `Bearer …` with the given parameters, quoted per RFC 6750 §3. */
export function buildChallenge(resourceMetadataUrl: string, scopes: string[], extra: Record<string, string> = {}): string {
  const params: string[] = [];
  for (const [k, v] of Object.entries(extra)) params.push(`${k}="${quote(v)}"`);
  params.push(`resource_metadata="${quote(resourceMetadataUrl)}"`);
  if (scopes.length > 0) params.push(`scope="${quote(scopes.join(' '))}"`);
  return `Bearer ${params.join(', ')}`;
}

function quote(value: string): string {
  return value.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\r\n]/g, ' ');
}
