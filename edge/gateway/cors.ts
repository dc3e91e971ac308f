// CORS for browser clients (the MCP Inspector): metadata, registration, token and MCP requests
// are made from another origin with an Authorization header. No cookies are involved in those
// calls, so any origin is allowed without credentials; the consent and callback pages are
// top-level navigations and need no CORS.
import type { RouteContext } from '../http/router.ts';

export const CORS_ALLOW_HEADERS = 'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id';
export const CORS_EXPOSE_HEADERS = 'WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version';
export const CORS_ALLOW_METHODS = 'GET, POST, PUT, DELETE, OPTIONS';

/**
 * Runs before routing: answers preflights, and marks every response to a cross-origin request
 * (errors included) as readable by any origin.
 */
export function handleCors(ctx: RouteContext): boolean {
  const { req, res } = ctx;
  if (req.headers.origin === undefined) return false;
  if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
    res.writeHead(204, {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': CORS_ALLOW_METHODS,
      'access-control-allow-headers': CORS_ALLOW_HEADERS,
      'access-control-max-age': '86400',
      'content-length': '0',
    });
    res.end();
    return true;
  }
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-expose-headers', CORS_EXPOSE_HEADERS);
  return false;
}

/** A backend's own CORS headers (lower-case `name`) give way to the gateway's. */
export function isCorsHeader(name: string): boolean {
  return name.startsWith('access-control-');
}
