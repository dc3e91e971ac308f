// Who may use a server an organization owns: only that organization. The proxy passes a client's
// Authorization through to the backend, so the gateway learns the caller's organization from a
// credential of this platform:
// - an API key of the organization in X-Api-Key (checked by the agents service, remembered for two
//   seconds), which works with any backend: the key is removed, and the access token the backend
//   wants (an upstream IdP's, through the facade) travels beside it in Authorization; or
// - for a server authorized by `platform`, the access token itself: a token of `{auth_url}` issued
//   for the server's MCP URL carries the organization picked at consent (`org`), and is checked
//   here (signature, audience, expiry, revocation) before it is passed on.
// An operator's X-Gateway-Key (checked before this) may call any server. A credential of another
// organization gets a 403; none at all, a 401. The backend learns the organization from
// X-Gateway-Organization, which the gateway always sets or removes itself.
import { createHash } from 'node:crypto';
import { Code, ConnectError, type Client } from '@connectrpc/connect';
import type { IncomingHttpHeaders } from 'node:http';
import type { ApiKeysService } from '../../gen/mindgate/agents/v1/api_keys_pb.js';
import { InvalidTokenError, type TokenVerifier } from '../oauth/verify.ts';
import { CONNECTION_TEST_HEADER, type ConnectionTickets } from './connection-test.ts';
import { buildChallenge, type GatewayServer } from './registry.ts';

export type OrganizationCheck =
  | { ok: true; organizationId: string; via: 'api-key' | 'token' | 'connection-test' }
  | { ok: false; status: 401 | 403; error: string; detail: string; headers: Record<string, string> };

export interface OrganizationAccess {
  /** Whether the request may use `server` (which has an owner). */
  check(headers: IncomingHttpHeaders, server: GatewayServer): Promise<OrganizationCheck>;
}

export interface OrganizationAccessOptions {
  apiKeys: Client<typeof ApiKeysService>;
  tokens: TokenVerifier;
  /** The Agents API's connection test, acting for the organization (connection-test.ts). */
  tickets: ConnectionTickets;
  now?: () => number;
}

const KEY_TTL_MS = 2_000;
const KEY_CACHE_SIZE = 10_000;

export function createOrganizationAccess(options: OrganizationAccessOptions): OrganizationAccess {
  const now = options.now ?? Date.now;
  /** API keys checked lately, by their SHA-256: the organization, or null for a refused key. */
  const keys = new Map<string, { organizationId: string | null; until: number }>();

  async function organizationOfKey(secret: string): Promise<string | null> {
    const id = createHash('sha256').update(secret).digest('hex');
    const known = keys.get(id);
    if (known && known.until > now()) return known.organizationId;
    let organizationId: string | null = null;
    try {
      organizationId = (await options.apiKeys.verifyApiKey({ secret })).apiKey!.organizationId;
    } catch (err) {
      if (!(err instanceof ConnectError) || err.code !== Code.Unauthenticated) throw err;
    }
    if (keys.size >= KEY_CACHE_SIZE) keys.delete(keys.keys().next().value!);
    keys.set(id, { organizationId, until: now() + KEY_TTL_MS });
    return organizationId;
  }

  const refuse = (status: 401 | 403, error: string, detail: string, headers: Record<string, string> = {}): OrganizationCheck => ({
    ok: false,
    status,
    error,
    detail,
    headers,
  });
  const otherOrganization = (server: GatewayServer) =>
    refuse(403, 'forbidden_organization', `Server ${server.name} belongs to another organization.`);

  async function check(headers: IncomingHttpHeaders, server: GatewayServer): Promise<OrganizationCheck> {
    const ticket = headers[CONNECTION_TEST_HEADER];
    if (typeof ticket === 'string') {
      const organizationId = options.tickets.open(ticket, server.name);
      if (organizationId === undefined) return refuse(401, 'invalid_ticket', 'The connection test ticket is not valid.');
      return organizationId === server.owner ? { ok: true, organizationId, via: 'connection-test' } : otherOrganization(server);
    }
    const key = headers['x-api-key'];
    if (typeof key === 'string' && key !== '') {
      const organizationId = await organizationOfKey(key);
      if (organizationId === null) return refuse(401, 'invalid_api_key', 'The X-Api-Key is not valid.');
      return organizationId === server.owner ? { ok: true, organizationId, via: 'api-key' } : otherOrganization(server);
    }
    const bearer = /^Bearer +(\S+) *$/i.exec(headers.authorization ?? '')?.[1];
    if (server.config.auth.kind === 'platform') {
      if (!bearer)
        return refuse(401, 'unauthorized', `Server ${server.name} requires an access token.`, { 'www-authenticate': server.challenge });
      try {
        const claims = await options.tokens.verify(bearer, server.resource);
        if (claims.organizationId !== server.owner) return otherOrganization(server);
        return { ok: true, organizationId: claims.organizationId, via: 'token' };
      } catch (err) {
        if (!(err instanceof InvalidTokenError)) throw err;
        const challenge = buildChallenge(server.resourceMetadataUrl, server.config.scopes, {
          error: 'invalid_token',
          error_description: err.message,
        });
        return refuse(401, 'invalid_token', `Unauthorized: ${err.message}.`, { 'www-authenticate': challenge });
      }
    }
    if (!bearer && server.usesOAuth) {
      return refuse(401, 'unauthorized', `Server ${server.name} requires an access token.`, { 'www-authenticate': server.challenge });
    }
    return refuse(
      401,
      'organization_required',
      `Server ${server.name} belongs to an organization: send one of its API keys in X-Api-Key${server.usesOAuth ? ', beside the access token' : ''}.`,
    );
  }

  return { check };
}
