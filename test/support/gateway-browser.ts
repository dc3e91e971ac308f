// A minimal browser for driving OAuth flows over HTTP in tests: a cookie jar per host that
// honours cookie paths (RFC 6265 §5.1.4) and keeps Secure cookies on http://127.0.0.1, as
// browsers do for loopback; manual redirects; and the consent form of the gateway. Two instances
// are two different browsers.

import { unescapeHtml } from './html.ts';

export interface BrowserResponse {
  status: number;
  url: string;
  location?: string;
  headers: Headers;
  text: string;
}

export interface StoredCookie {
  name: string;
  value: string;
  path: string;
}

export interface Browser {
  /** Cookies by host, then by name and path. */
  readonly cookies: Map<string, Map<string, StoredCookie>>;
  /** The Cookie header this browser would send to `url`, if any. */
  cookieHeader(url: string): string | undefined;
  get(url: string): Promise<BrowserResponse>;
  postForm(url: string, form: Record<string, string>): Promise<BrowserResponse>;
  /**
   * Follows redirects from `url` until a response is not a redirect or its location starts with
   * `stopAt` (the client's redirect URI); returns that location, or the last response.
   */
  follow(url: string, stopAt: string): Promise<{ stoppedAt?: string; last: BrowserResponse }>;
}

export function createBrowser(): Browser {
  const cookies = new Map<string, Map<string, StoredCookie>>();

  function cookieHeader(url: URL): string | undefined {
    const jar = cookies.get(url.host);
    if (!jar) return undefined;
    // More specific paths first, as browsers order them.
    const sent = [...jar.values()].filter((c) => pathMatches(url.pathname, c.path)).sort((a, b) => b.path.length - a.path.length);
    return sent.length === 0 ? undefined : sent.map((c) => `${c.name}=${c.value}`).join('; ');
  }

  function store(url: URL, headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const pathAttr = attrs.map((a) => /^\s*path=(.*)$/i.exec(a)?.[1]?.trim()).find((p) => p !== undefined);
      const path = pathAttr?.startsWith('/') ? pathAttr : defaultPath(url.pathname);
      const jar = cookies.get(url.host) ?? new Map<string, StoredCookie>();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      const key = `${name}\0${path}`;
      if (expired) jar.delete(key);
      else jar.set(key, { name, value, path });
      cookies.set(url.host, jar);
    }
  }

  async function request(url: string, init: RequestInit = {}): Promise<BrowserResponse> {
    const u = new URL(url);
    const headers = new Headers(init.headers);
    const cookie = cookieHeader(u);
    if (cookie) headers.set('cookie', cookie);
    const res = await fetch(u, { ...init, headers, redirect: 'manual' });
    store(u, res.headers);
    const text = await res.text();
    const location = res.headers.get('location') ?? undefined;
    return { status: res.status, url, location: location ? new URL(location, u).href : undefined, headers: res.headers, text };
  }

  return {
    cookies,
    cookieHeader: (url) => cookieHeader(new URL(url)),
    get: (url) => request(url),
    postForm: (url, form) =>
      request(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) }),
    async follow(url, stopAt) {
      let current = url;
      for (let i = 0; i < 20; i++) {
        if (current.startsWith(stopAt)) return { stoppedAt: current, last: { status: 0, url: current, headers: new Headers(), text: '' } };
        const res = await request(current);
        if (!res.location || res.status < 300 || res.status >= 400) return { last: res };
        if (res.location.startsWith(stopAt)) return { stoppedAt: res.location, last: res };
        current = res.location;
      }
      throw new Error('too many redirects');
    },
  };
}

/** RFC 6265 §5.1.4: the cookie path is a prefix of the request path, ending at a `/`. */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath.charAt(cookiePath.length) === '/';
}

/** RFC 6265 §5.1.4: the request path up to its last `/`, for a cookie sent without Path. */
function defaultPath(requestPath: string): string {
  const last = requestPath.lastIndexOf('/');
  return last <= 0 ? '/' : requestPath.slice(0, last);
}

/** The hidden ticket and the form action of the gateway's consent page. */
export function parseConsentPage(html: string): { ticket: string; action: string } {
  const ticket = /name="ticket" value="([^"]+)"/.exec(html)?.[1];
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!ticket || !action) throw new Error(`not a consent page: ${html.slice(0, 200)}`);
  return { ticket: unescapeHtml(ticket), action: unescapeHtml(action) };
}

/**
 * Runs the browser part of a sign-in through the gateway: authorize URL → consent page →
 * approve → upstream IdP (signs in by itself) → gateway callback → the client's redirect URI.
 */
export async function signIn(
  browser: Browser,
  authorizeUrl: string,
  redirectUri: string,
  decision: 'approve' | 'deny' = 'approve',
): Promise<URL> {
  const page = await browser.get(authorizeUrl);
  if (page.status !== 200) throw new Error(`authorize answered ${page.status}: ${page.text.slice(0, 300)}`);
  const { ticket, action } = parseConsentPage(page.text);
  const answer = await browser.postForm(action, { ticket, decision });
  if (answer.status !== 302 || !answer.location) throw new Error(`consent answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  const { stoppedAt, last } = await browser.follow(answer.location, redirectUri);
  if (!stoppedAt) throw new Error(`the flow stopped at ${last.url} with ${last.status}: ${last.text.slice(0, 300)}`);
  return new URL(stoppedAt);
}
