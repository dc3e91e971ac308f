// POST /{server_name}/oauth/register: stateless dynamic client registration. Every client gets
// the server's pre-registered upstream client_id (for the platform's own authorization server,
// followed by the client_name it registered, signed: facade-client.ts); nothing is stored, so the platform's one
// redirect-URI policy (edge/http/redirect-uri-policy.ts) applied here is applied again,
// identically, at /authorize.
import type { RouteContext } from '../../http/router.ts';
import { readBody } from '../../http/respond.ts';
import { parseJsonBody, validate } from '../../http/validation.ts';
import { sendJson } from '../../http/respond.ts';
import { DCRRequestSchema, type DCRResponse } from '../schemas.ts';
import { OAuthError, sendOAuthError } from '../errors.ts';
import { facadeServer, type FacadeDeps } from './facade.ts';
import { checkRedirectUri } from '../../http/redirect-uri-policy.ts';
import { isGatewayClient } from '../../oauth/gateway-client.ts';
import { issueFacadeClientId } from './facade-client.ts';

const MAX_REGISTRATION_BYTES = 64 * 1024;

export function createRegisterHandler(deps: FacadeDeps, root: boolean) {
  const gatewayOrigin = new URL(deps.publicUrl).origin;
  return async (ctx: RouteContext): Promise<void> => {
    const fs = facadeServer(ctx, deps, root);
    if (!fs) return;
    const body = parseJsonBody(await readBody(ctx.req, MAX_REGISTRATION_BYTES));
    const request = validate(DCRRequestSchema, body, 'body');
    for (const uri of request.redirect_uris) {
      const check = checkRedirectUri(uri, [gatewayOrigin]);
      if (!check.ok) return sendOAuthError(ctx.res, new OAuthError('invalid_redirect_uri', `${uri}: ${check.reason}`));
    }
    const native = request.redirect_uris.every((uri) => {
      const u = new URL(uri);
      return u.protocol !== 'https:';
    });
    const response: DCRResponse = {
      // Only the platform's authorization server takes the name onward (facade-client.ts).
      client_id: isGatewayClient(fs.upstream.config.clientId)
        ? issueFacadeClientId(deps.crypto, fs.server.name, fs.upstream.config.clientId, request.client_name)
        : fs.upstream.config.clientId,
      client_id_issued_at: Math.floor(deps.now() / 1000),
      redirect_uris: request.redirect_uris,
      // Clients that register only authorization_code refresh anyway: refresh_token is always listed.
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // A facade cannot hand out the upstream secret: every client is public.
      token_endpoint_auth_method: 'none',
      application_type:
        request.application_type === 'web' || request.application_type === 'native' ? request.application_type : native ? 'native' : 'web',
    };
    if (request.client_name !== undefined && request.client_name !== null) response.client_name = request.client_name;
    if (request.software_id !== undefined && request.software_id !== null) response.software_id = request.software_id;
    sendJson(ctx.res, 200, response, { 'cache-control': 'no-store', pragma: 'no-cache' });
  };
}
