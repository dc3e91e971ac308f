// What the facade's four endpoints share: the server lookup, the crypto, the upstream clients,
// the replay cache in the records store and the HTML pages (the browser binding: binding.ts).
import type { ServerResponse } from 'node:http';
import type { Logger } from '../../../services/common/log.ts';
import type { RecordCollection } from '../../../services/common/storage/records/interface.ts';
import { escapeHtml } from '../../http/escape-html.ts';
import type { RouteContext } from '../../http/router.ts';
import { sendValidationError } from '../../http/validation.ts';
import { sendGatewayError, serverNameError } from '../errors.ts';
import { unknownServer } from '../proxy.ts';
import type { GatewayServer, ServerRegistry } from '../registry.ts';
import type { FacadeCrypto } from './tokens.ts';
import type { UpstreamClient } from './upstream.ts';

export interface FacadeDeps {
  registry: ServerRegistry;
  crypto: FacadeCrypto;
  upstreams: Map<string, UpstreamClient>;
  /** Single-use markers for states and codes, shared by every replica, expiring with them. */
  replay: RecordCollection;
  /** `{base_url}`. */
  publicUrl: string;
  logger: Logger;
  now: () => number;
}

export interface FacadeServer {
  server: GatewayServer;
  upstream: UpstreamClient;
  /** Whether the request came through the root aliases (/authorize, /token, /register). */
  root: boolean;
}

/** Lifetimes. */
export const STATE_TTL_MS = 10 * 60 * 1000;
export const CODE_TTL_MS = 60 * 1000;

/**
 * The server a facade request is for, or undefined once an error was answered: 422 for a
 * malformed name, 404 for an unknown one or one that does not use the facade.
 */
export function facadeServer(ctx: RouteContext, deps: FacadeDeps, root: boolean): FacadeServer | undefined {
  let server: GatewayServer | undefined;
  if (root) {
    server = deps.registry.defaultServer;
  } else {
    const name = ctx.params.server;
    const bad = serverNameError(name);
    if (bad) {
      sendValidationError(ctx.res, bad);
      return undefined;
    }
    server = deps.registry.get(name);
    if (!server) {
      unknownServer(ctx.res, name);
      return undefined;
    }
  }
  const upstream = deps.upstreams.get(server.name);
  if (!upstream) {
    const where = server.authorizationServers[0];
    sendGatewayError(
      ctx.res,
      404,
      'no_oauth_facade',
      where
        ? `Server ${server.name} is authorized by ${where}, not by the gateway's OAuth facade.`
        : `Server ${server.name} does not use OAuth.`,
    );
    return undefined;
  }
  return { server, upstream, root };
}

/** The issuer the client discovered: `<base>` through the root aliases, `<base>/{server}` otherwise. */
export function issuerOf(deps: FacadeDeps, fs: { server: GatewayServer; root: boolean }): string {
  return fs.root ? deps.publicUrl : fs.server.base;
}

export function endpointsOf(deps: FacadeDeps, fs: { server: GatewayServer; root: boolean }) {
  const prefix = fs.root ? deps.publicUrl : `${fs.server.base}/oauth`;
  return {
    authorization: `${prefix}/authorize`,
    token: `${prefix}/token`,
    registration: `${prefix}/register`,
  };
}

export function callbackUrl(server: GatewayServer): string {
  return `${server.base}/oauth/callback`;
}

/** Marks `id` used; false when it already was (on this replica or any other). */
export async function useOnce(deps: FacadeDeps, id: string, expiresAt: number): Promise<boolean> {
  return deps.replay.put({ _id: id, expiresAt: expiresAt + 60_000 }, { expect: null });
}

// --- pages -------------------------------------------------------------------------------------

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export function sendPage(
  res: ServerResponse,
  status: number,
  title: string,
  body: string,
  headers: Record<string, string | string[]> = {},
): void {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.4rem}code,.host{font-family:ui-monospace,monospace;background:#f2f2f2;padding:.1rem .3rem;border-radius:3px}
.host{font-size:1.1rem;font-weight:600}button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.6rem;border-radius:4px;border:1px solid #888;cursor:pointer}
button[value=approve]{background:#1f5fbf;color:#fff;border-color:#1f5fbf}.warn{color:#8a4b00}
</style></head><body>
${body}
</body></html>`;
  res.writeHead(status, { ...PAGE_HEADERS, 'content-length': Buffer.byteLength(html), ...headers });
  res.end(html);
}

/** A refusal that must not redirect anywhere (bad client, bad redirect URI, bad state). */
export function sendErrorPage(res: ServerResponse, status: number, error: string, description: string): void {
  sendPage(
    res,
    status,
    'Authorization failed',
    `<h1>Authorization failed</h1>
<p>${escapeHtml(description)}</p>
<p>Error: <code>${escapeHtml(error)}</code></p>
<p>You can close this window and start again from your application.</p>`,
  );
}

/** Redirects to a validated client redirect URI with OAuth parameters added to its query. */
export function redirectTo(res: ServerResponse, redirectUri: string, params: Record<string, string | undefined>): void {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  res.writeHead(302, { location: url.href, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'content-length': '0' });
  res.end();
}
