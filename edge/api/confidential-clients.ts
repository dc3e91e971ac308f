// The REST API's confidential clients of an organization, for server-to-server use with the
// client_credentials grant: create, list, rotate the secret, delete. A secret is shown only when
// it is created or rotated.
import * as z from 'zod';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import {
  clientParams,
  errors,
  json,
  listEnvelope,
  listing,
  Name,
  NotFoundError,
  orgParams,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

export const ConfidentialClientSchema = z
  .object({
    client_id: z.string(),
    client_name: z.string(),
    organization_id: z.string(),
    grant_types: z.array(z.literal('client_credentials')),
    token_endpoint_auth_method: z.literal('client_secret_basic'),
    created_at: z.string(),
    secret_rotated_at: z.string().nullable(),
  })
  .meta({ title: 'ConfidentialClient' });

export const ConfidentialClientListSchema = listEnvelope('clients', ConfidentialClientSchema, 'ConfidentialClientList');
export const ConfidentialClientWithSecretSchema = z
  .object({
    client: ConfidentialClientSchema,
    client_secret: z.string().meta({ description: 'Shown only in this response.' }),
  })
  .meta({ title: 'ConfidentialClientWithSecret' });

export const CreateConfidentialClientSchema = z.object({ name: Name }).strict().meta({ title: 'CreateConfidentialClient' });

interface ClientFields {
  clientId: string;
  clientName: string;
  organizationId: string;
  createdAt: number;
  secretRotatedAt?: number;
}

const confidential = (c: ClientFields) => ({
  client_id: c.clientId,
  client_name: c.clientName,
  organization_id: c.organizationId,
  grant_types: ['client_credentials' as const],
  token_endpoint_auth_method: 'client_secret_basic' as const,
  created_at: new Date(c.createdAt).toISOString(),
  secret_rotated_at: c.secretRotatedAt ? new Date(c.secretRotatedAt).toISOString() : null,
});

function createConfidentialClientRoute({ management, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/confidential-clients',
      operationId: 'createConfidentialClient',
      summary: 'Create a confidential client',
      description:
        'Issues a confidential client to the organization for server-to-server use (client_credentials grant at the authorization server, client_secret_basic). The secret is returned once. Requires a signed-in owner or admin.',
      tags: ['Confidential clients'],
      params: orgParams,
      responses: {
        '201': json(ConfidentialClientWithSecretSchema, 'The client, with its secret.'),
        '401': errors['401'],
        '403': errors['403'],
        '422': errors['422'],
      },
      handler: async (c) => {
        const body = await readJson(c, CreateConfidentialClientSchema, limit);
        const { client, secret } = await management.createConfidentialClient(c.input.params.organization_id, body.name);
        sendJson(c.res, 201, { client: confidential(client), client_secret: secret }, { 'cache-control': 'no-store' });
      },
    }),
    body: CreateConfidentialClientSchema,
    creates: true,
  };
}

function listConfidentialClientsRoute({ management }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/confidential-clients',
    operationId: 'listConfidentialClients',
    summary: 'List confidential clients',
    description: "The organization's confidential clients, oldest first, a page at a time, never with their secrets.",
    tags: ['Confidential clients'],
    params: orgParams,
    query: pageQuery,
    responses: {
      '200': json(ConfidentialClientListSchema, 'The clients.'),
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const page = await listing(() => management.listConfidentialClients(c.input.params.organization_id, pageArgs(c.input.query)));
      sendPage(c, 'clients', page.items.map(confidential), page.nextPageToken);
    },
  });
}

function rotateConfidentialClientSecretRoute({ management }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'POST',
    path: '/organizations/:organization_id/confidential-clients/:client_id/rotate-secret',
    operationId: 'rotateConfidentialClientSecret',
    summary: "Rotate a confidential client's secret",
    description: 'Replaces the secret; the previous one stops working at once. Requires a signed-in owner or admin.',
    tags: ['Confidential clients'],
    params: clientParams,
    responses: {
      '200': json(ConfidentialClientWithSecretSchema, 'The client, with its new secret.'),
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '422': errors['422'],
    },
    handler: async (c) => {
      const rotated = await management.rotateConfidentialSecret(c.input.params.organization_id, c.input.params.client_id);
      if (!rotated) throw new NotFoundError(`confidential client "${c.input.params.client_id}" does not exist`);
      sendJson(c.res, 200, { client: confidential(rotated.client), client_secret: rotated.secret }, { 'cache-control': 'no-store' });
    },
  });
}

function deleteConfidentialClientRoute({ management }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/confidential-clients/:client_id',
    operationId: 'deleteConfidentialClient',
    summary: 'Delete a confidential client',
    description: 'Deletes the client and revokes its tokens. Requires a signed-in owner or admin.',
    tags: ['Confidential clients'],
    params: clientParams,
    responses: { '204': { description: 'Deleted.' }, '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
    handler: async (c) => {
      if (!(await management.deleteConfidentialClient(c.input.params.organization_id, c.input.params.client_id))) {
        throw new NotFoundError(`confidential client "${c.input.params.client_id}" does not exist`);
      }
      c.res.writeHead(204).end();
    },
  });
}

export function confidentialClientRoutes(deps: RouteDeps): RestRoute[] {
  return [
    createConfidentialClientRoute(deps),
    listConfidentialClientsRoute(deps),
    rotateConfidentialClientSecretRoute(deps),
    deleteConfidentialClientRoute(deps),
  ];
}
