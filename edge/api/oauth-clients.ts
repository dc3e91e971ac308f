// The REST API's view of the OAuth clients acting for an organization: which clients users have
// authorized, with their grants, and revoking a client or one grant. The authorization server's
// records are read and changed through its management module.
import * as z from 'zod';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import {
  clientParams,
  errors,
  json,
  listEnvelope,
  listing,
  NotFoundError,
  orgParams,
  pageArgs,
  pageQuery,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

const GrantId = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_-]+$/, { error: 'must be a grant id' });
const grantParams = clientParams.extend({ grant_id: GrantId });

export const GrantSchema = z
  .object({
    id: z.string(),
    user_id: z.string(),
    scope: z.string(),
    resources: z.array(z.string()),
    created_at: z.string(),
  })
  .meta({ title: 'Grant' });

export const OAuthClientSchema = z
  .object({
    client_id: z.string(),
    client_name: z.string().nullable(),
    grants: z.array(GrantSchema),
  })
  .meta({ title: 'OAuthClient' });

export const OAuthClientListSchema = listEnvelope('clients', OAuthClientSchema, 'OAuthClientList');
export const RevokedSchema = z
  .object({
    client_id: z.string(),
    revoked_grants: z.int().meta({ description: 'Grants (refresh-token families) revoked.' }),
  })
  .meta({ title: 'Revoked' });

function listOAuthClientsRoute({ management }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/oauth-clients',
    operationId: 'listOAuthClients',
    summary: 'List OAuth clients and their grants',
    description:
      'The clients (MCP clients, tools) users have authorized to act for the organization, each with its grants, in the order of their first grant, a page at a time.',
    tags: ['OAuth clients'],
    params: orgParams,
    query: pageQuery,
    responses: { '200': json(OAuthClientListSchema, 'The clients.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
    handler: async (c) => {
      const page = await listing(() => management.listClients(c.input.params.organization_id, pageArgs(c.input.query)));
      const items = page.items.map((cl) => ({
        client_id: cl.clientId,
        client_name: cl.clientName,
        grants: cl.grants.map((g) => ({
          id: g.grantId,
          user_id: g.userId,
          scope: g.scope,
          resources: g.resources,
          created_at: new Date(g.createdAt).toISOString(),
        })),
      }));
      sendPage(c, 'clients', items, page.nextPageToken);
    },
  });
}

function revokeOAuthClientRoute({ management }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'POST',
    path: '/organizations/:organization_id/oauth-clients/:client_id/revoke',
    operationId: 'revokeOAuthClient',
    summary: "Revoke a client's tokens",
    description:
      'Revokes every token the client holds for the organization: refresh tokens at once, access tokens at the REST API and the Brain within seconds. The client must ask the user again. Requires a signed-in owner or admin.',
    tags: ['OAuth clients'],
    params: clientParams,
    responses: { '200': json(RevokedSchema, 'What was revoked.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
    handler: async (c) => {
      const n = await management.revokeClient(c.input.params.organization_id, c.input.params.client_id);
      sendJson(c.res, 200, { client_id: c.input.params.client_id, revoked_grants: n });
    },
  });
}

function revokeOAuthGrantRoute({ management }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'POST',
    path: '/organizations/:organization_id/oauth-clients/:client_id/grants/:grant_id/revoke',
    operationId: 'revokeOAuthGrant',
    summary: 'Revoke one grant of a client',
    description:
      "Revokes one grant, i.e. one authorization by one user (as listed by listOAuthClients): its refresh tokens at once, its access tokens at the REST API and the Brain within seconds. The client's other grants keep working. Clients that sign in through the gateway's OAuth facade all share the gateway's client (mindgate-gateway-brain), so this is how one of them is cut off. Requires a signed-in owner or admin.",
    tags: ['OAuth clients'],
    params: grantParams,
    responses: {
      '200': json(RevokedSchema, 'What was revoked.'),
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '422': errors['422'],
    },
    handler: async (c) => {
      const { organization_id: organizationId, client_id: clientId, grant_id: grantId } = c.input.params;
      if (!(await management.revokeGrant(organizationId, clientId, grantId))) {
        throw new NotFoundError(`client "${clientId}" has no grant "${grantId}" in this organization`);
      }
      sendJson(c.res, 200, { client_id: clientId, revoked_grants: 1 });
    },
  });
}

export function oauthClientRoutes(deps: RouteDeps): RestRoute[] {
  return [listOAuthClientsRoute(deps), revokeOAuthClientRoute(deps), revokeOAuthGrantRoute(deps)];
}
