// The social identity provider as seen from the authorization server (openid-client, code flow
// with PKCE, state and nonce): one start and one redirect URI (`/social/callback`) for both
// purposes a flow can serve, a sign-in bound to an oidc-provider interaction, or accepting an
// invitation bound to its link and to the browser that opened it.
import { Code, ConnectError } from '@connectrpc/connect';
import type { ServerResponse } from 'node:http';
import * as oidcClient from 'openid-client';
import type { RecordDoc } from '../../../services/common/storage/records/interface.ts';
import type { RouteContext } from '../../http/router.ts';
import { redirect, type InteractionKit } from './kit.ts';

const SOCIAL_STATE_TTL_MS = 10 * 60 * 1000;

/** What a flow returns to: the interaction `uid`, or the invitation link's token with the browser's standalone CSRF token. */
export type SocialPurpose = { uid: string } | { invitation: string; browser: string };

export type SocialStateDoc = RecordDoc & SocialPurpose & { verifier: string; nonce: string };

/** A state record, as the callback took it. */
export type TakenState = SocialStateDoc & { state: string };
export type InvitationState = TakenState & { invitation: string; browser: string };

export const isInvitationState = (saved: TakenState): saved is InvitationState => typeof saved.invitation === 'string';

export interface SocialTicketDoc extends RecordDoc {
  uid: string;
  userId: string;
}

/** The claims of a confirmed identity, as UsersService.SignInWithSocialIdentity takes them. */
export interface SocialIdentity {
  issuer: string;
  subject: string;
  email?: string;
  emailVerified: boolean;
  name?: string;
}

export type Social = ReturnType<typeof createSocial>;

export function createSocial(kit: InteractionKit) {
  let socialConfig: Promise<oidcClient.Configuration> | undefined;
  const states = kit.records.collection<SocialStateDoc>('auth_social_states');
  const redirectUri = `${kit.issuer}/social/callback`;
  /** The provider's configuration, discovered at first use (and again after a failure). */
  const client = (): Promise<oidcClient.Configuration> => {
    const { social } = kit;
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
  };
  return {
    tickets: kit.records.collection<SocialTicketDoc>('auth_social_tickets'),
    /** Sends the browser to the provider, with a state record (valid 10 minutes, used once) for the callback. */
    async begin(res: ServerResponse, purpose: SocialPurpose): Promise<void> {
      const config = await client();
      const verifier = oidcClient.randomPKCECodeVerifier();
      const state = oidcClient.randomState();
      const nonce = oidcClient.randomNonce();
      await states.put({ _id: state, ...purpose, verifier, nonce, expiresAt: kit.app.now() + SOCIAL_STATE_TTL_MS });
      const url = oidcClient.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid email profile',
        code_challenge: await oidcClient.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      redirect(res, url.href);
    },
    /** The callback's state record, taken (so a replayed callback finds none); undefined when forged, used or expired. */
    async take(c: RouteContext): Promise<TakenState | undefined> {
      const state = c.query.get('state') ?? '';
      const saved = /^[A-Za-z0-9_-]{1,128}$/.test(state) ? await states.take(state) : undefined;
      return saved ? { ...saved, state } : undefined;
    },
    /** Redeems the provider's code (checking state, nonce and PKCE) for the identity it confirms. */
    async identity(c: RouteContext, saved: TakenState): Promise<SocialIdentity> {
      const config = await client();
      const current = new URL(`${redirectUri}?${c.query.toString()}`);
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
      return {
        issuer: claims.iss,
        subject: claims.sub,
        email: typeof claims.email === 'string' ? claims.email : undefined,
        emailVerified: claims.email_verified === true,
        name: typeof claims.name === 'string' ? claims.name : undefined,
      };
    },
  };
}
