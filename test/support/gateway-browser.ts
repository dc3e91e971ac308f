// A minimal browser for driving OAuth flows over HTTP in tests: a cookie jar per host (it keeps
// Secure cookies on http://127.0.0.1, as browsers do for loopback), manual redirects, and the
// consent form of the gateway. Two instances are two different browsers.

export interface BrowserResponse {
  status: number;
  url: string;
  location?: string;
  headers: Headers;
  text: string;
}

export interface Browser {
  readonly cookies: Map<string, Map<string, string>>;
  get(url: string): Promise<BrowserResponse>;
  postForm(url: string, form: Record<string, string>): Promise<BrowserResponse>;
  /**
   * Follows redirects from `url` until a response is not a redirect or its location starts with
   * `stopAt` (the client's redirect URI); returns that location, or the last response.
   */
  follow(url: string, stopAt: string): Promise<{ stoppedAt?: string; last: BrowserResponse }>;
}

export function createBrowser(): Browser {
  const cookies = new Map<string, Map<string, string>>();

  function cookieHeader(url: URL): string | undefined {
    const jar = cookies.get(url.host);
    if (!jar || jar.size === 0) return undefined;
    return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  function store(url: URL, headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const jar = cookies.get(url.host) ?? new Map<string, string>();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired) jar.delete(name);
      else jar.set(name, value);
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

/** The hidden ticket and the form action of the gateway's consent page. */
export function parseConsentPage(html: string): { ticket: string; action: string } {
  const ticket = /name="ticket" value="([^"]+)"/.exec(html)?.[1];
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!ticket || !action) throw new Error(`not a consent page: ${html.slice(0, 200)}`);
  const unescapeHtml = (s: string) => s.replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n)));
  return { ticket: unescapeHtml(ticket), action: unescapeHtml(action) };
}

/**
 * Runs the browser part of a sign-in through the gateway: authorize URL → consent page →
 * approve → upstream IdP (signs in by itself) → gateway callback → the client's redirect URI.
 */
export async function signIn(browser: Browser, authorizeUrl: string, redirectUri: string, decision: 'approve' | 'deny' = 'approve'): Promise<URL> {
  const page = await browser.get(authorizeUrl);
  if (page.status !== 200) throw new Error(`authorize answered ${page.status}: ${page.text.slice(0, 300)}`);
  const { ticket, action } = parseConsentPage(page.text);
  const answer = await browser.postForm(action, { ticket, decision });
  if (answer.status !== 302 || !answer.location) throw new Error(`consent answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  const { stoppedAt, last } = await browser.follow(answer.location, redirectUri);
  if (!stoppedAt) throw new Error(`the flow stopped at ${last.url} with ${last.status}: ${last.text.slice(0, 300)}`);
  return new URL(stoppedAt);
}
