// Which redirect URIs a dynamically registered client may use (see
// /work/shared/reference/oauth-and-mcp-clients.md, "Registration and redirect URIs").
export const FORBIDDEN_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:', 'filesystem:']);
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export type RedirectKind = 'https' | 'loopback' | 'private-use';

/** The kind of an acceptable redirect URI, or the reason it is refused. */
export function classifyRedirectUri(value: string, ownOrigins: string[]): { kind: RedirectKind } | { error: string } {
  if (typeof value !== 'string' || value.length > 2_000) return { error: 'must be a string of at most 2000 characters' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { error: 'must be an absolute URI' };
  }
  if (value.includes('#')) return { error: 'must not contain a fragment' };
  if (url.username || url.password) return { error: 'must not contain user information' };
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return { error: `must not use the ${url.protocol.slice(0, -1)} scheme` };
  if (ownOrigins.includes(url.origin)) return { error: "must not point at this service's own endpoints" };
  if (url.protocol === 'http:') {
    if (!LOOPBACK_HOSTS.has(url.hostname)) return { error: 'http is allowed only for loopback addresses (127.0.0.1, [::1], localhost)' };
    return { kind: 'loopback' };
  }
  if (url.protocol === 'https:') {
    return { kind: 'https' };
  }
  // A private-use scheme (RFC 8252 §7.1), as native apps such as cursor:// register.
  if (!/^[a-z][a-z0-9+.-]*:$/.test(url.protocol)) return { error: 'has an invalid scheme' };
  return { kind: 'private-use' };
}
