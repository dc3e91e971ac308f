// The cookies the platform's own listeners set, which the proxy never lets cross to or from a
// backend. Backends are served on the gateway's origin, and browsers scope cookies by host, not
// port, so a browser sends the gateway's cookies and those of the authorization server (and any
// other listener on the same host) along with every request for a backend.

/** The facade's browser binding, one per browser: host-only, Path=/ (oauth/binding.ts). */
export const BINDING_COOKIE = '__Host-mindgate-gw-binding';
/** The binding's second half, kept under the facade's own paths, which the proxy never serves. */
export const FACADE_BINDING_COOKIE = '__Secure-mindgate-gw-facade-binding';

/**
 * Names without their `__Host-`/`__Secure-` prefix, lower-cased: a backend that set
 * `__HOST-Mindgate-Gw-Binding` or `_Session` would reach servers and frameworks that compare
 * names loosely, so every spelling is refused.
 */
const PLATFORM_COOKIES = new Set([
  // The gateway's facade (above).
  'mindgate-gw-binding',
  'mindgate-gw-facade-binding',
  // oidc-provider's session and interaction cookies (its default names, which
  // edge/oauth/provider.ts keeps), and the keygrip signature of each (`<name>.sig`).
  '_session',
  '_session.sig',
  '_interaction',
  '_interaction.sig',
  '_interaction_resume',
  '_interaction_resume.sig',
  // The CSRF cookie of the authorization server's standalone pages (edge/oauth/interactions.ts).
  'mg_csrf',
]);

const PREFIX = /^__(host|secure)-/i;

export function isPlatformCookie(name: string): boolean {
  return PLATFORM_COOKIES.has(name.trim().replace(PREFIX, '').toLowerCase());
}

/**
 * A Cookie header without the platform's cookies (the backend's own are kept as sent), or
 * undefined when none is left.
 */
export function withoutPlatformCookies(header: string): string | undefined {
  let kept = '';
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (isPlatformCookie(eq === -1 ? part : part.slice(0, eq))) continue;
    const pair = part.trim();
    if (pair) kept = kept ? `${kept}; ${pair}` : pair;
  }
  return kept || undefined;
}

/** True when a backend's Set-Cookie line would set, overwrite or clear a platform cookie. */
export function setsPlatformCookie(line: string): boolean {
  const semi = line.indexOf(';');
  const pair = semi === -1 ? line : line.slice(0, semi);
  const eq = pair.indexOf('=');
  // A cookie without `=` is nameless, and a browser sends it back as its bare value.
  if (eq === -1) return isPlatformCookie(pair);
  const name = pair.slice(0, eq);
  if (name.trim() !== '') return isPlatformCookie(name);
  // `=_session=x` is a nameless cookie whose value a browser sends back as `_session=x`: it
  // would pass for the cookie it names.
  const value = pair.slice(eq + 1);
  const inner = value.indexOf('=');
  return isPlatformCookie(inner === -1 ? value : value.slice(0, inner));
}
