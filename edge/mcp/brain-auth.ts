// Who calls the Brain MCP endpoint: a bearer JWT of the platform's authorization server issued
// for this MCP URL (verified locally, with revocation), an API key of the organization
// (x-api-key, checked by the agents service), or the operator's gateway key naming an
// organization. Refusals answer a JSON-RPC error with the challenge of RFC 6750 / RFC 9728.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Code, ConnectError } from '@connectrpc/connect';
import type { AppContext } from '../context.ts';
import { buildChallenge, type LocalRequest } from '../gateway/registry.ts';
import { InvalidTokenError, type AccessTokenClaims } from '../oauth/verify.ts';
import type { BrainCaller } from './brain-access.ts';
import type { ToolCaller } from './brain-tools.ts';

/** Header naming the organization when the operator's infrastructure calls with X-Gateway-Key. */
export const ORGANIZATION_HEADER = 'x-mindgate-organization';

export function jsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(body);
}

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+([^\s]+)\s*$/i.exec(header);
  return match?.[1];
}

export interface Caller extends ToolCaller {
  access: BrainCaller;
}

/** Authenticates a request, or answers the refusal and resolves undefined. */
export function createBrainAuthenticator(ctx: AppContext): (request: LocalRequest) => Promise<Caller | undefined> {
  async function authenticate(request: LocalRequest): Promise<Caller | undefined> {
    const { req, res, server } = request;
    if (request.auth === 'gateway-key') {
      // The operator's own infrastructure: the gateway checked the key; it names the organization.
      const org = req.headers[ORGANIZATION_HEADER];
      if (typeof org !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(org)) {
        jsonRpcError(res, 400, -32600, `Requests with X-Gateway-Key must name the organization in ${ORGANIZATION_HEADER}.`);
        return undefined;
      }
      return { organizationId: org, clientId: 'gateway-key', userId: '', access: { kind: 'machine', organizationId: org } };
    }
    if (request.auth === 'api-key') return authenticateKey(request);
    if (req.headers['x-api-key'] !== undefined) {
      // As at the Agents API: two credentials could act for two organizations.
      jsonRpcError(res, 401, -32001, 'Send either Authorization or x-api-key, not both.', {
        'www-authenticate': buildChallenge(server.resourceMetadataUrl, server.config.scopes, {
          error: 'invalid_request',
          error_description: 'send either Authorization or x-api-key, not both',
        }),
      });
      return undefined;
    }
    const token = bearer(req);
    const challenge = (error: string, description: string) =>
      buildChallenge(server.resourceMetadataUrl, server.config.scopes, { error, error_description: description });
    if (!token) {
      jsonRpcError(res, 401, -32001, 'An access token is required.', {
        'www-authenticate':
          token === undefined && !req.headers.authorization
            ? server.challenge
            : challenge('invalid_request', 'the Authorization header is not a bearer token'),
      });
      return undefined;
    }
    let claims: AccessTokenClaims;
    try {
      claims = await ctx.tokens.verify(token, server.resource);
    } catch (err) {
      if (err instanceof InvalidTokenError) {
        jsonRpcError(res, 401, -32001, `Unauthorized: ${err.message}.`, { 'www-authenticate': challenge('invalid_token', err.message) });
        return undefined;
      }
      throw err;
    }
    const access: BrainCaller =
      claims.subject === claims.clientId
        ? { kind: 'machine', organizationId: claims.organizationId }
        : { kind: 'user', organizationId: claims.organizationId, userId: claims.subject };
    return {
      organizationId: claims.organizationId,
      clientId: claims.clientId,
      userId: claims.subject,
      clientName: claims.clientName,
      userName: claims.userName,
      access,
    };
  }

  /** An API key of the organization, checked by the agents service (its scopes and team come along). */
  async function authenticateKey({ req, res, server }: LocalRequest): Promise<Caller | undefined> {
    const secret = req.headers['x-api-key'];
    try {
      if (typeof secret !== 'string' || secret === '') throw new ConnectError('the API key is not valid', Code.Unauthenticated);
      const { apiKey } = await ctx.clients.apiKeys.verifyApiKey({ secret });
      const key = apiKey!;
      return {
        organizationId: key.organizationId,
        clientId: key.keyId,
        userId: '',
        access: {
          kind: 'api_key',
          organizationId: key.organizationId,
          keyId: key.keyId,
          prefix: key.prefix,
          scopes: key.scopes,
          teamId: key.teamId,
        },
      };
    } catch (err) {
      if (!(err instanceof ConnectError) || err.code !== Code.Unauthenticated) throw err;
      const challenge = buildChallenge(server.resourceMetadataUrl, server.config.scopes, {
        error: 'invalid_token',
        error_description: 'the API key is not valid',
      });
      jsonRpcError(res, 401, -32001, 'Unauthorized: the API key is not valid.', { 'www-authenticate': challenge });
      return undefined;
    }
  }
  return authenticate;
}
