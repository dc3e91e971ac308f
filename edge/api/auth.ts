// Who is calling the REST API: a JWT access token issued for `{api_url}` (Authorization:
// Bearer), or an organization's API key (x-api-key). Either one acts for exactly one
// organization; organization-scoped operations refuse every other one with 403.
import { Code, ConnectError } from '@connectrpc/connect';
import type { AppContext } from '../context.ts';
import { InvalidTokenError } from '../oauth/verify.ts';

export interface Caller {
  kind: 'user' | 'client' | 'api_key';
  /** The organization the credential acts for. */
  organizationId: string;
  /** The user (user tokens), the client (client_credentials tokens) or the key id. */
  subject: string;
  clientId?: string;
  /** What a machine (API key, client) may do: an API key's scopes; a client's are ["read"]. */
  scopes?: string[];
  /** An API key's team (it reaches what the team's Brain access allows) and its shown prefix. */
  teamId?: string;
  keyPrefix?: string;
}

/** 401: no credentials, or credentials that are not valid. The message is safe to show. */
export class UnauthenticatedError extends Error {
  readonly challenge: string;
  constructor(message: string, challenge: string) {
    super(message);
    this.name = 'UnauthenticatedError';
    this.challenge = challenge;
  }
}

/** 403: valid credentials that may not do this. */
export class ForbiddenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForbiddenError';
  }
}

function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, '')}"`;
}

export function createAuthenticator(ctx: AppContext) {
  const audience = ctx.config.publicUrls.api;
  const metadata = `${audience}/.well-known/oauth-protected-resource`;
  const base = `Bearer realm="mindgate-api", resource_metadata=${quoted(metadata)}`;

  return async function authenticate(headers: Record<string, string | string[] | undefined>): Promise<Caller> {
    const apiKey = headers['x-api-key'];
    const authorization = headers.authorization;
    if (apiKey !== undefined && authorization !== undefined) {
      // Two credentials could act for two organizations: which one counts must not be a guess.
      throw new UnauthenticatedError('send either Authorization or x-api-key, not both', `${base}, error="invalid_request"`);
    }
    if (typeof apiKey === 'string' && apiKey !== '') {
      try {
        const { apiKey: key } = await ctx.clients.apiKeys.verifyApiKey({ secret: apiKey });
        return {
          kind: 'api_key',
          organizationId: key!.organizationId,
          subject: key!.keyId,
          scopes: key!.scopes,
          teamId: key!.teamId,
          keyPrefix: key!.prefix,
        };
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.Unauthenticated) {
          throw new UnauthenticatedError(
            'the API key is not valid',
            `${base}, error="invalid_token", error_description="the API key is not valid"`,
          );
        }
        throw err;
      }
    }
    if (typeof authorization !== 'string' || authorization === '') {
      throw new UnauthenticatedError('send Authorization: Bearer <access token> or x-api-key', base);
    }
    const match = /^Bearer +([^\s]+) *$/i.exec(authorization);
    if (!match) {
      throw new UnauthenticatedError('the Authorization header must be "Bearer <access token>"', `${base}, error="invalid_request"`);
    }
    try {
      const claims = await ctx.tokens.verify(match[1], audience);
      const isClient = claims.subject === claims.clientId;
      return {
        kind: isClient ? 'client' : 'user',
        organizationId: claims.organizationId,
        subject: claims.subject,
        clientId: claims.clientId,
        scopes: isClient ? ['read'] : undefined,
      };
    } catch (err) {
      if (err instanceof InvalidTokenError) {
        throw new UnauthenticatedError(err.message, `${base}, error="invalid_token", error_description=${quoted(err.message)}`);
      }
      throw err;
    }
  };
}
