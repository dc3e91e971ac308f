// GET /{server_name}/oauth/authorize validates the client's request and shows the gateway's own
// consent page; POST (the page's form) records the decision and, on approval, sends the browser
// to the upstream IdP. Consent is asked here, per client and redirect host, because the upstream
// only ever sees the gateway's one static client and would remember its consent for everyone
// (MCP security best practices, "confused deputy").
import type { RouteContext } from '../../http/router.ts';
import { readBody } from '../../http/respond.ts';
import { escapeHtml } from '../../http/escape-html.ts';
import { queryToObject, validate } from '../../http/validation.ts';
import { AuthorizeQuerySchema, ConsentFormSchema } from '../schemas.ts';
import { bindingCookies, bindingFor, digestOf, facadePaths, readBinding } from './binding.ts';
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
import { facadeClient } from './facade-client.ts';
import { randomId, s256 } from './tokens.ts';
import { UpstreamUnavailableError } from './upstream.ts';

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
    const refuse = (error: string, description: string) => sendErrorPage(ctx.res, 400, error, description);
    // Nothing below redirects: until the client and its redirect URI are known good, an error
    // page is the only safe answer, and the issue asks for a page for every invalid request.
    const client = facadeClient(deps.crypto, fs.server.name, fs.upstream.config.clientId, q.client_id);
    if (!client) return refuse('invalid_client', `Unknown client_id for server ${fs.server.name}. Register the client first.`);
    const redirect = checkRedirectUri(q.redirect_uri, [gatewayOrigin]);
    if (!redirect.ok) return refuse('invalid_request', `The redirect_uri is not acceptable: ${redirect.reason}.`);
    if (q.response_type !== 'code') return refuse('unsupported_response_type', 'Only response_type=code is supported.');
    if ((q.code_challenge_method ?? 'plain') !== 'S256') {
      return refuse('invalid_request', 'PKCE with code_challenge_method=S256 is required.');
    }
    if (!PKCE_CHALLENGE.test(q.code_challenge)) {
      return refuse('invalid_request', 'The code_challenge is not a valid S256 challenge.');
    }

    // The browser binding (binding.ts), bound as a digest into the consent ticket and then the
    // upstream state.
    const binding = bindingFor(ctx.req);
    const claims: ConsentTicket = {
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
    const ticket = deps.crypto.sign('consent', claims);
    const action = endpointsOf(deps, fs).authorization;
    const host = redirectHost(redirect.url);
    const scopes = claims.sc.split(' ').filter(Boolean);
    sendPage(
      ctx.res,
      200,
      `Authorize access to ${fs.server.name}`,
      `<h1>Authorize access to <code>${escapeHtml(fs.server.name)}</code></h1>
<p>An application is asking to use the MCP server <strong>${escapeHtml(fs.server.name)}</strong> on your behalf.</p>
<p>After you sign in, the gateway will send the authorization to:</p>
<p class="host">${escapeHtml(host)}</p>
<p>Full redirect address: <code>${escapeHtml(redirect.url.href)}</code><br>
Client: ${client.name ? `<strong>${escapeHtml(client.name)}</strong> (as it names itself)` : `<code>${escapeHtml(q.client_id)}</code>`}${scopes.length ? `<br>Access requested: ${scopes.map((s) => `<code>${escapeHtml(s)}</code>`).join(' ')}` : ''}</p>
<p class="warn">Only approve if you started this sign-in and recognise <strong>${escapeHtml(host)}</strong>.</p>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="ticket" value="${escapeHtml(ticket)}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
      { 'set-cookie': bindingCookies(binding, cookiePaths(fs)) },
    );
  }

  async function decide(ctx: RouteContext): Promise<void> {
    const fs = facadeServer(ctx, deps, root);
    if (!fs) return;
    const type = String(ctx.req.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    const raw = (await readBody(ctx.req, MAX_CONSENT_FORM_BYTES)).toString('utf8');
    const form = validate(
      ConsentFormSchema,
      type === 'application/x-www-form-urlencoded' ? queryToObject(new URLSearchParams(raw)) : {},
      'body',
    );
    const ticket = deps.crypto.verify<ConsentTicket>('consent', form.ticket);
    if (ticket?.typ !== 'consent' || ticket.s !== fs.server.name || ticket.root !== root) {
      return sendErrorPage(ctx.res, 400, 'invalid_request', 'The consent form is not valid.');
    }
    if (ticket.exp <= deps.now()) return sendErrorPage(ctx.res, 400, 'invalid_request', 'The consent form has expired.');
    const binding = readBinding(ctx.req);
    // The cookies are SameSite=Lax: a cross-site form post arrives without them and stops here (CSRF).
    if (!binding || digestOf(binding) !== ticket.b) {
      return sendErrorPage(ctx.res, 400, 'invalid_request', 'This consent was not given in the browser that started the sign-in.');
    }
    const issuer = issuerOf(deps, fs);
    if (form.decision === 'deny') {
      return redirectTo(ctx.res, ticket.r, {
        error: 'access_denied',
        error_description: 'The user denied the request.',
        state: ticket.st,
        iss: issuer,
      });
    }
    let endpoints;
    try {
      endpoints = await fs.upstream.endpoints();
    } catch (err) {
      if (!(err instanceof UpstreamUnavailableError)) throw err;
      deps.logger.warn({ server: fs.server.name, err: err.message }, 'upstream identity provider unavailable');
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
    const upstream = fs.upstream.config;
    const url = new URL(endpoints.authorizationEndpoint);
    const params = url.searchParams;
    for (const [k, v] of Object.entries(upstream.extraAuthorizeParams)) params.set(k, v);
    params.set('response_type', 'code');
    params.set('client_id', upstream.clientId);
    params.set('redirect_uri', callbackUrl(fs.server));
    if (state.sc) params.set('scope', state.sc);
    params.set('state', deps.crypto.sign('state', state));
    params.set('code_challenge', s256(deps.crypto.upstreamVerifier(nonce)));
    params.set('code_challenge_method', 'S256');
    if (state.p) params.set('prompt', state.p);
    // The platform's authorization server records which client the gateway acts for, and names
    // it in the tokens (client_name): the Brain then shows the real client as the writer.
    if (state.cn && isGatewayClient(upstream.clientId)) params.set(VIA_CLIENT_NAME_PARAM, state.cn);
    // The client's `resource` names the gateway; the upstream gets the configured one, if any.
    if (upstream.resource) params.set('resource', upstream.resource);
    if (upstream.audience) params.set('audience', upstream.audience);
    ctx.res.writeHead(302, {
      location: url.href,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'set-cookie': bindingCookies(binding, cookiePaths(fs)),
      'content-length': '0',
    });
    ctx.res.end();
  }

  /** Where the binding's facade half must be sent: this flow's consent form and callback. */
  function cookiePaths(fs: FacadeServer): string[] {
    return facadePaths(fs.server, fs.root ? endpointsOf(deps, fs).authorization : undefined);
  }

  return { show, decide };
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
