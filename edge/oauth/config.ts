// Settings of the authorization server `{auth_url}` and of accounts (EdgeConfig.auth).
import { ConfigError, readInt, readSecret, readString, readUrl, type Env } from '../../services/common/config.ts';

export interface SocialProviderConfig {
  /** OpenID Connect issuer of the social identity provider (discovered at first use). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Shown on the sign-in button ("Continue with <displayName>"). */
  displayName: string;
}

export interface AuthConfig {
  /** Lifetime of access tokens, in seconds. */
  accessTokenTtl: number;
  /** Lifetime of refresh tokens, in seconds (rotation keeps the family's original expiry). */
  refreshTokenTtl: number;
  /** Lifetime of a sign-in session at the authorization server, in seconds. */
  sessionTtl: number;
  social?: SocialProviderConfig;
  /** Private JWKS (JSON) used to sign tokens; the first key signs. Generated and persisted when unset. */
  signingKeys?: { keys: Record<string, unknown>[] };
  /** Keys that sign the authorization server's cookies; the first signs. Generated and persisted when unset. */
  cookieKeys?: string[];
  /** Days of the trial started at onboarding (0: start on Starter); unset: the plan catalogue's trial length. */
  trialDays?: number;
}

function readJwks(env: Env, name: string): AuthConfig['signingKeys'] {
  const value = readString(env, name);
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new ConfigError(name, 'expected a JSON Web Key Set');
  }
  const keys = (parsed as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => k && typeof k === 'object' && 'd' in k)) {
    throw new ConfigError(name, 'expected {"keys":[...]} with at least one private key');
  }
  return { keys: keys as Record<string, unknown>[] };
}

function readCookieKeys(env: Env, name: string): string[] | undefined {
  const value = readString(env, name);
  if (value === undefined) return undefined;
  const keys = value
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  if (keys.some((k) => k.length < 32)) throw new ConfigError(name, 'each key must be at least 32 characters long');
  return keys;
}

export function readAuthConfig(env: Env): AuthConfig {
  const issuer = readUrl(env, 'SOCIAL_OIDC_ISSUER');
  let social: SocialProviderConfig | undefined;
  if (issuer) {
    const clientId = readString(env, 'SOCIAL_OIDC_CLIENT_ID');
    const clientSecret = readSecret(env, 'SOCIAL_OIDC_CLIENT_SECRET', 1);
    if (!clientId) throw new ConfigError('SOCIAL_OIDC_CLIENT_ID', 'is required with SOCIAL_OIDC_ISSUER');
    if (!clientSecret) throw new ConfigError('SOCIAL_OIDC_CLIENT_SECRET', 'is required with SOCIAL_OIDC_ISSUER');
    social = { issuer, clientId, clientSecret, displayName: readString(env, 'SOCIAL_OIDC_NAME', 'single sign-on') };
  }
  return {
    accessTokenTtl: readInt(env, 'ACCESS_TOKEN_TTL', 900, { min: 30, max: 86_400 }),
    refreshTokenTtl: readInt(env, 'REFRESH_TOKEN_TTL', 30 * 86_400, { min: 60, max: 365 * 86_400 }),
    sessionTtl: readInt(env, 'AUTH_SESSION_TTL', 14 * 86_400, { min: 60, max: 365 * 86_400 }),
    social,
    signingKeys: readJwks(env, 'AUTH_SIGNING_KEYS'),
    cookieKeys: readCookieKeys(env, 'AUTH_COOKIE_KEYS'),
    trialDays: readString(env, 'TRIAL_DAYS') === undefined ? undefined : readInt(env, 'TRIAL_DAYS', 14, { min: 0, max: 365 }),
  };
}
