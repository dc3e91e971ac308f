// The platform with social sign-in configured against a second oidc-provider instance acting as
// the social identity provider (its development login and consent forms are answered over HTTP).
// The account `sub` has the address `<sub>@social.test`, verified unless `sub` starts with
// "unverified".
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { reservePorts, startOAuthTestPlatform } from './oauth-client.ts';
import type { TestPlatform } from './platform.ts';

const CLIENT_SECRET = 'social-client-secret-0123456789abcdef';

export interface SocialTestPlatform {
  platform: TestPlatform;
  /** The platform's authorization server. */
  authUrl: string;
  /** The social identity provider. */
  idpUrl: string;
  stop(): Promise<void>;
}

function startIdp(idp: http.Server, idpUrl: string, authUrl: string): void {
  const provider = new Provider(idpUrl, {
    clients: [
      {
        client_id: 'mindgate',
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${authUrl}/social/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    scopes: ['openid', 'email', 'profile'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({ sub, email: `${sub}@social.test`, email_verified: !sub.startsWith('unverified'), name: `Social ${sub}` }),
    }),
    features: { devInteractions: { enabled: true } },
    // Both servers live on 127.0.0.1, where browsers share cookies across ports.
    cookies: {
      keys: ['idp-cookie-key-0123456789abcdef0123'],
      names: { session: '_idp_session', interaction: '_idp_interaction', resume: '_idp_resume' },
    },
  });
  idp.on('request', provider.callback());
}

export async function startSocialTestPlatform(): Promise<SocialTestPlatform> {
  const [authPort] = await reservePorts(1);
  const authUrl = `http://127.0.0.1:${authPort}`;
  const idp = http.createServer();
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', () => resolve()));
  const idpUrl = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  startIdp(idp, idpUrl, authUrl);
  const platform = await startOAuthTestPlatform({
    AUTH_PORT: String(authPort),
    PUBLIC_AUTH_URL: authUrl,
    SOCIAL_OIDC_ISSUER: idpUrl,
    SOCIAL_OIDC_CLIENT_ID: 'mindgate',
    SOCIAL_OIDC_CLIENT_SECRET: CLIENT_SECRET,
    SOCIAL_OIDC_NAME: 'Example ID',
  }).catch(async (err: unknown) => {
    await new Promise<void>((resolve) => idp.close(() => resolve()));
    throw err;
  });
  return {
    platform,
    authUrl,
    idpUrl,
    async stop() {
      await platform.stop();
      await new Promise<void>((resolve) => idp.close(() => resolve()));
    },
  };
}
