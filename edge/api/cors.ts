// CORS for the dashboard (`{web_url}/app`), a page of another origin that calls this API with
// the bearer token it holds in memory. Only the web listener's origin is let in, and never with
// credentials: the API reads no cookies, so a page could only send a token it already holds.
import type { RouteContext } from '../http/router.ts';

// Last-Event-ID: the dashboard follows event streams with fetch (EventSource cannot send the bearer
// token), and resumes one after a drop with the last id it has.
const ALLOWED_HEADERS = 'authorization, content-type, if-match, idempotency-key, last-event-id';
const EXPOSED_HEADERS = 'etag, retry-after, idempotent-replayed, ratelimit, ratelimit-policy, location';

/** A listener's `before`: answers preflights from `origin`, and marks its responses readable there. */
export function createDashboardCors(origin: string): (c: RouteContext) => boolean {
  return (c) => {
    if (c.req.headers.origin !== origin) return false;
    c.res.setHeader('access-control-allow-origin', origin);
    c.res.setHeader('vary', 'Origin');
    if (c.req.method === 'OPTIONS' && c.req.headers['access-control-request-method']) {
      c.res.writeHead(204, {
        'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-max-age': '600',
      });
      c.res.end();
      return true;
    }
    c.res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    return false;
  };
}
