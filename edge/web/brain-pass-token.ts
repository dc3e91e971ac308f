// The credential a brain-pass buys: an access token of the platform's authorization server for the
// Brain MCP server of the pass's organization, signed with its current key, exactly as the tokens
// the authorization server issues (typ at+jwt, issuer {auth_url}, audience {base_url}/brain/mcp), so
// the Brain verifies it like any other and revocation applies to it (client `brain-pass`). It lasts
// as long as the pass; there is no refresh token.
import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT, type JWK } from 'jose';
import type { AppContext } from '../context.ts';
import { loadAuthKeys } from '../oauth/keys.ts';

export const PASS_CLIENT_ID = 'brain-pass';

export interface PassToken {
  token: string;
  audience: string;
  expiresAt: number;
}

export function createPassTokenMinter(ctx: AppContext) {
  let key: Promise<{ jwk: JWK; key: Awaited<ReturnType<typeof importJWK>> }> | undefined;
  const signingKey = () => {
    key ??= loadAuthKeys(ctx.config.auth, ctx.stores.records, ctx.keyEncryption).then(async (keys) => {
      const jwk = keys.signing.keys[0];
      return { jwk, key: await importJWK(jwk, jwk.alg ?? 'RS256') };
    });
    key.catch(() => (key = undefined));
    return key;
  };
  const audience = `${ctx.config.publicUrls.gateway}/brain/mcp`;
  return async (organizationId: string, subject: string, expiresAt: number): Promise<PassToken> => {
    const { jwk, key: privateKey } = await signingKey();
    const issuedAt = Math.floor(ctx.now() / 1000);
    const token = await new SignJWT({ org: organizationId, client_id: PASS_CLIENT_ID, scope: '' })
      .setProtectedHeader({ alg: jwk.alg ?? 'RS256', kid: jwk.kid, typ: 'at+jwt' })
      .setIssuer(ctx.config.publicUrls.auth)
      .setAudience(audience)
      .setSubject(subject)
      .setJti(randomUUID())
      .setIssuedAt(issuedAt)
      .setExpirationTime(Math.floor(expiresAt / 1000))
      .sign(privateKey);
    return { token, audience, expiresAt };
  };
}
