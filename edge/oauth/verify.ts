// Verification of the access tokens this authorization server issues, for every resource server
// of the platform (the REST API, the Brain MCP server). Validation is local: signature against
// the published keys, issuer, audience, expiry, type; then a revocation check against the records
// store, cached for at most two seconds, so a token revoked anywhere stops working within seconds.
// A client sends the same token with every request until it expires, and the RS256 signature
// check was the largest part of an authenticated MCP call's own CPU: the outcome of the checks
// that cannot change (signature, issuer, type, audience) is remembered per token for a bounded
// number of tokens, while expiry and revocation are checked on every call.
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWK, type JWTPayload } from 'jose';
import type { RevocationStore } from './revocations.ts';

export interface AccessTokenClaims {
  /** The user (authorization code) or the client itself (client_credentials). */
  subject: string;
  /** The organization the token acts for. */
  organizationId: string;
  clientId: string;
  scopes: string[];
  /** The resource the token was issued for. */
  audience: string;
  /** Epoch seconds. */
  expiresAt: number;
  /** The jti: what single-token revocation names. */
  tokenId: string;
  /** Epoch seconds. */
  issuedAt: number;
  /** The grant (refresh-token family) the token belongs to; absent for client_credentials. */
  grantId?: string;
  /**
   * The client's registered name (`client_name`); for the gateway's facade client, the name the
   * original client registered at the facade. For display only: clients choose their names.
   */
  clientName?: string;
  /** The user's display name (`name`), when the token was issued with the profile scope. */
  userName?: string;
}

/** The token is missing, malformed, expired, for another audience or revoked. The message is safe to show. */
export class InvalidTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidTokenError';
  }
}

export interface VerifyOptions {
  /**
   * Seconds past its expiry a token is still taken: only to prove what a token was issued for
   * (a brain-pass renewal names its organization with its last pass), never to grant access.
   */
  expiredGraceSeconds?: number;
}

export interface TokenVerifier {
  /** Resolves the claims of a valid, unrevoked token issued for `audience`; throws InvalidTokenError otherwise. */
  verify(token: string, audience: string, options?: VerifyOptions): Promise<AccessTokenClaims>;
  /** The same checks without the audience (introspection and revocation at the authorization server). */
  verifyAnyAudience(token: string): Promise<AccessTokenClaims>;
}

export interface TokenVerifierOptions {
  issuer: string;
  /** Public keys of the authorization server (its jwks_uri document). */
  jwks: { keys: JWK[] };
  revocations: RevocationStore;
  /** Leeway for exp/iat, in seconds. */
  clockToleranceSeconds?: number;
  now?: () => number;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** Tokens whose signature checks are remembered (about 1 KB each). */
const VERIFIED_CACHE_SIZE = 4_096;

export function isJwtShaped(token: string): boolean {
  return token.length < 16_384 && JWT_SHAPE.test(token);
}

export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const keySet = createLocalJWKSet(options.jwks);
  const now = options.now ?? Date.now;

  /** Payloads of tokens that passed the signature, issuer, type and audience checks, oldest first. */
  const verified = new Map<string, JWTPayload>();
  const tolerance = options.clockToleranceSeconds ?? 5;

  async function verifySignature(token: string, audience: string | undefined, grace = 0): Promise<JWTPayload> {
    const cacheKey = audience === undefined ? token : `${audience}\n${token}`;
    const known = verified.get(cacheKey);
    if (known) {
      // jwtVerify checked these when the token was first seen; time has moved on since.
      const seconds = now() / 1000;
      if ((known.exp as number) + tolerance + grace <= seconds) {
        if (grace === 0) verified.delete(cacheKey);
        throw new InvalidTokenError('the access token has expired');
      }
      return known;
    }
    try {
      const { payload } = await jwtVerify(token, keySet, {
        issuer: options.issuer,
        audience,
        typ: 'at+jwt',
        algorithms: ['RS256', 'PS256', 'ES256', 'EdDSA'],
        clockTolerance: tolerance + grace,
        currentDate: new Date(now()),
        requiredClaims: ['exp', 'iat', 'jti', 'sub', 'aud'],
      });
      if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
      verified.set(cacheKey, payload);
      return payload;
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new InvalidTokenError('the access token has expired');
      if (err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud') {
        throw new InvalidTokenError('the access token was not issued for this resource');
      }
      throw new InvalidTokenError('the access token is invalid');
    }
  }

  async function check(token: string, audience: string | undefined, grace?: number): Promise<AccessTokenClaims> {
    if (typeof token !== 'string' || !isJwtShaped(token)) throw new InvalidTokenError('the access token is malformed');
    const payload = await verifySignature(token, audience, grace);
    const organizationId = payload.org;
    const clientId = payload.client_id;
    if (typeof organizationId !== 'string' || !organizationId || typeof clientId !== 'string') {
      throw new InvalidTokenError('the access token does not name an organization');
    }
    const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud as string];
    const claims: AccessTokenClaims = {
      subject: payload.sub as string,
      organizationId,
      clientId,
      scopes: typeof payload.scope === 'string' && payload.scope ? payload.scope.split(' ') : [],
      audience: audience ?? aud[0],
      expiresAt: payload.exp as number,
      tokenId: payload.jti as string,
      issuedAt: payload.iat as number,
      grantId: typeof payload.gid === 'string' ? payload.gid : undefined,
      clientName: typeof payload.client_name === 'string' && payload.client_name ? payload.client_name : undefined,
      userName: typeof payload.name === 'string' && payload.name ? payload.name : undefined,
    };
    const revoked = await options.revocations.isRevoked({
      tokenId: claims.tokenId,
      grantId: claims.grantId,
      clientId,
      organizationId,
      issuedAt: claims.issuedAt,
    });
    if (revoked) throw new InvalidTokenError('the access token has been revoked');
    return claims;
  }

  return {
    verify: (token, audience, options) => check(token, audience, Math.max(0, options?.expiredGraceSeconds ?? 0)),
    verifyAnyAudience: (token) => check(token, undefined),
  };
}
