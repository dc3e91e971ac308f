// The OAuth client side of the facade over plain HTTP, step by step, so that tests can stop at
// any step and tamper with it: register, build the authorize URL with PKCE, sign in, redeem.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { createBrowser, signIn, type Browser } from './gateway-browser.ts';

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function register(
  base: string,
  server: string,
  redirectUri: string,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}/${server}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', client_name: 'flow test', ...extra }),
  });
  if (res.status !== 200) throw new Error(`register answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

export function authorizeUrl(
  endpoint: string,
  params: { clientId: string; redirectUri: string; challenge?: string; state?: string; scope?: string; extra?: Record<string, string> },
): string {
  const url = new URL(endpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', params.clientId);
  url.searchParams.set('redirect_uri', params.redirectUri);
  if (params.challenge) {
    url.searchParams.set('code_challenge', params.challenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  if (params.state !== undefined) url.searchParams.set('state', params.state);
  url.searchParams.set('scope', params.scope ?? 'openid offline_access mcp');
  url.searchParams.set('prompt', 'consent');
  for (const [k, v] of Object.entries(params.extra ?? {})) url.searchParams.set(k, v);
  return url.href;
}

export async function postForm(
  url: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { status: res.status, body, headers: res.headers };
}

export interface SignedIn {
  browser: Browser;
  clientId: string;
  redirectUri: string;
  pkce: Pkce;
  /** Where the browser was sent back to (code, state, iss). */
  redirect: URL;
  code: string;
}

/** Registers, signs in through the consent page and the IdP, and returns the gateway code. */
export async function signInTo(
  base: string,
  server: string,
  options: {
    redirectUri?: string;
    state?: string;
    browser?: Browser;
    endpoint?: string;
    scope?: string;
    extra?: Record<string, string>;
  } = {},
): Promise<SignedIn> {
  const redirectUri = options.redirectUri ?? 'http://127.0.0.1:45888/callback';
  const reg = await register(base, server, redirectUri);
  const clientId = String(reg.client_id);
  const p = pkce();
  const browser = options.browser ?? createBrowser();
  const url = authorizeUrl(options.endpoint ?? `${base}/${server}/oauth/authorize`, {
    clientId,
    redirectUri,
    challenge: p.challenge,
    state: options.state ?? 'st-1',
    scope: options.scope,
    extra: options.extra,
  });
  const redirect = await signIn(browser, url, redirectUri);
  const code = redirect.searchParams.get('code');
  if (!code) throw new Error(`no code: ${redirect.href}`);
  return { browser, clientId, redirectUri, pkce: p, redirect, code };
}

/** Signs in and redeems the code: access and (sealed) refresh tokens. */
export async function obtainTokens(base: string, server: string): Promise<Record<string, unknown>> {
  const s = await signInTo(base, server);
  const res = await postForm(`${base}/${server}/oauth/token`, {
    grant_type: 'authorization_code',
    code: s.code,
    redirect_uri: s.redirectUri,
    code_verifier: s.pkce.verifier,
    client_id: s.clientId,
  });
  if (res.status !== 200) throw new Error(`token answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request whose path goes out exactly as written (fetch would normalise `..` away). */
export function rawRequest(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<RawResponse> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
