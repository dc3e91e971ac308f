// A scripted browser and OAuth client for tests: it registers a public client dynamically,
// runs the authorization code flow with PKCE against the real authorization server (sign-up or
// sign-in, consent with the organization picker, all over HTTP with a cookie jar) and redeems
// the code. Other areas' tests use `obtainAccessToken` to get a token for their resource
// (for the Brain: `${platform.ctx.config.publicUrls.gateway}/brain/mcp`).
import { createHash, randomBytes } from 'node:crypto';
import type { Platform } from '../../edge/platform.ts';
import { unescapeHtml } from './html.ts';
import { startTestPlatform, type TestPlatform, type TestPlatformOptions } from './platform.ts';
import { reservePorts } from './ports.ts';

export { reservePorts };

/**
 * startTestPlatform with the four public URLs set to the listeners' real addresses
 * (http://127.0.0.1:<port>), which OAuth needs: the issuer and the resource indicators are
 * compared code point for code point.
 */
export async function startOAuthTestPlatform(
  overrides: Record<string, string> = {},
  options: TestPlatformOptions = {},
): Promise<TestPlatform> {
  const [gateway, api, web, auth] = await reservePorts(4);
  return startTestPlatform(
    {
      GATEWAY_PORT: String(gateway),
      API_PORT: String(api),
      WEB_PORT: String(web),
      AUTH_PORT: String(auth),
      PUBLIC_GATEWAY_URL: `http://127.0.0.1:${gateway}`,
      PUBLIC_API_URL: `http://127.0.0.1:${api}`,
      PUBLIC_WEB_URL: `http://127.0.0.1:${web}`,
      PUBLIC_AUTH_URL: `http://127.0.0.1:${auth}`,
      ...overrides,
    },
    options,
  );
}

/** Cookies by name, as a browser on one host would hold them (paths ignored). */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export interface BrowserResponse {
  status: number;
  url: string;
  location?: string;
  body: string;
  headers: Headers;
}

/** One request with the jar's cookies; redirects are not followed. */
export async function browse(
  jar: CookieJar,
  url: string,
  init: { method?: string; form?: Record<string, string> } = {},
): Promise<BrowserResponse> {
  const headers: Record<string, string> = { accept: 'text/html' };
  if (jar.cookies.size) headers.cookie = jar.header();
  let body: string | undefined;
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  const res = await fetch(url, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
  jar.store(res);
  const location = res.headers.get('location') ?? undefined;
  return {
    status: res.status,
    url,
    location: location ? new URL(location, url).href : undefined,
    body: await res.text(),
    headers: res.headers,
  };
}

/** Follows redirects until a page is answered, or a redirect leaves for `stopPrefix`. */
export async function follow(jar: CookieJar, response: BrowserResponse, stopPrefix: string): Promise<BrowserResponse> {
  let current = response;
  for (let i = 0; i < 20; i++) {
    if (!current.location || current.status < 300 || current.status >= 400) return current;
    if (current.location.startsWith(stopPrefix)) return current;
    current = await browse(jar, current.location);
  }
  throw new Error('too many redirects');
}

export function formField(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no field ${name} in page:\n${html.slice(0, 2_000)}`);
  return unescapeHtml(m[1]);
}

export function formAction(html: string, contains: string): string {
  const re = /<form[^>]*action="([^"]+)"/g;
  for (let m = re.exec(html); m; m = re.exec(html)) if (m[1].includes(contains)) return m[1];
  throw new Error(`no form posting to *${contains}* in page:\n${html.slice(0, 2_000)}`);
}

export function organizationOptions(html: string): { id: string; name: string }[] {
  return [...html.matchAll(/<option value="([^"]+)"[^>]*>([^<]*)<\/option>/g)].map((m) => ({ id: m[1], name: m[2] }));
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface RegisteredClient {
  client_id: string;
  redirect_uris: string[];
  [field: string]: unknown;
}

/** A dynamic registration as sent (a string goes as it is), with the answer whatever it is. */
export async function postRegistration(authUrl: string, metadata: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${authUrl}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof metadata === 'string' ? metadata : JSON.stringify(metadata),
  });
  const text = await res.text();
  let json: Record<string, any> = {};
  try {
    json = JSON.parse(text) as Record<string, any>;
  } catch {}
  return { status: res.status, json, headers: res.headers };
}

export async function registerClient(authUrl: string, metadata: Record<string, unknown> = {}): Promise<RegisteredClient> {
  const res = await fetch(`${authUrl}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test client',
      redirect_uris: ['http://127.0.0.1:9/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      ...metadata,
    }),
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as RegisteredClient;
}

export interface TestUser {
  email: string;
  password: string;
  name?: string;
  /** Used at sign-up: the name of the organization onboarding creates. */
  organization?: string;
}

export function newTestUser(prefix = 'user'): TestUser {
  const id = randomBytes(6).toString('hex');
  return {
    email: `${prefix}-${id}@example.test`,
    password: `pw-${randomBytes(12).toString('hex')}`,
    name: `${prefix} ${id}`,
    organization: `${prefix} org ${id}`,
  };
}

export interface AuthorizeOptions {
  client: RegisteredClient;
  resource?: string;
  scope?: string;
  user: TestUser;
  /** Sign up (default) or sign in with an existing account. */
  mode?: 'sign-up' | 'sign-in';
  /** Organization to pick at consent; the first offered by default. */
  organizationId?: string;
  jar?: CookieJar;
}

export interface AuthorizeResult {
  code: string;
  verifier: string;
  redirectUri: string;
  /** Organization picked at consent. */
  organizationId: string;
  /** The final redirect to the client. */
  callback: URL;
  jar: CookieJar;
}

/** Runs /authorize through sign-up or sign-in and consent; returns the code sent to the client. */
export async function authorize(authUrl: string, o: AuthorizeOptions): Promise<AuthorizeResult> {
  const { verifier, challenge } = pkcePair();
  const redirectUri = o.client.redirect_uris[0];
  const state = randomBytes(8).toString('hex');
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: o.client.client_id,
    redirect_uri: redirectUri,
    scope: o.scope ?? 'openid email profile offline_access',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
  });
  if (o.resource) params.set('resource', o.resource);
  const result = await driveAuthorization(authUrl, `${authUrl}/authorize?${params}`, redirectUri, o);
  if (result.callback.searchParams.get('state') !== state) throw new Error('state mismatch');
  return { ...result, verifier };
}

export interface DriveOptions {
  user: TestUser;
  mode?: 'sign-up' | 'sign-in';
  organizationId?: string;
  jar?: CookieJar;
}

/**
 * Plays the browser for an authorization URL built by anyone (this helper, the MCP SDK): signs
 * up or in, picks the organization at consent, and returns the redirect to the client.
 */
export async function driveAuthorization(
  authUrl: string,
  authorizationUrl: string,
  redirectUri: string,
  o: DriveOptions,
): Promise<Omit<AuthorizeResult, 'verifier'>> {
  const jar = o.jar ?? new CookieJar();
  let page = await follow(jar, await browse(jar, authorizationUrl), redirectUri);
  if (/name="password"/.test(page.body)) {
    if ((o.mode ?? 'sign-up') === 'sign-up') {
      const link = /href="([^"]*\/sign-up)"/.exec(page.body);
      if (!link) throw new Error(`no sign-up link in page:\n${page.body.slice(0, 2_000)}`);
      page = await browse(jar, new URL(link[1], authUrl).href);
      const action = new URL(formAction(page.body, '/sign-up'), authUrl).href;
      page = await browse(jar, action, {
        form: {
          csrf: formField(page.body, 'csrf'),
          name: o.user.name ?? 'Test user',
          email: o.user.email,
          password: o.user.password,
          organization: o.user.organization ?? 'Test organization',
        },
      });
    } else {
      const action = new URL(formAction(page.body, '/sign-in'), authUrl).href;
      page = await browse(jar, action, { form: { csrf: formField(page.body, 'csrf'), email: o.user.email, password: o.user.password } });
    }
    if (page.status !== 303) throw new Error(`sign-in failed: ${page.status}\n${page.body.slice(0, 2_000)}`);
    page = await follow(jar, page, redirectUri);
  }
  if (!/\/consent"/.test(page.body)) throw new Error(`expected the consent page, got ${page.status}\n${page.body.slice(0, 2_000)}`);
  const offered = organizationOptions(page.body);
  const organizationId = o.organizationId ?? offered[0]?.id;
  if (!organizationId) throw new Error('no organization offered at consent');
  page = await browse(jar, new URL(formAction(page.body, '/consent'), authUrl).href, {
    form: { csrf: formField(page.body, 'csrf'), organization: organizationId, decision: 'allow' },
  });
  page = await follow(jar, page, redirectUri);
  if (!page.location?.startsWith(redirectUri))
    throw new Error(`expected a redirect to the client, got ${page.status}\n${page.body.slice(0, 2_000)}`);
  const callback = new URL(page.location);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code in ${callback.href}`);
  return { code, redirectUri, organizationId, callback, jar };
}

/**
 * Plays the browser for an authorization URL of the gateway's facade in front of the platform
 * (`{base_url}/brain/oauth/authorize`): approves the gateway's consent page, then signs up or in
 * and picks the organization at `{auth_url}`; the platform sends the browser to the gateway's
 * callback, which sends it on to the client with the gateway's code.
 */
export async function driveFacadeAuthorization(
  authUrl: string,
  authorizationUrl: string,
  redirectUri: string,
  o: DriveOptions,
): Promise<Omit<AuthorizeResult, 'verifier'>> {
  const jar = o.jar ?? new CookieJar();
  const consent = await browse(jar, authorizationUrl);
  if (consent.status !== 200) throw new Error(`the gateway's authorize answered ${consent.status}\n${consent.body.slice(0, 2_000)}`);
  const ticket = formField(consent.body, 'ticket');
  const approved = await browse(jar, new URL(formAction(consent.body, '/oauth/authorize'), authorizationUrl).href, {
    form: { ticket, decision: 'approve' },
  });
  if (approved.status !== 302 || !approved.location?.startsWith(authUrl)) {
    throw new Error(
      `expected a redirect to ${authUrl}, got ${approved.status} ${approved.location ?? ''}\n${approved.body.slice(0, 2_000)}`,
    );
  }
  return driveAuthorization(authUrl, approved.location, redirectUri, { ...o, jar });
}

export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token?: string;
  id_token?: string;
  scope?: string;
}

export async function tokenRequest(
  authUrl: string,
  form: Record<string, string>,
  basic?: { id: string; secret: string },
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (basic)
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(basic.id)}:${encodeURIComponent(basic.secret)}`).toString('base64')}`;
  return fetch(`${authUrl}/token`, { method: 'POST', headers, body: new URLSearchParams(form).toString() });
}

export interface ObtainedToken extends TokenResponse {
  clientId: string;
  organizationId: string;
  user: TestUser;
  client: RegisteredClient;
  jar: CookieJar;
}

/**
 * A user (new, unless given with mode 'sign-in'), an organization created at sign-up, and an
 * access token for `resource` obtained through the real flow.
 */
export async function obtainAccessToken(
  platform: Platform,
  options: {
    resource: string;
    scope?: string;
    user?: TestUser;
    mode?: 'sign-up' | 'sign-in';
    organizationId?: string;
    client?: RegisteredClient;
    jar?: CookieJar;
  },
): Promise<ObtainedToken> {
  const authUrl = platform.ctx.config.publicUrls.auth;
  const client = options.client ?? (await registerClient(authUrl));
  const user = options.user ?? newTestUser();
  const result = await authorize(authUrl, {
    client,
    resource: options.resource,
    scope: options.scope,
    user,
    mode: options.mode,
    organizationId: options.organizationId,
    jar: options.jar,
  });
  const res = await tokenRequest(authUrl, {
    grant_type: 'authorization_code',
    code: result.code,
    redirect_uri: result.redirectUri,
    client_id: client.client_id,
    code_verifier: result.verifier,
    resource: options.resource,
  });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${await res.text()}`);
  const tokens = (await res.json()) as TokenResponse;
  return { ...tokens, clientId: client.client_id, organizationId: result.organizationId, user, client, jar: result.jar };
}
