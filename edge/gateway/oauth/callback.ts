// GET /{server_name}/oauth/callback: where the upstream IdP sends the browser back. The state is
// verified (signature, expiry, this browser, first use), the upstream code is exchanged
// server-side, and the client receives a gateway-minted code at its own redirect URI, with its
// state and the gateway's issuer (RFC 9207).
import type { RouteContext } from '../../http/router.ts';
import { queryToObject, validate } from '../../http/validation.ts';
import { CallbackQuerySchema } from '../schemas.ts';
import type { StateClaims } from './authorize.ts';
import { digestOf, readBinding } from './binding.ts';
import { callbackUrl, CODE_TTL_MS, facadeServer, issuerOf, redirectTo, sendErrorPage, useOnce, type FacadeDeps } from './facade.ts';
import { randomId } from './tokens.ts';
import { UpstreamUnavailableError } from './upstream.ts';

/** The gateway's authorization code, sealed: everything /token needs, nothing stored. */
export interface CodeClaims {
  typ: 'code';
  jti: string;
  s: string;
  c: string;
  r: string;
  cc: string;
  exp: number;
  /** The upstream token response, passed through at /token. */
  tok: Record<string, unknown>;
}

/** Errors an authorization response may carry (RFC 6749 §4.1.2.1); others become server_error. */
const AUTHORIZE_ERRORS = new Set([
  'invalid_request',
  'unauthorized_client',
  'access_denied',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
  'login_required',
  'consent_required',
  'interaction_required',
  'account_selection_required',
]);

export function createCallbackHandler(deps: FacadeDeps) {
  return async (ctx: RouteContext): Promise<void> => {
    // The callback is registered upstream per server; it is never a root alias.
    const fs = facadeServer(ctx, deps, false);
    if (!fs) return;
    const q = validate(CallbackQuerySchema, queryToObject(ctx.query), 'query');
    const refuse = (description: string) => sendErrorPage(ctx.res, 400, 'invalid_request', description);

    const state = deps.crypto.verify<StateClaims>('state', q.state);
    if (state?.typ !== 'state' || typeof state.n !== 'string' || state.s !== fs.server.name) {
      return refuse('The sign-in state is not valid.');
    }
    if (state.exp <= deps.now()) return refuse('The sign-in took too long and has expired. Start again from your application.');
    const binding = readBinding(ctx.req);
    if (!binding || digestOf(binding) !== state.b) {
      return refuse('This sign-in was started in another browser.');
    }
    if (!(await useOnce(deps, `state:${state.n}`, state.exp))) {
      return refuse('This sign-in response was already used.');
    }

    // From here on the client's redirect URI is the validated one from the signed state.
    const iss = issuerOf(deps, { server: fs.server, root: state.root });
    const fail = (error: string, description: string) =>
      redirectTo(ctx.res, state.r, { error, error_description: description, state: state.st, iss });

    if (q.error !== undefined) {
      const error = AUTHORIZE_ERRORS.has(q.error) ? q.error : 'server_error';
      return fail(error, (q.error_description ?? 'The identity provider refused the request.').slice(0, 300));
    }
    const upstreamIssuer = fs.upstream.knownEndpoints()?.issuer ?? fs.upstream.config.issuer;
    if (q.iss !== undefined && upstreamIssuer && q.iss.replace(/\/+$/, '') !== upstreamIssuer.replace(/\/+$/, '')) {
      // RFC 9207: a response from another issuer is a mix-up attempt.
      return fail('server_error', 'The authorization response came from an unexpected issuer.');
    }
    if (!q.code) return fail('server_error', 'The identity provider returned no code.');

    const params = new URLSearchParams({
      grant_type: 'authorization_code',
      code: q.code,
      redirect_uri: callbackUrl(fs.server),
      code_verifier: deps.crypto.upstreamVerifier(state.n),
    });
    if (fs.upstream.config.resource) params.set('resource', fs.upstream.config.resource);
    let result;
    try {
      result = await fs.upstream.token(params);
    } catch (err) {
      if (!(err instanceof UpstreamUnavailableError)) throw err;
      deps.logger.warn({ server: fs.server.name, err: err.message }, 'upstream code exchange failed');
      return fail('temporarily_unavailable', 'The identity provider cannot be reached.');
    }
    if (result.status !== 200 || !result.json || typeof result.json.access_token !== 'string') {
      deps.logger.warn({ server: fs.server.name, status: result.status, error: result.json?.error }, 'upstream code exchange refused');
      return fail('server_error', 'The identity provider refused the code exchange.');
    }
    const code: CodeClaims = {
      typ: 'code',
      jti: randomId(16),
      s: fs.server.name,
      c: state.c,
      r: state.r,
      cc: state.cc,
      exp: deps.now() + CODE_TTL_MS,
      tok: result.json,
    };
    redirectTo(ctx.res, state.r, { code: deps.crypto.seal('code', code), state: state.st, iss });
  };
}
