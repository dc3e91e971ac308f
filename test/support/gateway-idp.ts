// A real upstream identity provider for the gateway tests, built on oidc-provider: the gateway's
// pre-registered confidential clients, JWT access tokens per resource (RFC 8707), refresh tokens
// with rotation, and an interaction endpoint that signs in a test user without a form (or
// refuses, when told to), so that a flow can be driven over plain HTTP.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export interface IdpClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** The resource (JWT audience) tokens of this client are for when the request names none. */
  defaultResource: string;
}

export interface TestIdp {
  issuer: string;
  jwksUri: string;
  /** The account the next sign-in uses. */
  account: string;
  /** Set to refuse the next interaction with `access_denied`. */
  denyNext: boolean;
  /** Upstream authorization requests as received (query parameters). */
  authorizationRequests: URLSearchParams[];
  close(): Promise<void>;
}

export interface TestIdpOptions {
  port?: number;
  clients: IdpClient[];
  /** Scopes a resource server accepts. */
  resourceScopes?: string;
}

export async function startTestIdp(options: TestIdpOptions): Promise<TestIdp> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const byClient = new Map(options.clients.map((c) => [c.clientId, c]));
  const resourceScopes = options.resourceScopes ?? 'mcp';

  const provider = new Provider(issuer, {
    clients: options.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: c.redirectUris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    jwks: { keys: [jwk] },
    cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
    scopes: ['openid', 'offline_access', 'profile', 'email', ...resourceScopes.split(' ')],
    claims: { openid: ['sub'], email: ['email'], profile: ['name'] },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx: unknown, client: { clientId: string }, oneOf?: string | string[]) =>
          oneOf ?? byClient.get(client.clientId)?.defaultResource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, resource: string) => ({
          scope: resourceScopes,
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
        }),
      },
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({ sub, email: `${sub}@example.test`, name: sub }),
    }),
    ttl: { AccessToken: 300, AuthorizationCode: 60, IdToken: 300, Interaction: 600, Session: 3600, Grant: 3600, RefreshToken: 86_400 },
    rotateRefreshToken: true,
  } as never);

  const idp: TestIdp = {
    issuer,
    jwksUri: `${issuer}/jwks`,
    account: 'alice',
    denyNext: false,
    authorizationRequests: [],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const callback = provider.callback();
  server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/auth' && req.method === 'GET') idp.authorizationRequests.push(url.searchParams);
    if (url.pathname.startsWith('/interaction/')) {
      void interact(req, res).catch((err) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(err));
      });
      return;
    }
    callback(req, res);
  });

  async function interact(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (idp.denyNext) {
      idp.denyNext = false;
      await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'The user said no.' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const prompt = details.prompt as { name: string; details: Record<string, unknown> };
    if (prompt.name === 'login') {
      await provider.interactionFinished(req, res, { login: { accountId: idp.account } }, { mergeWithLastSubmission: false });
      return;
    }
    const params = details.params as Record<string, string>;
    const accountId = (details.session as { accountId: string }).accountId;
    const grant = details.grantId
      ? (await provider.Grant.find(details.grantId as string))!
      : new provider.Grant({ accountId, clientId: params.client_id });
    const missingOidc = prompt.details.missingOIDCScope as string[] | undefined;
    if (missingOidc) grant.addOIDCScope(missingOidc.join(' '));
    const missingResource = prompt.details.missingResourceScopes as Record<string, string[]> | undefined;
    for (const [indicator, scopes] of Object.entries(missingResource ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  return idp;
}

export { freePort } from './ports.ts';
