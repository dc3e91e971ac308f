// Which redirect URIs the facade accepts, at registration and at authorization alike (nothing
// is stored between the two, so the policy is the registration). RFC 8252 and the MCP clients
// in the wild: https anywhere; http only to a loopback host, on any port (§7.3); private-use
// schemes such as `cursor://` (§7.1). Never script-bearing or local schemes, userinfo, fragments,
// or a URL on the gateway itself (its callback would loop codes back through the facade).

/** Schemes that are never a client's redirect target. */
const FORBIDDEN_SCHEMES = new Set([
  'javascript', 'data', 'file', 'vbscript', 'blob', 'about', 'filesystem', 'view-source', 'jar',
  'ws', 'wss', 'ftp', 'mailto', 'tel', 'sms', 'intent', 'chrome', 'chrome-extension', 'moz-extension',
]);

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export type RedirectCheck = { ok: true; url: URL } | { ok: false; reason: string };

export function checkRedirectUri(value: unknown, gatewayOrigin: string): RedirectCheck {
  if (typeof value !== 'string' || value === '') return { ok: false, reason: 'the redirect URI is empty' };
  if (value.length > 2_048) return { ok: false, reason: 'the redirect URI is too long' };
  // Control characters and spaces never appear in a real redirect URI; backslashes are read as
  // slashes by browsers, which is how userinfo tricks slip through.
  if (/[\s\x00-\x1f\x7f\\]/.test(value)) return { ok: false, reason: 'the redirect URI contains forbidden characters' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'the redirect URI is not an absolute URI' };
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (FORBIDDEN_SCHEMES.has(scheme)) return { ok: false, reason: `the ${scheme}: scheme is not allowed` };
  if (value.includes('#')) return { ok: false, reason: 'the redirect URI must not contain a fragment' };
  if (url.username || url.password || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(value)) {
    return { ok: false, reason: 'the redirect URI must not contain userinfo' };
  }
  if (scheme === 'https') {
    if (!url.hostname) return { ok: false, reason: 'the redirect URI has no host' };
  } else if (scheme === 'http') {
    if (!LOOPBACK_HOSTS.has(url.hostname.toLowerCase())) {
      return { ok: false, reason: 'http redirect URIs must use a loopback host (localhost, 127.0.0.1 or [::1])' };
    }
  } else if (!/^[a-z][a-z0-9+.-]*$/.test(scheme)) {
    return { ok: false, reason: 'the redirect URI scheme is not valid' };
  }
  if ((scheme === 'http' || scheme === 'https') && isSameServer(url, gatewayOrigin)) {
    return { ok: false, reason: 'the redirect URI must not point at the gateway itself' };
  }
  return { ok: true, url };
}

function isSameServer(url: URL, gatewayOrigin: string): boolean {
  if (url.origin === gatewayOrigin) return true;
  // localhost and 127.0.0.1 name the same loopback gateway.
  const gateway = new URL(gatewayOrigin);
  return LOOPBACK_HOSTS.has(gateway.hostname) && LOOPBACK_HOSTS.has(url.hostname) && url.port === gateway.port
    && url.protocol === gateway.protocol;
}

/** The host shown on the consent page (the scheme for private-use schemes). */
export function redirectHost(url: URL): string {
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.host;
  return url.host ? `${url.protocol}//${url.host}` : url.protocol;
}
