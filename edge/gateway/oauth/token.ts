// POST /{server_name}/oauth/token (application/x-www-form-urlencoded only).
//   authorization_code: redeems a gateway code: sealed by this gateway, for this server, not
//     expired, client_id and redirect_uri equal to the authorize request's, PKCE S256 verified,
//     and first use (across replicas, through the records store).
//   refresh_token: relayed to the upstream with the gateway's credentials, the answer passed
//     through. Refresh tokens handed to clients are sealed envelopes naming their server, so a
//     refresh token of server A is refused at server B even when both share an upstream client.
import type { RouteContext } from '../../http/router.ts';
import { readBody, sendJson } from '../../http/respond.ts';
import { validate } from '../../http/validation.ts';
import { OAuthError, sendOAuthError } from '../errors.ts';
import { TokenFormSchema } from '../schemas.ts';
import type { CodeClaims } from './callback.ts';
import { facadeServer, useOnce, type FacadeDeps, type FacadeServer } from './facade.ts';
import { facadeClient } from './facade-client.ts';
import { s256 } from './tokens.ts';
import { UpstreamUnavailableError } from './upstream.ts';

interface RefreshEnvelope {
  typ: 'refresh';
  s: string;
  c: string;
  /** The upstream refresh token. */
  t: string;
}

const MAX_TOKEN_FORM_BYTES = 64 * 1024;
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

export function createTokenHandler(deps: FacadeDeps, root: boolean) {
  return async (ctx: RouteContext): Promise<void> => {
    const fs = facadeServer(ctx, deps, root);
    if (!fs) return;
    const type = String(ctx.req.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    const raw = await readBody(ctx.req, MAX_TOKEN_FORM_BYTES);
    // Anything but a form (JSON, multipart) has no form fields: FastAPI answers that with 422.
    const params = type === 'application/x-www-form-urlencoded' ? new URLSearchParams(raw.toString('utf8')) : new URLSearchParams();
    const fields: Record<string, string> = {};
    for (const [k, v] of params) {
      if (Object.hasOwn(fields, k)) {
        return sendOAuthError(ctx.res, new OAuthError('invalid_request', `The parameter ${k} is repeated.`));
      }
      fields[k] = v;
    }
    const form = validate(TokenFormSchema, fields, 'body');
    try {
      const clientId = authenticateClient(ctx, deps, form.client_id, fs);
      if (form.grant_type === 'authorization_code') {
        return await redeemCode(ctx, deps, fs, clientId, form);
      }
      if (form.grant_type === 'refresh_token') {
        return await refresh(ctx, deps, fs, clientId, form);
      }
      throw new OAuthError('unsupported_grant_type', 'Only authorization_code and refresh_token are supported.');
    } catch (err) {
      if (err instanceof OAuthError) {
        const headers: Record<string, string> = {};
        if (err.status === 401 && ctx.req.headers.authorization?.toLowerCase().startsWith('basic ')) {
          headers['www-authenticate'] = 'Basic realm="gateway"';
        }
        return sendOAuthError(ctx.res, err, headers);
      }
      throw err;
    }
  };
}

/** Public clients name themselves with client_id (form or HTTP Basic); it must be one the server's facade issued. */
function authenticateClient(ctx: RouteContext, deps: FacadeDeps, formClientId: string | undefined, fs: FacadeServer): string {
  let basicId: string | undefined;
  const header = ctx.req.headers.authorization;
  if (header?.toLowerCase().startsWith('basic ')) {
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    try {
      basicId = decodeURIComponent((colon === -1 ? decoded : decoded.slice(0, colon)).replace(/\+/g, ' '));
    } catch {
      throw new OAuthError('invalid_client', 'The client credentials are malformed.', 401);
    }
  }
  if (basicId !== undefined && formClientId !== undefined && basicId !== formClientId) {
    throw new OAuthError('invalid_request', 'client_id differs between the form and the Authorization header.');
  }
  const clientId = basicId ?? formClientId;
  if (clientId === undefined) throw new OAuthError('invalid_client', 'client_id is required.', 401);
  const client = facadeClient(deps.crypto, fs.server.name, fs.upstream.config.clientId, clientId);
  if (!client) throw new OAuthError('invalid_client', `Unknown client for server ${fs.server.name}.`, 401);
  return client.clientId;
}

async function redeemCode(
  ctx: RouteContext,
  deps: FacadeDeps,
  fs: FacadeServer,
  clientId: string,
  form: { code?: string; redirect_uri?: string; code_verifier?: string },
): Promise<void> {
  if (!form.code) throw new OAuthError('invalid_request', 'code is required.');
  if (!form.redirect_uri) throw new OAuthError('invalid_request', 'redirect_uri is required.');
  if (!form.code_verifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE).');
  const code = deps.crypto.open<CodeClaims>('code', form.code);
  if (code?.typ !== 'code') throw new OAuthError('invalid_grant', 'The authorization code is not valid.');
  if (code.s !== fs.server.name) throw new OAuthError('invalid_grant', 'The authorization code was issued for another server.');
  if (code.exp <= deps.now()) throw new OAuthError('invalid_grant', 'The authorization code has expired.');
  if (code.c !== clientId) throw new OAuthError('invalid_grant', 'The authorization code was issued to another client.');
  if (code.r !== form.redirect_uri) throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request.');
  if (!VERIFIER.test(form.code_verifier) || s256(form.code_verifier) !== code.cc) {
    throw new OAuthError('invalid_grant', 'The PKCE code_verifier does not match the code_challenge.');
  }
  if (!(await useOnce(deps, `code:${code.jti}`, code.exp))) {
    throw new OAuthError('invalid_grant', 'The authorization code was already used.');
  }
  sendJson(ctx.res, 200, wrapRefresh(deps, fs, clientId, code.tok), NO_STORE);
}

async function refresh(
  ctx: RouteContext,
  deps: FacadeDeps,
  fs: FacadeServer,
  clientId: string,
  form: { refresh_token?: string; scope?: string },
): Promise<void> {
  if (!form.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required.');
  const envelope = deps.crypto.open<RefreshEnvelope>('refresh', form.refresh_token);
  if (envelope?.typ !== 'refresh' || typeof envelope.t !== 'string') {
    throw new OAuthError('invalid_grant', 'The refresh token is not valid.');
  }
  if (envelope.s !== fs.server.name) throw new OAuthError('invalid_grant', 'The refresh token was issued for another server.');
  if (envelope.c !== clientId) throw new OAuthError('invalid_grant', 'The refresh token was issued to another client.');
  const params = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: envelope.t });
  if (form.scope) params.set('scope', form.scope);
  if (fs.upstream.config.resource) params.set('resource', fs.upstream.config.resource);
  let result;
  try {
    result = await fs.upstream.token(params);
  } catch (err) {
    if (!(err instanceof UpstreamUnavailableError)) throw err;
    deps.logger.warn({ server: fs.server.name, err: err.message }, 'upstream refresh failed');
    throw new OAuthError('temporarily_unavailable', 'The identity provider cannot be reached.', 503);
  }
  if (result.status >= 200 && result.status < 300 && result.json) {
    return sendJson(ctx.res, result.status, wrapRefresh(deps, fs, clientId, result.json), NO_STORE);
  }
  if (result.json?.error === 'invalid_client' || result.json?.error === 'unauthorized_client') {
    // The gateway's own credentials were refused: re-registering would not help the client.
    deps.logger.warn({ server: fs.server.name, error: result.json.error }, 'upstream refused the gateway client');
    throw new OAuthError('server_error', 'The identity provider refused the gateway.', 502);
  }
  if (result.json && typeof result.json.error === 'string' && result.status >= 400 && result.status < 500) {
    // The upstream's OAuth error (invalid_grant for a revoked or rotated token) as it said it.
    const body: Record<string, unknown> = { error: result.json.error };
    if (typeof result.json.error_description === 'string') body.error_description = result.json.error_description;
    return sendJson(ctx.res, result.status, body, NO_STORE);
  }
  deps.logger.warn({ server: fs.server.name, status: result.status }, 'upstream refresh answered unexpectedly');
  throw new OAuthError('server_error', 'The identity provider answered unexpectedly.', 502);
}

/** The upstream's answer, as it was, except that a refresh token is sealed for this server. */
function wrapRefresh(deps: FacadeDeps, fs: FacadeServer, clientId: string, tokens: Record<string, unknown>): Record<string, unknown> {
  if (typeof tokens.refresh_token !== 'string') return tokens;
  const envelope: RefreshEnvelope = { typ: 'refresh', s: fs.server.name, c: clientId, t: tokens.refresh_token };
  return { ...tokens, refresh_token: deps.crypto.seal('refresh', envelope) };
}
