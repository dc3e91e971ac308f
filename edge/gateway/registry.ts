// The registry of MCP servers the gateway fronts: each with its public URLs (resource, issuer,
// metadata), its authorization mode, and either a backend (a keep-alive connection pool) or a local
// in-process handler mounted by the platform (the Brain). The servers of the servers file are fixed
// at start; those managed through the Agents API are replaced whenever the registry sync
// (registry-sync.ts) sees a new version. A lookup is one Map read, whichever the source.
//
// A replaced server keeps its backend pool when its URL did not change, so requests and streams
// in flight are not touched; a pool that is no longer used (a removed server, a new URL) is
// closed only once its last connection has gone, so a stream in flight finishes where it started.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createBackendClient, type BackendClient } from './backend-client.ts';
import { createUndiciBackendClient } from './backend-client-undici.ts';
import type { GatewayConfig, GatewayServerConfig, UpstreamOAuthConfig } from './config.ts';
import { compileToolPolicy, type ToolPolicy } from './tool-policy.ts';
import { guardedLookup, hostOf, isPrivateAddress } from '../../services/common/net/address-policy.ts';

/** Connections to an organization's server go only to public addresses (address-policy.ts). */
const PUBLIC_ONLY_LOOKUP = guardedLookup(false);

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
  /** The tools the proxy lets through; undefined when all (nothing is parsed then). */
  toolPolicy?: ToolPolicy;
  /** `/{mcpPath}`: the path under `/{name}` whose messages the tool policy reads. */
  mcpEndpoint: string;
  /** The organization that alone may use the server; undefined when it is shared. */
  owner?: string;
  /** False when its owner disabled it: registered, but not proxied. */
  enabled: boolean;
}

export interface ServerRegistry {
  get(name: string): GatewayServer | undefined;
  readonly defaultServer: GatewayServer;
  list(): GatewayServer[];
  /** Serves `name` in-process with `handler` (the server must be configured without a url). */
  mountLocal(name: string, handler: LocalHandler): void;
  /**
   * Replaces the servers managed through the Agents API by `configs` (each with `managed`). A
   * name the servers file uses stays the file's. Answers what was added, changed or removed.
   */
  replaceManaged(configs: GatewayServerConfig[]): RegistryChange;
  close(): Promise<void>;
}

export interface RegistryChange {
  /** Servers that are new, or whose settings changed (the new objects). */
  updated: GatewayServer[];
  /** Names of servers no longer managed. */
  removed: string[];
  /** Managed servers ignored because the servers file has a server of that name. */
  shadowed: string[];
}

export interface RegistryOptions {
  config: GatewayConfig;
  /** The gateway's public origin (`{base_url}`), without a trailing slash. */
  publicUrl: string;
  /** The platform's authorization server (`{auth_url}`), for servers whose AS is `platform`. */
  platformAuthUrl: string;
}

/** A server's public face, from its settings; the backend is attached by the caller. */
function describeServer(sc: GatewayServerConfig, options: RegistryOptions): GatewayServer {
  const { publicUrl } = options;
  const base = `${publicUrl}/${sc.name}`;
  const resourceMetadataUrl = `${publicUrl}/.well-known/oauth-protected-resource/${sc.name}/${sc.mcpPath}`;
  let authorizationServers: string[] = [];
  if (sc.auth.kind === 'facade') authorizationServers = [base];
  if (sc.auth.kind === 'external') authorizationServers = [sc.auth.authorizationServer];
  // Clients take the first (RFC 9728 allows several): `{auth_url}` itself, where they register
  // and are listed and revoked per client; the facade in front of it is the alternative (for the
  // servers of the file, whose gateway clients the platform registers at start).
  if (sc.auth.kind === 'platform') authorizationServers = sc.managed ? [options.platformAuthUrl] : [options.platformAuthUrl, base];
  return {
    name: sc.name,
    prefix: `/${sc.name}`,
    config: sc,
    base,
    resource: `${base}/${sc.mcpPath}`,
    resourceMetadataUrl,
    authorizationServers,
    usesOAuth: sc.auth.kind !== 'none',
    upstream: sc.auth.kind === 'facade' ? sc.auth.upstream : undefined,
    challenge: buildChallenge(resourceMetadataUrl, sc.scopes),
    toolPolicy: compileToolPolicy(sc.toolPolicy),
    mcpEndpoint: `/${sc.mcpPath}`,
    owner: sc.managed?.owner,
    enabled: sc.managed?.enabled ?? true,
  };
}

export function createServerRegistry(options: RegistryOptions): ServerRegistry {
  const { config } = options;
  const servers = new Map<string, GatewayServer>();
  const fileNames = new Set<string>();
  /** Settings of each managed server as last applied, to tell a change from a repeat. */
  const applied = new Map<string, string>();
  /** Pools no longer used, each with the timer that closes it once its connections are gone. */
  const retiring = new Map<Backend, NodeJS.Timeout>();
  for (const sc of config.servers) {
    servers.set(sc.name, { ...describeServer(sc, options), backend: sc.url ? createBackend(sc.url, config) : undefined });
    fileNames.add(sc.name);
  }
  const defaultServer = servers.get(config.defaultServer);
  if (!defaultServer) throw new Error(`default server ${config.defaultServer} is not configured`);

  /** Closes a pool once nothing uses it: at its last connection's end (idle ones close within seconds). */
  function retire(backend: Backend): void {
    const timer = setInterval(() => {
      if (backend.client.connections > 0) return;
      clearInterval(timer);
      retiring.delete(backend);
      void backend.client.close();
    }, 1_000);
    timer.unref();
    retiring.set(backend, timer);
  }

  function replaceManaged(configs: GatewayServerConfig[]): RegistryChange {
    const change: RegistryChange = { updated: [], removed: [], shadowed: [] };
    const wanted = new Set<string>();
    for (const sc of configs) {
      if (fileNames.has(sc.name)) {
        change.shadowed.push(sc.name);
        continue;
      }
      wanted.add(sc.name);
      const fingerprint = JSON.stringify(sc);
      if (applied.get(sc.name) === fingerprint) continue;
      const previous = servers.get(sc.name);
      const reuse = previous?.backend && sameBackend(previous.config, sc) ? previous.backend : undefined;
      if (previous?.backend && !reuse) retire(previous.backend);
      const server = { ...describeServer(sc, options), backend: reuse ?? managedBackend(sc, config) };
      servers.set(sc.name, server);
      applied.set(sc.name, fingerprint);
      change.updated.push(server);
    }
    for (const name of applied.keys()) {
      if (wanted.has(name)) continue;
      const previous = servers.get(name);
      if (previous?.backend) retire(previous.backend);
      servers.delete(name);
      applied.delete(name);
      change.removed.push(name);
    }
    return change;
  }

  return {
    get: (name) => servers.get(name),
    defaultServer,
    list: () => [...servers.values()],
    mountLocal(name, handler) {
      const server = servers.get(name);
      if (!server || !fileNames.has(name)) throw new Error(`no MCP server named ${name} is configured`);
      if (server.backend) throw new Error(`MCP server ${name} has a backend URL; it cannot be served locally`);
      server.local = handler;
    },
    replaceManaged,
    async close() {
      for (const timer of retiring.values()) clearInterval(timer);
      const backends = [...[...servers.values()].map((s) => s.backend), ...retiring.keys()];
      retiring.clear();
      await Promise.allSettled(backends.map((b) => b?.client.close()));
    },
  };
}

/** A pool serves a new version of a server when it goes to the same place under the same rules. */
const sameBackend = (a: GatewayServerConfig, b: GatewayServerConfig) => a.url === b.url && a.managed?.owner === b.managed?.owner;

function createBackend(url: string, config: GatewayConfig, publicOnly = false): Backend {
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
      lookup: publicOnly ? PUBLIC_ONLY_LOOKUP : undefined,
    }),
  };
}

/**
 * The backend of a managed server: an organization's may reach public addresses only, unless the
 * operator allows private ones (services/common/net/address-policy.ts); none when its URL is a private IP literal.
 */
function managedBackend(sc: GatewayServerConfig, config: GatewayConfig): Backend | undefined {
  if (!sc.url) return undefined;
  const limited = sc.managed?.owner !== undefined && !config.allowPrivateBackends;
  if (limited && isPrivateAddress(hostOf(sc.url))) return undefined;
  return createBackend(sc.url, config, limited);
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
