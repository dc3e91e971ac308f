// Social sign-in through any OpenID Connect provider (openid-client, code flow with PKCE): the
// interaction sends the browser to the provider, the callback maps the identity to an account,
// and a one-time ticket brings the browser back under /interaction/<uid> to finish.
import { randomBytes } from 'node:crypto';
import { Code, ConnectError } from '@connectrpc/connect';
import * as oidcClient from 'openid-client';
import type { RecordDoc } from '../../../services/common/storage/records/interface.ts';
import type { RouteContext, Router } from '../../http/router.ts';
import { AccountError, type Account } from '../accounts.ts';
import { messagePage } from '../pages.ts';
import { redirect, send, type InteractionKit } from './kit.ts';

const SOCIAL_STATE_TTL_MS = 10 * 60 * 1000;

interface SocialStateDoc extends RecordDoc {
  uid: string;
  verifier: string;
  nonce: string;
}

interface SocialTicketDoc extends RecordDoc {
  uid: string;
  userId: string;
}

type Social = ReturnType<typeof createSocial>;

function createSocial(kit: InteractionKit) {
  const { social } = kit;
  let socialConfig: Promise<oidcClient.Configuration> | undefined;
  return {
    states: kit.records.collection<SocialStateDoc>('auth_social_states'),
    tickets: kit.records.collection<SocialTicketDoc>('auth_social_tickets'),
    redirectUri: `${kit.issuer}/social/callback`,
    /** The provider's configuration, discovered at first use (and again after a failure). */
    client(): Promise<oidcClient.Configuration> {
      if (!social) throw new ConnectError('social sign-in is not configured', Code.NotFound);
      socialConfig ??= oidcClient.discovery(
        new URL(social.issuer),
        social.clientId,
        social.clientSecret,
        undefined,
        social.issuer.startsWith('http:') ? { execute: [oidcClient.allowInsecureRequests] } : undefined,
      );
      socialConfig.catch(() => (socialConfig = undefined));
      return socialConfig;
    },
  };
}

export function registerSocialRoutes(router: Router, kit: InteractionKit): void {
  const social = createSocial(kit);
  router.get('/interaction/:uid/social', (c) => start(kit, social, c));
  router.get('/social/callback', (c) => callback(kit, social, c));
  router.get('/interaction/:uid/social/complete', async (c) => {
    const d = await kit.details(c);
    if (!d) return;
    const ticketId = c.query.get('ticket') ?? '';
    const ticket = /^[A-Za-z0-9_-]{32}$/.test(ticketId) ? await social.tickets.take(ticketId) : undefined;
    if (!ticket || ticket.uid !== d.uid)
      return send(c.res, 400, messagePage('Sign-in expired', 'Start again from your application.', 'error'));
    await kit.provider.interactionFinished(
      c.req,
      c.res,
      { login: { accountId: ticket.userId, amr: ['fed'] } },
      { mergeWithLastSubmission: false },
    );
  });
}

async function start(kit: InteractionKit, social: Social, c: RouteContext): Promise<void> {
  const d = await kit.details(c);
  if (!d) return;
  if (!kit.social) return send(c.res, 404, messagePage('Not available', 'Social sign-in is not configured.', 'error'));
  const config = await social.client();
  const verifier = oidcClient.randomPKCECodeVerifier();
  const state = oidcClient.randomState();
  const nonce = oidcClient.randomNonce();
  await social.states.put({ _id: state, uid: d.uid, verifier, nonce, expiresAt: kit.app.now() + SOCIAL_STATE_TTL_MS });
  const url = oidcClient.buildAuthorizationUrl(config, {
    redirect_uri: social.redirectUri,
    scope: 'openid email profile',
    code_challenge: await oidcClient.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  redirect(c.res, url.href);
}

async function callback(kit: InteractionKit, social: Social, c: RouteContext): Promise<void> {
  const state = c.query.get('state') ?? '';
  const saved = /^[A-Za-z0-9_-]{1,128}$/.test(state) ? await social.states.take(state) : undefined;
  if (!saved) return send(c.res, 400, messagePage('Sign-in expired', 'Start again from your application.', 'error'));
  if (c.query.get('error')) {
    return send(
      c.res,
      400,
      messagePage('Sign-in cancelled', 'The identity provider did not sign you in. Start again from your application.', 'error'),
    );
  }
  let user: Account;
  try {
    user = await socialAccount(kit, social, c, { ...saved, state });
  } catch (err) {
    if (err instanceof AccountError) return send(c.res, 409, messagePage('Cannot sign you in', err.message, 'error'));
    kit.app.logger.warn({ err: (err as Error).message }, 'social sign-in failed');
    return send(c.res, 502, messagePage('Cannot sign you in', 'The identity provider could not confirm who you are.', 'error'));
  }
  const ticket = randomBytes(24).toString('base64url');
  await social.tickets.put({ _id: ticket, uid: saved.uid, userId: user.id, expiresAt: kit.app.now() + 5 * 60 * 1000 });
  // Back under /interaction/<uid>, where the browser sends the interaction cookie.
  redirect(c.res, `/interaction/${saved.uid}/social/complete?ticket=${ticket}`);
}

/** Redeems the provider's code and maps the identity it confirms to an account. */
async function socialAccount(
  kit: InteractionKit,
  social: Social,
  c: RouteContext,
  saved: SocialStateDoc & { state: string },
): Promise<Account> {
  const config = await social.client();
  const current = new URL(`${social.redirectUri}?${c.query.toString()}`);
  const tokens = await oidcClient.authorizationCodeGrant(config, current, {
    pkceCodeVerifier: saved.verifier,
    expectedState: saved.state,
    expectedNonce: saved.nonce,
    idTokenExpected: true,
  });
  let claims: Record<string, unknown> & { iss: string; sub: string } = { ...tokens.claims()! };
  // Providers that conform ID tokens to the spec put e-mail and name in userinfo only.
  if (typeof claims.email !== 'string' && config.serverMetadata().userinfo_endpoint) {
    claims = { ...(await oidcClient.fetchUserInfo(config, tokens.access_token, claims.sub)), iss: claims.iss, sub: claims.sub };
  }
  return kit.accounts.fromSocialIdentity({
    issuer: claims.iss,
    subject: claims.sub,
    email: typeof claims.email === 'string' ? claims.email : undefined,
    emailVerified: claims.email_verified === true,
    name: typeof claims.name === 'string' ? claims.name : undefined,
  });
}
