// Signing in as the public client `mindgate-dashboard`: authorization code with PKCE (S256) at
// `{auth_url}`, tokens kept in this module's memory only (never in localStorage or a cookie
// this page can read), refreshed before they expire with the rotating refresh token. Only the
// PKCE verifier, the state and where to return survive the round trip to the authorization
// server, in sessionStorage, and they are removed when the code comes back.
import type { DashboardSettings } from './settings.ts';

const PENDING_KEY = 'mindgate.dashboard.pending-sign-in';
const SCOPE = 'openid email profile offline_access';

interface Tokens {
  access: string;
  refresh?: string;
  expiresAt: number;
}

let tokens: Tokens | undefined;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<boolean> | undefined;
const listeners = new Set<() => void>();

/** Called when the session ends (refresh refused): the app shows the signed-out screen. */
export function onSessionEnded(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomString(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Sends the browser to the authorization server. Every authorization there ends at the consent
 * page, where the user picks the organization the tokens act for: switching is signing in again.
 */
export async function signIn(settings: DashboardSettings, returnTo: string): Promise<void> {
  const verifier = randomString();
  const state = randomString();
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state, returnTo }));
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: settings.clientId,
    redirect_uri: settings.callbackUrl,
    scope: SCOPE,
    resource: settings.apiUrl,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
  });
  location.assign(`${settings.authUrl}/authorize?${params}`);
}

/** A failure of the sign-in itself, with the authorization server's words (RFC 6749 §4.1.2.1, §5.2). */
export class SignInError extends Error {}

async function tokenRequest(settings: DashboardSettings, form: Record<string, string>): Promise<void> {
  const res = await fetch(`${settings.authUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: settings.clientId, ...form }),
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok || typeof body.access_token !== 'string') {
    throw new SignInError(
      `${body.error ?? `HTTP ${res.status}`}: ${body.error_description ?? 'the authorization server refused the request'}`,
    );
  }
  const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : 300;
  tokens = {
    access: body.access_token,
    refresh: typeof body.refresh_token === 'string' ? body.refresh_token : tokens?.refresh,
    expiresAt: Date.now() + expiresIn * 1000,
  };
  clearTimeout(refreshTimer);
  // Refresh at four fifths of the lifetime, so a slow request never carries an expired token.
  if (tokens.refresh) refreshTimer = setTimeout(() => void refresh(settings), expiresIn * 800);
}

/** Finishes the sign-in at `/app/auth/callback`; answers the path to return to. */
export async function completeSignIn(settings: DashboardSettings, url: URL): Promise<string> {
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') as { verifier: string; state: string; returnTo: string } | null;
  sessionStorage.removeItem(PENDING_KEY);
  const error = url.searchParams.get('error');
  if (error) throw new SignInError(`${error}: ${url.searchParams.get('error_description') ?? 'the sign-in did not complete'}`);
  if (!pending || url.searchParams.get('state') !== pending.state) {
    throw new SignInError('This sign-in was not started here, or was already used. Sign in again.');
  }
  await tokenRequest(settings, {
    grant_type: 'authorization_code',
    code: url.searchParams.get('code') ?? '',
    redirect_uri: settings.callbackUrl,
    code_verifier: pending.verifier,
  });
  return pending.returnTo.startsWith(settings.basePath) ? pending.returnTo : settings.basePath;
}

/** Trades the refresh token for new tokens; false (and the session ends) when refused. */
export function refresh(settings: DashboardSettings): Promise<boolean> {
  refreshing ??= (async () => {
    try {
      if (!tokens?.refresh) throw new SignInError('no refresh token');
      await tokenRequest(settings, { grant_type: 'refresh_token', refresh_token: tokens.refresh });
      return true;
    } catch {
      endSession();
      return false;
    } finally {
      refreshing = undefined;
    }
  })();
  return refreshing;
}

function endSession(): void {
  tokens = undefined;
  clearTimeout(refreshTimer);
  for (const listener of listeners) listener();
}

export function accessToken(): string | undefined {
  return tokens?.access;
}

/** Revokes the refresh token, forgets both tokens, and ends the session at the authorization server. */
export async function signOut(settings: DashboardSettings): Promise<void> {
  const refreshToken = tokens?.refresh;
  tokens = undefined;
  clearTimeout(refreshTimer);
  if (refreshToken) {
    await fetch(`${settings.authUrl}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: settings.clientId, token: refreshToken, token_type_hint: 'refresh_token' }),
    }).catch(() => undefined);
  }
  const params = new URLSearchParams({ client_id: settings.clientId, post_logout_redirect_uri: settings.signedOutUrl });
  location.assign(`${settings.authUrl}/session/end?${params}`);
}
