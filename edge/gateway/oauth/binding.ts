// The browser binding of a facade flow: the consent ticket and the upstream state carry a digest
// of two random values the browser holds in cookies, so that only the browser that saw the
// consent page can approve it and come back to the callback (login CSRF, and a flow started by
// someone else and finished in the victim's browser).
//
// Backends are served on the gateway's origin, so the binding must be something no backend can
// read or set. The proxy strips the platform's cookies from requests and drops backend
// Set-Cookie lines for them (../platform-cookies.ts); on top of that, the two halves live where
// each is strongest:
// - `__Host-mindgate-gw-binding`, Path=/: host-only, so a sibling subdomain cannot set it
//   (cookie tossing), but a browser sends it to every backend path, where the proxy strips it;
// - `__Secure-mindgate-gw-facade-binding`, Path=`/{server}/oauth` (and `/authorize` for the root
//   aliases): a browser sends it only to the facade's own paths, which the proxy never serves
//   (proxy.ts answers 404 under `/{server}/oauth`), so no backend request ever carries it, even
//   if the proxy's list of cookies missed a spelling. `__Host-` would force Path=/.
// Knowing or fixing one half is not enough: the digest covers both.
import type { IncomingMessage } from 'node:http';
import { BINDING_COOKIE, FACADE_BINDING_COOKIE } from '../platform-cookies.ts';
import type { GatewayServer } from '../registry.ts';
import { STATE_TTL_MS } from './facade.ts';
import { bindingDigest, randomId } from './tokens.ts';

export interface Binding {
  /** The `__Host-` half. */
  host: string;
  /** The half scoped to the facade's paths. */
  facade: string;
}

const VALUE = /^[A-Za-z0-9_-]{22,64}$/;

function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function valid(value: string | undefined): string | undefined {
  return value !== undefined && VALUE.test(value) ? value : undefined;
}

/** The binding the browser sent, when it sent both halves well-formed. */
export function readBinding(req: IncomingMessage): Binding | undefined {
  const host = valid(readCookie(req, BINDING_COOKIE));
  const facade = valid(readCookie(req, FACADE_BINDING_COOKIE));
  return host && facade ? { host, facade } : undefined;
}

/**
 * The browser's binding for a new consent page: the halves it holds are kept (so that two flows
 * in one browser do not undo each other), missing or malformed ones are made anew.
 */
export function bindingFor(req: IncomingMessage): Binding {
  return {
    host: valid(readCookie(req, BINDING_COOKIE)) ?? randomId(24),
    facade: valid(readCookie(req, FACADE_BINDING_COOKIE)) ?? randomId(24),
  };
}

/** What the ticket and the state carry. */
export function digestOf(binding: Binding): string {
  return bindingDigest(`${binding.host}.${binding.facade}`);
}

/**
 * The facade paths where the browser must send the second half: the server's `/oauth` (the
 * consent form and the callback) and, for the root aliases, `/authorize` (their consent form).
 * Paths are those of the public URLs, which may sit under a prefix.
 */
export function facadePaths(server: GatewayServer, rootAuthorize?: string): string[] {
  const paths = [new URL(`${server.base}/oauth`).pathname];
  if (rootAuthorize) paths.push(new URL(rootAuthorize).pathname);
  return paths;
}

/** Set-Cookie lines for both halves; they live as long as a flow may. */
export function bindingCookies(binding: Binding, paths: string[]): string[] {
  const attributes = `Secure; HttpOnly; SameSite=Lax; Max-Age=${STATE_TTL_MS / 1000}`;
  return [
    `${BINDING_COOKIE}=${binding.host}; Path=/; ${attributes}`,
    ...paths.map((path) => `${FACADE_BINDING_COOKIE}=${binding.facade}; Path=${path}; ${attributes}`),
  ];
}
