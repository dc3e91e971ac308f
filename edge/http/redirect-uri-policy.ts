// The one redirect-URI policy of the platform: the authorization server's dynamic registration
// (redirect_uris and post_logout_redirect_uris) and the gateway facade's registration and
// /authorize apply it alike. RFC 8252 and the MCP clients in the wild
// (docs/identity.md, "Redirect URIs"): https anywhere; http only to a loopback host, on any port
// (§7.3); private-use schemes such as `cursor://` or `com.example.app:/cb` (§7.1). Never
// script-bearing or local schemes, WebSocket, browser-internal or browser-extension schemes,
// Android `intent:` URLs (they can launch any app), userinfo, fragments, or a URL on the
// platform's own origins (a code sent there would loop back through the service that issued it).

/** Schemes that are never a client's redirect target. */
const FORBIDDEN_SCHEMES = new Set([
  'javascript',
  'data',
  'file',
  'vbscript',
  'blob',
  'about',
  'filesystem',
  'view-source',
  'jar',
  'ws',
  'wss',
  'ftp',
  'mailto',
  'tel',
  'sms',
  'intent',
  'chrome',
  'chrome-extension',
  'moz-extension',
]);

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const MAX_LENGTH = 2_048;

/** https on a public host, http on a loopback host (any port), or a native app's private-use scheme. */
export type RedirectKind = 'https' | 'loopback' | 'private-use';

export type RedirectCheck = { ok: true; url: URL; kind: RedirectKind } | { ok: false; reason: string };

/** Whether `value` may be registered as (or used as) a redirect URI; `ownOrigins` are the platform's own. */
export function checkRedirectUri(value: unknown, ownOrigins: readonly string[]): RedirectCheck {
  const parsed = parseUri(value, 'redirect URI');
  if (!parsed.ok) return parsed;
  const { url } = parsed;
  const scheme = url.protocol.slice(0, -1);
  if (FORBIDDEN_SCHEMES.has(scheme)) return { ok: false, reason: `the ${scheme}: scheme is not allowed` };
  let kind: RedirectKind;
  if (scheme === 'https') {
    if (!url.hostname) return { ok: false, reason: 'the redirect URI has no host' };
    kind = 'https';
  } else if (scheme === 'http') {
    if (!LOOPBACK_HOSTS.has(url.hostname)) {
      return { ok: false, reason: 'http redirect URIs must use a loopback host (localhost, 127.0.0.1 or [::1])' };
    }
    kind = 'loopback';
  } else {
    kind = 'private-use';
  }
  if (kind !== 'private-use' && ownOrigins.some((origin) => isSameServer(url, origin))) {
    return { ok: false, reason: "the redirect URI must not point at this platform's own endpoints" };
  }
  return { ok: true, url, kind };
}

/**
 * Whether `value` may be registered as an informational or fetched URI of a client (client_uri,
 * logo_uri, policy_uri, tos_uri, jwks_uri, initiate_login_uri, ...): https only, since these are
 * shown to users or fetched by the server, and never carry credentials.
 */
export function checkHttpsUri(value: unknown, label = 'URI'): { ok: true; url: URL } | { ok: false; reason: string } {
  const parsed = parseUri(value, label);
  if (!parsed.ok) return parsed;
  if (parsed.url.protocol !== 'https:') return { ok: false, reason: `the ${label} must use https` };
  if (!parsed.url.hostname) return { ok: false, reason: `the ${label} has no host` };
  return parsed;
}

/** The rules every URI shares: a bounded absolute URI, no fragment, no userinfo, no smuggling characters. */
function parseUri(value: unknown, label: string): { ok: true; url: URL } | { ok: false; reason: string } {
  if (typeof value !== 'string' || value === '') return { ok: false, reason: `the ${label} is empty` };
  if (value.length > MAX_LENGTH) return { ok: false, reason: `the ${label} is too long` };
  // Control characters and spaces never appear in a real URI; backslashes are read as slashes
  // by browsers, which is how userinfo tricks slip through.
  if (/[\s\x00-\x1f\x7f\\]/.test(value)) return { ok: false, reason: `the ${label} contains forbidden characters` };
  const url = URL.parse(value);
  if (!url) return { ok: false, reason: `the ${label} is not an absolute URI` };
  if (value.includes('#')) return { ok: false, reason: `the ${label} must not contain a fragment` };
  if (url.username || url.password || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(value)) {
    return { ok: false, reason: `the ${label} must not contain userinfo` };
  }
  return { ok: true, url };
}

function isSameServer(url: URL, ownOrigin: string): boolean {
  if (url.origin === ownOrigin) return true;
  // localhost, 127.0.0.1 and [::1] name the same loopback server.
  const own = new URL(ownOrigin);
  return LOOPBACK_HOSTS.has(own.hostname) && LOOPBACK_HOSTS.has(url.hostname) && url.port === own.port && url.protocol === own.protocol;
}

/** The host shown on a consent page (the scheme for private-use schemes). */
export function redirectHost(url: URL): string {
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.host;
  return url.host ? `${url.protocol}//${url.host}` : url.protocol;
}
