// Who may buy a brain-pass for an existing organization: whoever proves access to it, with either
// - an API key of the organization (`x-api-key`) with the `admin` scope and no team, since the pass
//   is a Brain token for the whole organization and may change its plan, or
// - a brain-pass access token of the organization (`Brain-Pass-Token`), current or expired at most
//   RENEWAL_GRACE_SECONDS ago and not revoked, so an agent renews the pass it bought.
// Every failure looks the same (refused, with no detail of which check failed), and whether the
// organization exists is asked only once a credential of it has proven itself: a caller without one
// learns nothing about the organization it names.
import type { IncomingHttpHeaders } from 'node:http';
import { Code, ConnectError } from '@connectrpc/connect';
import { scopesAllow } from '../../services/common/api-key-scopes.ts';
import type { AppContext } from '../context.ts';
import { InvalidTokenError } from '../oauth/verify.ts';
import { PASS_CLIENT_ID } from './brain-pass-token.ts';

/** The request header that carries a brain-pass access token as proof (Authorization carries the payment). */
export const PASS_TOKEN_HEADER = 'brain-pass-token';
/** How long after its pass ended a brain-pass token still proves its organization: 7 days. */
export const RENEWAL_GRACE_SECONDS = 7 * 86_400;

/** Connect failures that mean "this credential is not valid" rather than "a service is down". */
function refusedCredential(err: unknown): boolean {
  if (err instanceof InvalidTokenError) return true;
  return (
    err instanceof ConnectError && (err.code === Code.Unauthenticated || err.code === Code.NotFound || err.code === Code.InvalidArgument)
  );
}

const single = (value: string | string[] | undefined) => (typeof value === 'string' && value !== '' ? value : undefined);

/** The organization the request's credential proves access to, undefined when it proves none. */
async function provenOrganization(ctx: AppContext, headers: IncomingHttpHeaders): Promise<string | undefined> {
  const apiKey = single(headers['x-api-key']);
  const passToken = single(headers[PASS_TOKEN_HEADER]);
  // One credential, so that which organization it proves is never a guess.
  if ((apiKey === undefined) === (passToken === undefined)) return undefined;
  if (apiKey !== undefined) {
    const { apiKey: key } = await ctx.clients.apiKeys.verifyApiKey({ secret: apiKey });
    return key && scopesAllow(key.scopes, 'admin') && !key.teamId ? key.organizationId : undefined;
  }
  const claims = await ctx.tokens.verify(passToken!, `${ctx.config.publicUrls.gateway}/brain/mcp`, {
    expiredGraceSeconds: RENEWAL_GRACE_SECONDS,
  });
  return claims.clientId === PASS_CLIENT_ID ? claims.organizationId : undefined;
}

/** Whether the request proves access to `organizationId`, an organization that exists. */
export async function provesAccessTo(ctx: AppContext, headers: IncomingHttpHeaders, organizationId: string): Promise<boolean> {
  let proven: string | undefined;
  try {
    proven = await provenOrganization(ctx, headers);
  } catch (err) {
    if (refusedCredential(err)) return false;
    throw err;
  }
  if (proven !== organizationId) return false;
  // A pass token outlives its organization's deletion by up to its grace: ask only now.
  try {
    await ctx.clients.organizations.getOrganization({ organizationId });
    return true;
  } catch (err) {
    if (refusedCredential(err)) return false;
    throw err;
  }
}
