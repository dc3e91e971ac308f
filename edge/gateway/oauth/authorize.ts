// GET /{server_name}/oauth/authorize validates the client's request and shows the gateway's own
// consent page; POST (the page's form) records the decision and, on approval, sends the browser
// to the upstream IdP. Consent is asked here, per client and redirect host, because the upstream
// only ever sees the gateway's one static client and would remember its consent for everyone
// (MCP security best practices, "confused deputy").
import type { RouteContext } from '../../http/router.ts';
import { readBody } from '../../http/respond.ts';
import { escapeHtml } from '../../http/escape-html.ts';
import { queryToObject, validate } from '../../http/validation.ts';
import { AuthorizeQuerySchema, ConsentFormSchema, type AuthorizeQuery, type ConsentForm } from '../schemas.ts';
import { bindingCookies, bindingFor, digestOf, facadePaths, readBinding, type Binding } from './binding.ts';
import {
  callbackUrl,
  endpointsOf,
  facadeServer,
  issuerOf,
  redirectTo,
  sendErrorPage,
  sendPage,
  STATE_TTL_MS,
  type FacadeDeps,
  type FacadeServer,
} from './facade.ts';
import { checkRedirectUri, redirectHost } from '../../http/redirect-uri-policy.ts';
import { isGatewayClient, VIA_CLIENT_NAME_PARAM } from '../../oauth/gateway-client.ts';
import { facadeClient, type FacadeClient } from './facade-client.ts';
import { randomId, s256 } from './tokens.ts';
import { UpstreamUnavailableError, type UpstreamEndpoints } from './upstream.ts';

/** What the consent ticket and, after approval, the upstream state carry. */
export interface FlowClaims {
  /** Server name. */
  s: string;
  /** Came through the root aliases (issuer `<base>`). */
  root: boolean;
  /** client_id, redirect_uri, the client's state (absent when it sent none), PKCE challenge. */
  c: string;
  r: string;
  st?: string;
  cc: string;
  /** Scopes requested upstream. */
  sc: string;
  /** The client's prompt, forwarded upstream (OIDC needs prompt=consent for offline_access). */
  p?: string;
  /** The client_name the client registered (facade-client.ts), when it did. */
  cn?: string;
  /** Digest of the browser binding (binding.ts). */
  b: string;
  /** Expiry, epoch milliseconds. */
  exp: number;
}

export interface ConsentTicket extends FlowClaims {
  typ: 'consent';
}

export interface StateClaims extends FlowClaims {
  typ: 'state';
  /** Nonce: single-use key, and the seed of the gateway's PKCE verifier toward the upstream. */
  n: string;
}

const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const MAX_CONSENT_FORM_BYTES = 16 * 1024;

export function createAuthorizeHandlers(deps: FacadeDeps, root: boolean) {
  const gatewayOrigin = new URL(deps.publicUrl).origin;

  async function show(ctx: RouteContext): Promise<void> {
    const fs = facadeServer(ctx, deps, root);
    if (!fs) return;
    const q = validate(AuthorizeQuerySchema, queryToObject(ctx.query), 'query');
    // Nothing here redirects: until the client and its redirect URI are known good, an error
    // page is the only safe answer, and the issue asks for a page for every invalid request.
    const checked = checkAuthorizeRequest(deps, q, fs, gatewayOrigin);
    if ('error' in checked) return sendErrorPage(ctx.res, 400, checked.error, checked.description);
    const { client, redirect } = checked;

    // The browser binding (binding.ts), bound as a digest into the consent ticket and then the
    // upstream state.
    const binding = bindingFor(ctx.req);
    const claims = consentClaims(deps, fs, root, q, client, binding);
    const ticket = deps.crypto.sign('consent', claims);
    const page = consentPage({
      server: fs.server.name,
      redirect,
      client: client.name ? `<strong>${escapeHtml(client.name)}</strong> (as it names itself)` : `<code>${escapeHtml(q.client_id)}</code>`,
      scopes: claims.sc.split(' ').filter(Boolean),
      action: endpointsOf(deps, fs).authorization,
      ticket,
    });
    sendPage(ctx.res, 200, `Authorize access to ${fs.server.name}`, page, { 'set-cookie': bindingCookies(binding, cookiePaths(deps, fs)) });
  }

  async function decide(ctx: RouteContext): Promise<void> {
    const fs = facadeServer(ctx, deps, root);
    if (!fs) return;
    const form = await readConsentForm(ctx);
    const consent = checkConsent(deps, fs, root, form.ticket, ctx.req);
    if ('refused' in consent) return sendErrorPage(ctx.res, 400, 'invalid_request', consent.refused);
    const { ticket, binding } = consent;
    const issuer = issuerOf(deps, fs);
    if (form.decision === 'deny') {
      return redirectTo(ctx.res, ticket.r, {
        error: 'access_denied',
        error_description: 'The user denied the request.',
        state: ticket.st,
        iss: issuer,
      });
    }
    const endpoints = await upstreamEndpoints(deps, fs);
    if (!endpoints) {
      return sendErrorPage(
        ctx.res,
        502,
        'temporarily_unavailable',
        'The identity provider of this server cannot be reached. Try again later.',
      );
    }
    const nonce = randomId(16);
    const { typ: _typ, ...flow } = ticket;
    const state: StateClaims = { ...flow, typ: 'state', n: nonce, exp: deps.now() + STATE_TTL_MS };
    const url = upstreamAuthorizeUrl(deps, fs, endpoints.authorizationEndpoint, state);
    ctx.res.writeHead(302, {
      location: url.href,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'set-cookie': bindingCookies(binding, cookiePaths(deps, fs)),
      'content-length': '0',
    });
    ctx.res.end();
  }

  return { show, decide };
}

/** The client and redirect URI of a valid authorization request, or the error that refuses it. */
function checkAuthorizeRequest(
  deps: FacadeDeps,
  q: AuthorizeQuery,
  fs: FacadeServer,
  gatewayOrigin: string,
): { client: FacadeClient; redirect: URL } | { error: string; description: string } {
  const client = facadeClient(deps.crypto, fs.server.name, fs.upstream.config.clientId, q.client_id);
  if (!client) {
    return { error: 'invalid_client', description: `Unknown client_id for server ${fs.server.name}. Register the client first.` };
  }
  const redirect = checkRedirectUri(q.redirect_uri, [gatewayOrigin]);
  if (!redirect.ok) return { error: 'invalid_request', description: `The redirect_uri is not acceptable: ${redirect.reason}.` };
  if (q.response_type !== 'code') return { error: 'unsupported_response_type', description: 'Only response_type=code is supported.' };
  if ((q.code_challenge_method ?? 'plain') !== 'S256') {
    return { error: 'invalid_request', description: 'PKCE with code_challenge_method=S256 is required.' };
  }
  if (!PKCE_CHALLENGE.test(q.code_challenge)) {
    return { error: 'invalid_request', description: 'The code_challenge is not a valid S256 challenge.' };
  }
  return { client, redirect: redirect.url };
}

/** The consent page's form as posted (a form of any other type reads as empty, and fails validation). */
async function readConsentForm(ctx: RouteContext): Promise<ConsentForm> {
  const type = String(ctx.req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  const raw = (await readBody(ctx.req, MAX_CONSENT_FORM_BYTES)).toString('utf8');
  return validate(ConsentFormSchema, type === 'application/x-www-form-urlencoded' ? queryToObject(new URLSearchParams(raw)) : {}, 'body');
}

/** What the consent page's ticket carries: the request, and the digest of the browser binding. */
function consentClaims(
  deps: FacadeDeps,
  fs: FacadeServer,
  root: boolean,
  q: AuthorizeQuery,
  client: FacadeClient,
  binding: Binding,
): ConsentTicket {
  return {
    typ: 'consent',
    s: fs.server.name,
    root,
    c: client.clientId,
    r: q.redirect_uri,
    st: q.state,
    cc: q.code_challenge,
    sc: upstreamScope(q.scope, fs),
    p: q.prompt,
    cn: client.name,
    b: digestOf(binding),
    exp: deps.now() + STATE_TTL_MS,
  };
}

/** Where the binding's facade half must be sent: this flow's consent form and callback. */
function cookiePaths(deps: FacadeDeps, fs: FacadeServer): string[] {
  return facadePaths(fs.server, fs.root ? endpointsOf(deps, fs).authorization : undefined);
}

/**
 * The consent ticket the form carries and the browser binding it was given in, or why it is
 * refused: forged, for another server or alias, expired, or from another browser.
 */
function checkConsent(
  deps: FacadeDeps,
  fs: FacadeServer,
  root: boolean,
  signed: string,
  req: RouteContext['req'],
): { ticket: ConsentTicket; binding: Binding } | { refused: string } {
  const ticket = deps.crypto.verify<ConsentTicket>('consent', signed);
  if (ticket?.typ !== 'consent' || ticket.s !== fs.server.name || ticket.root !== root)
    return { refused: 'The consent form is not valid.' };
  if (ticket.exp <= deps.now()) return { refused: 'The consent form has expired.' };
  const binding = readBinding(req);
  // The cookies are SameSite=Lax: a cross-site form post arrives without them and stops here (CSRF).
  if (!binding || digestOf(binding) !== ticket.b) {
    return { refused: 'This consent was not given in the browser that started the sign-in.' };
  }
  return { ticket, binding };
}

/** The upstream's endpoints; undefined (and logged) when its metadata cannot be had. */
async function upstreamEndpoints(deps: FacadeDeps, fs: FacadeServer): Promise<UpstreamEndpoints | undefined> {
  try {
    return await fs.upstream.endpoints();
  } catch (err) {
    if (!(err instanceof UpstreamUnavailableError)) throw err;
    deps.logger.warn({ server: fs.server.name, err: err.message }, 'upstream identity provider unavailable');
    return undefined;
  }
}

/**
 * The consent page: which server, for which client, and where the authorization will go.
 * `client` is HTML already escaped.
 */
function consentPage(page: { server: string; redirect: URL; client: string; scopes: string[]; action: string; ticket: string }): string {
  const host = redirectHost(page.redirect);
  const scopes = page.scopes;
  return `<h1>Authorize access to <code>${escapeHtml(page.server)}</code></h1>
<p>An application is asking to use the MCP server <strong>${escapeHtml(page.server)}</strong> on your behalf.</p>
<p>After you sign in, the gateway will send the authorization to:</p>
<p class="host">${escapeHtml(host)}</p>
<p>Full redirect address: <code>${escapeHtml(page.redirect.href)}</code><br>
Client: ${page.client}${scopes.length ? `<br>Access requested: ${scopes.map((s) => `<code>${escapeHtml(s)}</code>`).join(' ')}` : ''}</p>
<p class="warn">Only approve if you started this sign-in and recognise <strong>${escapeHtml(host)}</strong>.</p>
<form method="post" action="${escapeHtml(page.action)}">
<input type="hidden" name="ticket" value="${escapeHtml(page.ticket)}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`;
}

/** The upstream IdP's authorization URL for this flow, with the gateway's own client and PKCE. */
function upstreamAuthorizeUrl(deps: FacadeDeps, fs: FacadeServer, endpoint: string, state: StateClaims): URL {
  const upstream = fs.upstream.config;
  const url = new URL(endpoint);
  const params = url.searchParams;
  for (const [k, v] of Object.entries(upstream.extraAuthorizeParams)) params.set(k, v);
  params.set('response_type', 'code');
  params.set('client_id', upstream.clientId);
  params.set('redirect_uri', callbackUrl(fs.server));
  if (state.sc) params.set('scope', state.sc);
  params.set('state', deps.crypto.sign('state', state));
  params.set('code_challenge', s256(deps.crypto.upstreamVerifier(state.n)));
  params.set('code_challenge_method', 'S256');
  if (state.p) params.set('prompt', state.p);
  // The platform's authorization server records which client the gateway acts for, and names
  // it in the tokens (client_name): the Brain then shows the real client as the writer.
  if (state.cn && isGatewayClient(upstream.clientId)) params.set(VIA_CLIENT_NAME_PARAM, state.cn);
  // The client's `resource` names the gateway; the upstream gets the configured one, if any.
  if (upstream.resource) params.set('resource', upstream.resource);
  if (upstream.audience) params.set('audience', upstream.audience);
  return url;
}

/**
 * The scopes asked of the upstream: the client's, limited to the ones this server offers
 * (unknown ones are dropped, not refused: clients add scopes of their own), or all of them.
 */
function upstreamScope(requested: string | undefined, fs: FacadeServer): string {
  const offered = fs.upstream.config.scopes;
  if (!requested) return offered.join(' ');
  const kept = requested.split(' ').filter((s) => s && offered.includes(s));
  return (kept.length > 0 ? [...new Set(kept)] : offered).join(' ');
}
