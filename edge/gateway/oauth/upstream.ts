// The gateway as a client of a server's upstream identity provider: endpoint discovery (cached),
// and token requests authenticated with the gateway's pre-registered credentials.
import type { UpstreamOAuthConfig } from '../config.ts';

export interface UpstreamEndpoints {
  issuer?: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri?: string;
  idTokenSigningAlgs?: string[];
}

export interface UpstreamTokenResult {
  status: number;
  /** The parsed JSON body, when the body was a JSON object. */
  json?: Record<string, unknown>;
}

/** The upstream could not be reached or did not answer usefully. */
export class UpstreamUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamUnavailableError';
  }
}

export interface UpstreamClient {
  readonly config: UpstreamOAuthConfig;
  endpoints(): Promise<UpstreamEndpoints>;
  /** Endpoints if already known (explicit or discovered earlier), without a network call. */
  knownEndpoints(): UpstreamEndpoints | undefined;
  /** POSTs a token request; answers whatever the upstream said, parsed when it is JSON. */
  token(params: URLSearchParams): Promise<UpstreamTokenResult>;
}

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const TIMEOUT_MS = 10_000;

export function createUpstreamClient(config: UpstreamOAuthConfig, now: () => number = Date.now): UpstreamClient {
  let cached: { value: UpstreamEndpoints; until: number } | undefined;
  let pending: Promise<UpstreamEndpoints> | undefined;
  const explicit =
    config.authorizationEndpoint && config.tokenEndpoint
      ? { issuer: config.issuer, authorizationEndpoint: config.authorizationEndpoint, tokenEndpoint: config.tokenEndpoint }
      : undefined;

  async function endpoints(): Promise<UpstreamEndpoints> {
    if (explicit) return explicit;
    if (cached && cached.until > now()) return cached.value;
    pending ??= discover(config).then(
      (value) => {
        cached = { value, until: now() + DISCOVERY_TTL_MS };
        pending = undefined;
        return value;
      },
      (err) => {
        pending = undefined;
        throw err;
      },
    );
    return pending;
  }

  return {
    config,
    endpoints,
    knownEndpoints: () => explicit ?? cached?.value,
    async token(params) {
      const { tokenEndpoint } = await endpoints();
      const secrets =
        config.tokenEndpointAuthMethod === 'none' ? [undefined] : [config.clientSecret ?? '', ...(config.previousClientSecrets ?? [])];
      let result: UpstreamTokenResult | undefined;
      for (const secret of secrets) {
        result = await tokenRequest(config, tokenEndpoint, params, secret);
        // A refused client authentication consumes nothing upstream (it is checked before the
        // grant), so the next secret may be tried with the same code or refresh token.
        if (result.status !== 401 || result.json?.error !== 'invalid_client') break;
      }
      return result!;
    },
  };
}

/** Finds the upstream's endpoints in its metadata, at each well-known URL in turn (RFC 8414, OIDC). */
async function discover(config: UpstreamOAuthConfig): Promise<UpstreamEndpoints> {
  const issuer = config.issuer!;
  const u = new URL(issuer);
  const path = u.pathname === '/' ? '' : u.pathname.replace(/\/+$/, '');
  const candidates = [
    `${u.origin}/.well-known/oauth-authorization-server${path}`,
    `${u.origin}/.well-known/openid-configuration${path}`,
    `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
  ];
  let lastError = 'no metadata found';
  for (const url of candidates) {
    const found = await readMetadata(config, url);
    if (typeof found !== 'string') return found;
    lastError = found;
  }
  throw new UpstreamUnavailableError(`upstream metadata for ${issuer} is unavailable (${lastError})`);
}

/** The endpoints in the metadata at `url`, or why they cannot be had from there. */
async function readMetadata(config: UpstreamOAuthConfig, url: string): Promise<UpstreamEndpoints | string> {
  const issuer = config.issuer!;
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
  } catch (err) {
    return `${url}: ${(err as Error).message}`;
  }
  if (!res.ok) {
    await res.body?.cancel();
    return `${url}: HTTP ${res.status}`;
  }
  let doc: Record<string, unknown>;
  try {
    doc = (await res.json()) as Record<string, unknown>;
  } catch {
    return `${url}: not JSON`;
  }
  if (typeof doc.issuer === 'string' && doc.issuer.replace(/\/+$/, '') !== issuer.replace(/\/+$/, '')) {
    return `${url}: issuer ${doc.issuer} does not match ${issuer}`;
  }
  const authorizationEndpoint = config.authorizationEndpoint ?? doc.authorization_endpoint;
  const tokenEndpoint = config.tokenEndpoint ?? doc.token_endpoint;
  if (typeof authorizationEndpoint !== 'string' || typeof tokenEndpoint !== 'string') {
    return `${url}: no authorization or token endpoint`;
  }
  return {
    issuer: typeof doc.issuer === 'string' ? doc.issuer : issuer,
    authorizationEndpoint,
    tokenEndpoint,
    jwksUri: typeof doc.jwks_uri === 'string' ? doc.jwks_uri : undefined,
    idTokenSigningAlgs: Array.isArray(doc.id_token_signing_alg_values_supported)
      ? doc.id_token_signing_alg_values_supported.filter((a): a is string => typeof a === 'string')
      : undefined,
  };
}

/** One token request, authenticated with `clientSecret` in the configured way. */
async function tokenRequest(
  config: UpstreamOAuthConfig,
  tokenEndpoint: string,
  params: URLSearchParams,
  clientSecret: string | undefined,
): Promise<UpstreamTokenResult> {
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  const body = new URLSearchParams(params);
  if (config.tokenEndpointAuthMethod === 'client_secret_basic') {
    // RFC 6749 §2.3.1: the id and secret are form-encoded before base64.
    const id = encodeURIComponent(config.clientId);
    const secret = encodeURIComponent(clientSecret ?? '');
    headers.authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  } else if (config.tokenEndpointAuthMethod === 'client_secret_post') {
    body.set('client_id', config.clientId);
    body.set('client_secret', clientSecret ?? '');
  } else {
    body.set('client_id', config.clientId);
  }
  let res: Response;
  try {
    res = await fetch(tokenEndpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'error' });
  } catch (err) {
    throw new UpstreamUnavailableError(`upstream token endpoint unreachable: ${(err as Error).message}`);
  }
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}
