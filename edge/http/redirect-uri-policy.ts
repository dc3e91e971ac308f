// The one redirect-URI policy of the platform: the authorization server's dynamic registration
// (redirect_uris and post_logout_redirect_uris) and the gateway facade's registration and
// /authorize apply it alike. An allow-rule, after RFC 8252 and the MCP clients in the wild
// (docs/identity.md, "Redirect URIs"): https to a host; http only to a loopback host, on any port
// (§7.3); and a native app's private-use scheme only in reverse domain-name form (§7.1:
// `com.example.app:/cb`), plus the few named schemes of real MCP clients that predate that rule.
// Everything else is refused without having to be listed: script-bearing and local schemes,
// WebSocket, browser-internal and extension schemes (`chrome:`, `edge:`, `safari-web-extension:`,
// ...), app-store and Android launch URLs (`intent:`, `market:`, `android-app:`), and so on. Also
// refused: userinfo, fragments, and a URL on the platform's own origins (a code sent there would
// loop back through the service that issued it), whatever the spelling of the host.

/**
 * Private-use schemes of MCP clients that are not in reverse domain-name form but must keep
 * working (/work/shared/reference/oauth-and-mcp-clients.md §10): Cursor registers
 * `cursor://anysphere.cursor-mcp/oauth/callback`. No other client there uses one: VS Code
 * registers loopback and `https://vscode.dev/redirect` (which relays to `vscode://` itself).
 */
const NAMED_CLIENT_SCHEMES = new Set(['cursor']);

/** A scheme based on a domain name, reversed (RFC 8252 §7.1): at least two non-empty labels. */
const REVERSE_DOMAIN_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/;

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
  const kind = redirectKind(url);
  if (!kind.ok) return kind;
  if (kind.kind !== 'private-use' && ownOrigins.some((origin) => isSameServer(url, new URL(origin)))) {
    return { ok: false, reason: "the redirect URI must not point at this platform's own endpoints" };
  }
  return { ok: true, url, kind: kind.kind };
}

function redirectKind(url: URL): { ok: true; kind: RedirectKind } | { ok: false; reason: string } {
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https' || scheme === 'http') {
    const host = normalHost(url.hostname);
    if (!host) return { ok: false, reason: 'the redirect URI has no valid host' };
    if (scheme === 'https') return { ok: true, kind: 'https' };
    if (LOOPBACK_HOSTS.has(host)) return { ok: true, kind: 'loopback' };
    return { ok: false, reason: 'http redirect URIs must use a loopback host (localhost, 127.0.0.1 or [::1])' };
  }
  if (REVERSE_DOMAIN_SCHEME.test(scheme) || NAMED_CLIENT_SCHEMES.has(scheme)) return { ok: true, kind: 'private-use' };
  return {
    ok: false,
    reason: `the ${scheme}: scheme is not allowed: a redirect URI uses https, http on a loopback host, or a private-use scheme in reverse domain-name form such as com.example.app:/callback (RFC 8252)`,
  };
}

/**
 * The host as a server would see it: `example.com.` (the fully qualified spelling) is
 * `example.com`. Empty when the host has an empty label (`a..b`, `.example.com`) or none at all.
 */
function normalHost(hostname: string): string {
  const host = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (host === '' || (!host.startsWith('[') && host.split('.').includes(''))) return '';
  return host;
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

function isSameServer(url: URL, own: URL): boolean {
  if (url.protocol !== own.protocol || url.port !== own.port) return false;
  const host = normalHost(url.hostname);
  const ownHost = normalHost(own.hostname);
  // localhost, 127.0.0.1 and [::1] name the same loopback server.
  return host === ownHost || (LOOPBACK_HOSTS.has(host) && LOOPBACK_HOSTS.has(ownHost));
}

/** The host shown on a consent page (the scheme for private-use schemes). */
export function redirectHost(url: URL): string {
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.host;
  return url.host ? `${url.protocol}//${url.host}` : url.protocol;
}
