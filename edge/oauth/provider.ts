// The authorization server itself: oidc-provider (a certified OpenID Connect / OAuth 2
// implementation) configured by name, over the records-port adapter. This file is the one
// place that decides what the server allows: public clients by dynamic registration with PKCE
// S256, resource-bound JWT access tokens carrying the organization (`org`), refresh tokens only
// with offline_access (rotated, reuse revokes the family), client_credentials for an
// organization's confidential clients, revocation and introspection.
import Provider, { errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { RecordCollection, RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';
import type { KeyEncryption } from '../../services/common/key-encryption.ts';
import type { Logger } from '../../services/common/log.ts';
import type { EdgeConfig } from '../config.ts';
import type { Accounts } from './accounts.ts';
import { createAdapterFactory } from './adapter.ts';
import type { AuthKeys } from './keys.ts';
import { logoutPage, logoutSuccessPage, messagePage } from './pages.ts';
import { addProviderEdges } from './provider-edges.ts';
import { VIA_CLIENT_NAME_PARAM } from './gateway-client.ts';
import { applyRegistrationPolicy } from './registration-policy.ts';
import type { RevocationStore } from './revocations.ts';

export const SCOPES = ['openid', 'profile', 'email', 'offline_access'];

/** Which organization a grant (one consent) acts for; what the REST API lists and revokes. */
export interface GrantRecord extends RecordDoc {
  organizationId: string;
  clientId: string;
  accountId: string;
  scope: string;
  resources: string[];
  createdAt: number;
  /**
   * For the gateway's facade client: the name the original client registered at the facade,
   * carried upstream in the authorization request (`mindgate_client_name`).
   */
  viaClientName?: string;
}

export interface AuthServerOptions {
  config: EdgeConfig;
  records: RecordStore;
  kek: KeyEncryption;
  keys: AuthKeys;
  accounts: Accounts;
  revocations: RevocationStore;
  logger: Logger;
  now: () => number;
  /** Resources beyond the REST API and the Brain: the gateway's servers authorized by `platform`. */
  isGatewayResource?: (indicator: string) => Promise<boolean>;
}

export type AuthServer = ReturnType<typeof createAuthServer>;

/** The resources (RFC 8707) tokens may be issued for: the REST API and the Brain MCP server. */
export function resourceIndicators(config: EdgeConfig): { api: string; brain: string } {
  return { api: config.publicUrls.api, brain: `${config.publicUrls.gateway}/brain/mcp` };
}

export function createAuthServer(options: AuthServerOptions) {
  const { config, records, now } = options;
  const auth = config.auth;
  const issuer = config.publicUrls.auth;
  const resources = resourceIndicators(config);
  const grants = records.collection<GrantRecord>('auth_grants', {
    indexes: [{ fields: ['organizationId', 'clientId'] }, { fields: ['clientId'] }],
  });
  const adapters = createAdapterFactory({
    records,
    kek: options.kek,
    revocations: options.revocations,
    accessTokenTtl: auth.accessTokenTtl,
    now,
  });
  const configuration = buildConfiguration({ options, resources, grants, adapters });

  const provider = new Provider(issuer, configuration);
  // Behind a TLS-terminating ingress (an https issuer), trust its X-Forwarded-Proto.
  provider.proxy = issuer.startsWith('https:');
  addProviderEdges(provider, ROUTES.registration);
  provider.on('server_error', (_ctx: unknown, err: Error) => options.logger.error({ err }, 'authorization server error'));

  return {
    provider,
    grants,
    adapters,
    resources,
    /** Records which organization a new grant acts for. */
    async recordGrant(grant: Omit<GrantRecord, 'createdAt' | 'expiresAt'>) {
      await grants.put({ ...grant, createdAt: now(), expiresAt: now() + auth.refreshTokenTtl * 1000 } as GrantRecord);
    },
  };
}

const ROUTES = {
  authorization: '/authorize',
  registration: '/register',
  token: '/token',
  revocation: '/revoke',
  introspection: '/introspect',
  jwks: '/jwks',
  end_session: '/session/end',
  pushed_authorization_request: '/par',
};

interface ConfigurationDeps {
  options: AuthServerOptions;
  resources: { api: string; brain: string };
  grants: RecordCollection<GrantRecord>;
  adapters: ReturnType<typeof createAdapterFactory>;
}

function buildConfiguration({ options, resources, grants, adapters }: ConfigurationDeps): Configuration {
  const { config, accounts } = options;
  const ownOrigins = Object.values(config.publicUrls).map((u) => new URL(u).origin);
  return {
    adapter: adapters.adapter as unknown as Configuration['adapter'],
    clients: [],
    jwks: options.keys.signing as Configuration['jwks'],
    cookies: {
      keys: options.keys.cookieKeys,
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    scopes: SCOPES,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // No userinfo endpoint (every access token is for a resource), so ID tokens carry the claims.
    conformIdTokenClaims: false,
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    routes: ROUTES,
    features: features(config, resources, options.isGatewayResource),
    extraClientMetadata: organizationMetadata(ownOrigins),
    extraTokenClaims: (ctx, token) => tokenClaims(grants, accounts, ctx, token),
    // The gateway's facade names the client it acts for (edge/gateway/oauth/authorize.ts).
    extraParams: [VIA_CLIENT_NAME_PARAM],
    findAccount: async (_ctx, sub) => {
      const user = await accounts.get(sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        claims: async () => ({ sub, email: user.email, email_verified: user.emailVerified, name: user.name }),
      };
    },
    issueRefreshToken: async (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
    rotateRefreshToken: true,
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    ttl: lifetimes(config.auth),
    interactions: {
      policy: interactionPolicyWithConsent(),
      url: (_ctx, interaction) => `/interaction/${interaction.uid}`,
    },
    clientBasedCORS: (_ctx, origin, client) =>
      client.clientAuthMethod === 'none' && (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      const description = typeof out.error_description === 'string' ? out.error_description : 'The request could not be completed.';
      ctx.body = messagePage('Something went wrong', `${out.error}: ${description}`, 'error');
    },
    enableHttpPostMethods: false,
  };
}

function features(
  config: EdgeConfig,
  resources: { api: string; brain: string },
  isGatewayResource?: (indicator: string) => Promise<boolean>,
): Configuration['features'] {
  return {
    devInteractions: { enabled: false },
    userinfo: { enabled: false },
    registration: { enabled: true, initialAccessToken: false },
    revocation: { enabled: true },
    introspection: {
      enabled: true,
      // A public client may introspect only its own tokens.
      allowedPolicy: async (ctx, client, token) => client.clientAuthMethod !== 'none' || token.clientId === ctx.oidc.client?.clientId,
    },
    clientCredentials: { enabled: true },
    rpInitiatedLogout: {
      enabled: true,
      logoutSource: async (ctx, form) => {
        ctx.type = 'html';
        ctx.body = logoutPage(form, ctx.oidc.client?.clientName);
      },
      postLogoutSuccessSource: async (ctx) => {
        ctx.type = 'html';
        ctx.body = logoutSuccessPage(ctx.oidc.client?.clientName);
      },
    },
    resourceIndicators: resourceIndicatorsFeature(config.auth.accessTokenTtl, resources, isGatewayResource),
  };
}

type Features = NonNullable<Configuration['features']>;

function resourceIndicatorsFeature(
  accessTokenTtl: number,
  resources: { api: string; brain: string },
  isGatewayResource: (indicator: string) => Promise<boolean> = async () => false,
): Features['resourceIndicators'] {
  const allowedResources = new Set([resources.api, resources.brain]);
  return {
    enabled: true,
    defaultResource: async (_ctx, _client, oneOf) => oneOf ?? resources.api,
    // A token request without `resource` gets the resource that was authorized.
    useGrantedResource: async () => true,
    getResourceServerInfo: async (ctx, indicator, client) => {
      if (!allowedResources.has(indicator) && !(await isGatewayResource(indicator))) {
        throw new errors.InvalidTarget(`unknown resource ${indicator}`);
      }
      if (ctx.oidc.route === 'token' && client.grantTypeAllowed('client_credentials') && !organizationOf(client)) {
        throw new errors.InvalidTarget('this client acts for no organization');
      }
      return {
        scope: SCOPES.join(' '),
        audience: indicator,
        accessTokenTTL: accessTokenTtl,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      };
    },
  };
}

/** `organization_id` is set when an organization issues a confidential client, never by registration. */
function organizationMetadata(ownOrigins: string[]): Configuration['extraClientMetadata'] {
  return {
    properties: ['organization_id'],
    validator(ctx, key, value, metadata) {
      if (key !== 'organization_id') return;
      if (ctx?.oidc?.route !== 'registration') return; // issued by an organization, or loaded from storage
      if (value !== undefined) {
        throw new errors.InvalidClientMetadata('organization_id cannot be registered; confidential clients are issued by an organization');
      }
      const body = (ctx.oidc.body ?? {}) as Record<string, unknown>;
      applyRegistrationPolicy(metadata as Record<string, unknown>, body, ownOrigins);
    },
  };
}

/**
 * Access tokens carry the organization they act for (`org`), their grant (`gid`), and for
 * display by resource servers the client's registered name (`client_name`: for the facade
 * client, the original client's) and, with the profile scope, the user's name (`name`).
 */
async function tokenClaims(grants: RecordCollection<GrantRecord>, accounts: Accounts, ctx: KoaContextWithOIDC, token: { kind: string }) {
  const clientName = ctx.oidc.client?.clientName;
  if (token.kind === 'ClientCredentials') {
    const org = organizationOf(ctx.oidc.client);
    return { ...(org ? { org } : {}), ...(clientName ? { client_name: clientName } : {}) };
  }
  const { grantId, accountId, scope } = token as { grantId?: string; accountId?: string; scope?: string };
  if (!grantId) return undefined;
  const [grant, account] = await Promise.all([
    grants.get(grantId),
    accountId && scope?.split(' ').includes('profile') ? accounts.get(accountId) : undefined,
  ]);
  const name = grant?.viaClientName || clientName;
  return {
    ...(grant ? { org: grant.organizationId } : {}),
    gid: grantId,
    ...(name ? { client_name: name } : {}),
    ...(account?.name ? { name: account.name } : {}),
  };
}

function lifetimes(auth: EdgeConfig['auth']): Configuration['ttl'] {
  return {
    AccessToken: auth.accessTokenTtl,
    ClientCredentials: auth.accessTokenTtl,
    AuthorizationCode: 60,
    IdToken: 3600,
    Interaction: 3600,
    Session: auth.sessionTtl,
    Grant: auth.refreshTokenTtl,
    // A rotated refresh token keeps the family's expiry: rotation never extends a grant.
    RefreshToken: (ctx) => ctx?.oidc?.entities.RotatedRefreshToken?.remainingTTL ?? auth.refreshTokenTtl,
  };
}

/**
 * Consent is asked on every authorization, because it is where the user picks the organization
 * the client acts for (and the MCP security practices want consent per client).
 */
function interactionPolicyWithConsent() {
  const policy = interactionPolicy.base();
  policy
    .get('consent')!
    .checks.add(
      new interactionPolicy.Check('organization_choice', 'the user picks the organization', 'consent_required', (ctx) =>
        ctx.oidc.result?.consent ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
      ),
    );
  return policy;
}

export function organizationOf(client: unknown): string | undefined {
  const c = client as { metadata?: () => Record<string, unknown> } | undefined;
  const org = c?.metadata?.().organization_id;
  return typeof org === 'string' && org ? org : undefined;
}

export type { KoaContextWithOIDC };
