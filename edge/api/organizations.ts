// The organization operations of the REST API: the caller's organizations, API keys, the OAuth
// clients acting for an organization (with revocation), and confidential clients for
// client_credentials. Each route is declared once (api-route.ts): the same zod schemas validate
// requests and produce the OpenAPI document.
import { timestampMs, type Timestamp } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import * as z from 'zod';
import { Role } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import type { AppContext } from '../context.ts';
import { defineApiRoute, type ApiRoute, type ApiRouteContext, type ResponseSpec } from '../http/api-route.ts';
import { readBody, sendJson } from '../http/respond.ts';
import { parseJsonBody, validate } from '../http/validation.ts';
import { createOAuthManagement } from '../oauth/management.ts';
import { requireAdmin, requireOrganization, type Caller } from './auth.ts';

// --- schemas -----------------------------------------------------------------------------------

const iso = (t: Timestamp | undefined) => (t ? new Date(timestampMs(t)).toISOString() : null);
const json = (schema: z.ZodType, description: string): ResponseSpec => ({ description, content: { 'application/json': schema } });

const OrganizationId = z.string().regex(/^org_[A-Za-z0-9]{1,60}$/, { error: 'must be an organization id (org_...)' })
  .meta({ description: 'Organization id.', example: 'org_3hT9xQ2mZr8vKp1L' });
const KeyId = z.string().regex(/^k[A-Za-z0-9]{16}$/, { error: 'must be an API key id (k + 16 characters)' });
const ClientId = z.string().min(1).max(200).regex(/^[A-Za-z0-9_-]+$/, { error: 'must be a client id' });
const GrantId = z.string().min(1).max(200).regex(/^[A-Za-z0-9_-]+$/, { error: 'must be a grant id' });
const Name = z.string({ error: 'must be a string' }).trim().min(1, { error: 'must not be empty' }).max(200, { error: 'must be at most 200 characters' });

export const OrganizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  brain_id: z.string().meta({ description: 'The organization\'s brain (shared memory).' }),
  role: z.enum(['owner', 'admin', 'member']).nullable().meta({ description: 'The caller\'s role, for user tokens.' }),
  current: z.boolean().meta({ description: 'True for the organization the credentials act for.' }),
  created_at: z.string().nullable(),
}).meta({ title: 'Organization' });

export const OrganizationListSchema = z.object({ organizations: z.array(OrganizationSchema) }).meta({ title: 'OrganizationList' });

export const ApiKeySchema = z.object({
  id: z.string(),
  organization_id: z.string(),
  name: z.string(),
  prefix: z.string().meta({ description: 'The first characters of the key, to recognise it.' }),
  created_by: z.string(),
  created_at: z.string().nullable(),
  rotated_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
}).meta({ title: 'ApiKey' });

export const ApiKeyListSchema = z.object({ api_keys: z.array(ApiKeySchema) }).meta({ title: 'ApiKeyList' });
export const ApiKeyWithSecretSchema = z.object({
  api_key: ApiKeySchema,
  secret: z.string().meta({ description: 'The key, to send as x-api-key. Shown only in this response.' }),
}).meta({ title: 'ApiKeyWithSecret' });

export const CreateApiKeySchema = z.object({ name: Name }).strict().meta({ title: 'CreateApiKey' });

export const GrantSchema = z.object({
  id: z.string(),
  user_id: z.string(),
  scope: z.string(),
  resources: z.array(z.string()),
  created_at: z.string(),
}).meta({ title: 'Grant' });

export const OAuthClientSchema = z.object({
  client_id: z.string(),
  client_name: z.string().nullable(),
  grants: z.array(GrantSchema),
}).meta({ title: 'OAuthClient' });

export const OAuthClientListSchema = z.object({ clients: z.array(OAuthClientSchema) }).meta({ title: 'OAuthClientList' });
export const RevokedSchema = z.object({
  client_id: z.string(),
  revoked_grants: z.int().meta({ description: 'Grants (refresh-token families) revoked.' }),
}).meta({ title: 'Revoked' });

export const ConfidentialClientSchema = z.object({
  client_id: z.string(),
  client_name: z.string(),
  organization_id: z.string(),
  grant_types: z.array(z.literal('client_credentials')),
  token_endpoint_auth_method: z.literal('client_secret_basic'),
  created_at: z.string(),
  secret_rotated_at: z.string().nullable(),
}).meta({ title: 'ConfidentialClient' });

export const ConfidentialClientListSchema = z.object({ clients: z.array(ConfidentialClientSchema) }).meta({ title: 'ConfidentialClientList' });
export const ConfidentialClientWithSecretSchema = z.object({
  client: ConfidentialClientSchema,
  client_secret: z.string().meta({ description: 'Shown only in this response.' }),
}).meta({ title: 'ConfidentialClientWithSecret' });

export const CreateConfidentialClientSchema = z.object({ name: Name }).strict().meta({ title: 'CreateConfidentialClient' });

// --- helpers -------------------------------------------------------------------------------------

export interface OrganizationRouteOptions {
  ctx: AppContext;
  authenticate: (ctx: ApiRouteContext<any, any>) => Promise<Caller>;
}

/** A route plus what the OpenAPI builder does not know: request body and security. */
export type RestRoute = ApiRoute<any, any> & { body?: z.ZodType; secured?: boolean };

class NotFound extends Error {}
export { NotFound as NotFoundError };

/** The request body is not JSON (415). */
export class MediaTypeError extends Error {}

async function readJson<S extends z.ZodType>(c: ApiRouteContext<any, any>, schema: S, limit: number): Promise<z.output<S>> {
  const type = (c.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') throw new MediaTypeError('send the body as application/json');
  return validate(schema, parseJsonBody(await readBody(c.req, limit)), 'body');
}

const ROLE_NAMES: Record<number, 'owner' | 'admin' | 'member'> = { [Role.OWNER]: 'owner', [Role.ADMIN]: 'admin', [Role.MEMBER]: 'member' };

const errors = { '401': 'Unauthorized', '403': 'Forbidden', '422': 'ValidationFailed' } as const;

export function organizationRoutes({ ctx, authenticate }: OrganizationRouteOptions): RestRoute[] {
  const management = createOAuthManagement(ctx.stores.records, ctx.keyEncryption, ctx.config, ctx.now);
  const limit = ctx.config.maxBodyBytes;
  const orgParams = z.object({ organization_id: OrganizationId });
  const keyParams = z.object({ organization_id: OrganizationId, key_id: KeyId });
  const clientParams = z.object({ organization_id: OrganizationId, client_id: ClientId });
  const grantParams = z.object({ organization_id: OrganizationId, client_id: ClientId, grant_id: GrantId });

  const confidential = (c: { clientId: string; clientName: string; organizationId: string; createdAt: number; secretRotatedAt?: number }) => ({
    client_id: c.clientId,
    client_name: c.clientName,
    organization_id: c.organizationId,
    grant_types: ['client_credentials' as const],
    token_endpoint_auth_method: 'client_secret_basic' as const,
    created_at: new Date(c.createdAt).toISOString(),
    secret_rotated_at: c.secretRotatedAt ? new Date(c.secretRotatedAt).toISOString() : null,
  });

  const apiKey = (k: { keyId: string; organizationId: string; name: string; prefix: string; createdBy: string; createTime?: Timestamp; rotateTime?: Timestamp; lastUsedTime?: Timestamp }) => ({
    id: k.keyId,
    organization_id: k.organizationId,
    name: k.name,
    prefix: k.prefix,
    created_by: k.createdBy,
    created_at: iso(k.createTime),
    rotated_at: iso(k.rotateTime),
    last_used_at: iso(k.lastUsedTime),
  });

  const notFoundAs404 = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.NotFound) throw new NotFound(err.rawMessage);
      throw err;
    }
  };

  const routes: RestRoute[] = [
    defineApiRoute({
      method: 'GET',
      path: '/organizations',
      operationId: 'listOrganizations',
      summary: 'List the caller\'s organizations',
      description:
        'With a user\'s access token: every organization the user belongs to, with the user\'s role; `current` marks the one the token acts for. With an API key or a client_credentials token: the one organization it acts for.',
      tags: ['Organizations'],
      responses: { '200': json(OrganizationListSchema, 'The organizations.'), '401': errors['401'] },
      handler: async (c) => {
        const caller = await authenticate(c);
        let list: z.infer<typeof OrganizationSchema>[];
        if (caller.kind === 'user') {
          const res = await ctx.clients.organizations.listOrganizations({ userId: caller.subject });
          list = res.organizations.map((o) => ({
            id: o.organization!.organizationId,
            name: o.organization!.name,
            brain_id: o.organization!.brainId,
            role: ROLE_NAMES[o.role] ?? null,
            current: o.organization!.organizationId === caller.organizationId,
            created_at: iso(o.organization!.createTime),
          }));
        } else {
          const { organization: o } = await ctx.clients.organizations.getOrganization({ organizationId: caller.organizationId });
          list = [{ id: o!.organizationId, name: o!.name, brain_id: o!.brainId, role: null, current: true, created_at: iso(o!.createTime) }];
        }
        sendJson(c.res, 200, { organizations: list });
      },
    }),
    defineApiRoute({
      method: 'GET',
      path: '/organizations/:organization_id',
      operationId: 'getOrganization',
      summary: 'Get an organization',
      description: 'The organization the credentials act for; any other organization is 403.',
      tags: ['Organizations'],
      params: orgParams,
      responses: { '200': json(OrganizationSchema, 'The organization.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
      handler: async (c) => {
        const caller = await authenticate(c);
        requireOrganization(caller, c.input.params.organization_id);
        const { organization: o } = await notFoundAs404(() => ctx.clients.organizations.getOrganization({ organizationId: c.input.params.organization_id }));
        let role: 'owner' | 'admin' | 'member' | null = null;
        if (caller.kind === 'user') {
          const m = await ctx.clients.organizations.getMembership({ organizationId: o!.organizationId, userId: caller.subject }).catch(() => undefined);
          role = m?.membership ? (ROLE_NAMES[m.membership.role] ?? null) : null;
        }
        sendJson(c.res, 200, { id: o!.organizationId, name: o!.name, brain_id: o!.brainId, role, current: true, created_at: iso(o!.createTime) });
      },
    }),
    {
      ...defineApiRoute({
        method: 'POST',
        path: '/organizations/:organization_id/api-keys',
        operationId: 'createApiKey',
        summary: 'Create an API key',
        description: 'Creates an API key for the organization. The key (`secret`) is returned once and only its hash is stored. Requires a signed-in owner or admin.',
        tags: ['API keys'],
        params: orgParams,
        responses: { '201': json(ApiKeyWithSecretSchema, 'The key, with its secret.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
        handler: async (c) => {
          const caller = await authenticate(c);
          await requireAdmin(ctx, caller, c.input.params.organization_id);
          const body = await readJson(c, CreateApiKeySchema, limit);
          const res = await ctx.clients.apiKeys.createApiKey({ organizationId: c.input.params.organization_id, name: body.name, createdBy: caller.subject });
          sendJson(c.res, 201, { api_key: apiKey(res.apiKey!), secret: res.secret }, { 'cache-control': 'no-store' });
        },
      }),
      body: CreateApiKeySchema,
    },
    defineApiRoute({
      method: 'GET',
      path: '/organizations/:organization_id/api-keys',
      operationId: 'listApiKeys',
      summary: 'List API keys',
      description: 'The organization\'s API keys, never with their secrets.',
      tags: ['API keys'],
      params: orgParams,
      responses: { '200': json(ApiKeyListSchema, 'The keys.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
      handler: async (c) => {
        const caller = await authenticate(c);
        requireOrganization(caller, c.input.params.organization_id);
        const res = await ctx.clients.apiKeys.listApiKeys({ organizationId: c.input.params.organization_id });
        sendJson(c.res, 200, { api_keys: res.apiKeys.map(apiKey) });
      },
    }),
    defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/api-keys/:key_id/rotate',
      operationId: 'rotateApiKey',
      summary: 'Rotate an API key',
      description: 'Replaces the key\'s secret; the previous one stops working at once. The new secret is returned once. Requires a signed-in owner or admin.',
      tags: ['API keys'],
      params: keyParams,
      responses: { '200': json(ApiKeyWithSecretSchema, 'The key, with its new secret.'), '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
      handler: async (c) => {
        const caller = await authenticate(c);
        await requireAdmin(ctx, caller, c.input.params.organization_id);
        const res = await notFoundAs404(() => ctx.clients.apiKeys.rotateApiKey({ organizationId: c.input.params.organization_id, keyId: c.input.params.key_id }));
        sendJson(c.res, 200, { api_key: apiKey(res.apiKey!), secret: res.secret }, { 'cache-control': 'no-store' });
      },
    }),
    defineApiRoute({
      method: 'DELETE',
      path: '/organizations/:organization_id/api-keys/:key_id',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key',
      description: 'Deletes the key; it stops working at once. Requires a signed-in owner or admin.',
      tags: ['API keys'],
      params: keyParams,
      responses: { '204': { description: 'Revoked.' }, '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
      handler: async (c) => {
        const caller = await authenticate(c);
        await requireAdmin(ctx, caller, c.input.params.organization_id);
        await notFoundAs404(() => ctx.clients.apiKeys.revokeApiKey({ organizationId: c.input.params.organization_id, keyId: c.input.params.key_id }));
        c.res.writeHead(204).end();
      },
    }),
    defineApiRoute({
      method: 'GET',
      path: '/organizations/:organization_id/oauth-clients',
      operationId: 'listOAuthClients',
      summary: 'List OAuth clients and their grants',
      description: 'The clients (MCP clients, tools) users have authorized to act for the organization, each with its grants.',
      tags: ['OAuth clients'],
      params: orgParams,
      responses: { '200': json(OAuthClientListSchema, 'The clients.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
      handler: async (c) => {
        const caller = await authenticate(c);
        requireOrganization(caller, c.input.params.organization_id);
        const clients = await management.listClients(c.input.params.organization_id);
        sendJson(c.res, 200, {
          clients: clients.map((cl) => ({
            client_id: cl.clientId,
            client_name: cl.clientName,
            grants: cl.grants.map((g) => ({ id: g.grantId, user_id: g.userId, scope: g.scope, resources: g.resources, created_at: new Date(g.createdAt).toISOString() })),
          })),
        });
      },
    }),
    defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/oauth-clients/:client_id/revoke',
      operationId: 'revokeOAuthClient',
      summary: 'Revoke a client\'s tokens',
      description:
        'Revokes every token the client holds for the organization: refresh tokens at once, access tokens at the REST API and the Brain within seconds. The client must ask the user again. Requires a signed-in owner or admin.',
      tags: ['OAuth clients'],
      params: clientParams,
      responses: { '200': json(RevokedSchema, 'What was revoked.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
      handler: async (c) => {
        const caller = await authenticate(c);
        await requireAdmin(ctx, caller, c.input.params.organization_id);
        const n = await management.revokeClient(c.input.params.organization_id, c.input.params.client_id);
        sendJson(c.res, 200, { client_id: c.input.params.client_id, revoked_grants: n });
      },
    }),
    defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/oauth-clients/:client_id/grants/:grant_id/revoke',
      operationId: 'revokeOAuthGrant',
      summary: 'Revoke one grant of a client',
      description:
        'Revokes one grant, i.e. one authorization by one user (as listed by listOAuthClients): its refresh tokens at once, its access tokens at the REST API and the Brain within seconds. The client\'s other grants keep working. Clients that sign in through the gateway\'s OAuth facade all share the gateway\'s client (mindgate-gateway-brain), so this is how one of them is cut off. Requires a signed-in owner or admin.',
      tags: ['OAuth clients'],
      params: grantParams,
      responses: { '200': json(RevokedSchema, 'What was revoked.'), '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
      handler: async (c) => {
        const { organization_id: organizationId, client_id: clientId, grant_id: grantId } = c.input.params;
        const caller = await authenticate(c);
        await requireAdmin(ctx, caller, organizationId);
        if (!(await management.revokeGrant(organizationId, clientId, grantId))) {
          throw new NotFound(`client "${clientId}" has no grant "${grantId}" in this organization`);
        }
        sendJson(c.res, 200, { client_id: clientId, revoked_grants: 1 });
      },
    }),
    {
      ...defineApiRoute({
        method: 'POST',
        path: '/organizations/:organization_id/confidential-clients',
        operationId: 'createConfidentialClient',
        summary: 'Create a confidential client',
        description:
          'Issues a confidential client to the organization for server-to-server use (client_credentials grant at the authorization server, client_secret_basic). The secret is returned once. Requires a signed-in owner or admin.',
        tags: ['Confidential clients'],
        params: orgParams,
        responses: { '201': json(ConfidentialClientWithSecretSchema, 'The client, with its secret.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
        handler: async (c) => {
          const caller = await authenticate(c);
          await requireAdmin(ctx, caller, c.input.params.organization_id);
          const body = await readJson(c, CreateConfidentialClientSchema, limit);
          const { client, secret } = await management.createConfidentialClient(c.input.params.organization_id, body.name);
          sendJson(c.res, 201, { client: confidential(client), client_secret: secret }, { 'cache-control': 'no-store' });
        },
      }),
      body: CreateConfidentialClientSchema,
    },
    defineApiRoute({
      method: 'GET',
      path: '/organizations/:organization_id/confidential-clients',
      operationId: 'listConfidentialClients',
      summary: 'List confidential clients',
      description: 'The organization\'s confidential clients, never with their secrets.',
      tags: ['Confidential clients'],
      params: orgParams,
      responses: { '200': json(ConfidentialClientListSchema, 'The clients.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
      handler: async (c) => {
        const caller = await authenticate(c);
        requireOrganization(caller, c.input.params.organization_id);
        const list = await management.listConfidentialClients(c.input.params.organization_id);
        sendJson(c.res, 200, { clients: list.map(confidential) });
      },
    }),
    defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/confidential-clients/:client_id/rotate-secret',
      operationId: 'rotateConfidentialClientSecret',
      summary: 'Rotate a confidential client\'s secret',
      description: 'Replaces the secret; the previous one stops working at once. Requires a signed-in owner or admin.',
      tags: ['Confidential clients'],
      params: clientParams,
      responses: { '200': json(ConfidentialClientWithSecretSchema, 'The client, with its new secret.'), '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
      handler: async (c) => {
        const caller = await authenticate(c);
        await requireAdmin(ctx, caller, c.input.params.organization_id);
        const rotated = await management.rotateConfidentialSecret(c.input.params.organization_id, c.input.params.client_id);
        if (!rotated) throw new NotFound(`confidential client "${c.input.params.client_id}" does not exist`);
        sendJson(c.res, 200, { client: confidential(rotated.client), client_secret: rotated.secret }, { 'cache-control': 'no-store' });
      },
    }),
    defineApiRoute({
      method: 'DELETE',
      path: '/organizations/:organization_id/confidential-clients/:client_id',
      operationId: 'deleteConfidentialClient',
      summary: 'Delete a confidential client',
      description: 'Deletes the client and revokes its tokens. Requires a signed-in owner or admin.',
      tags: ['Confidential clients'],
      params: clientParams,
      responses: { '204': { description: 'Deleted.' }, '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
      handler: async (c) => {
        const caller = await authenticate(c);
        await requireAdmin(ctx, caller, c.input.params.organization_id);
        if (!(await management.deleteConfidentialClient(c.input.params.organization_id, c.input.params.client_id))) {
          throw new NotFound(`confidential client "${c.input.params.client_id}" does not exist`);
        }
        c.res.writeHead(204).end();
      },
    }),
  ];
  for (const r of routes) if (r.path !== '/health') r.secured = true;
  return routes;
}
