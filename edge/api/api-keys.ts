// The REST API's API keys of an organization: create, list, rotate and revoke, each a call to the
// Agents service's ApiKeysService. A key's secret is shown only when it is created or rotated.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../services/common/api-key-scopes.ts';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import {
  errors,
  iso,
  json,
  listEnvelope,
  listing,
  Name,
  pageArgs,
  sendPage,
  notFoundAs404,
  OrganizationId,
  orgParams,
  pageQuery,
  readJson,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

const KeyId = z.string().regex(/^k[A-Za-z0-9]{16}$/, { error: 'must be an API key id (k + 16 characters)' });
const keyParams = z.object({ organization_id: OrganizationId, key_id: KeyId });

export const ApiKeySchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    prefix: z.string().meta({ description: 'The first characters of the key, to recognise it.' }),
    created_by: z.string(),
    created_at: z.string().nullable(),
    rotated_at: z.string().nullable(),
    last_used_at: z.string().nullable(),
    scopes: z.array(z.enum(API_KEY_SCOPES)).meta({
      description:
        'What the key may do: read, memories, write, admin (docs/api.md, "Roles and the authorization matrix" and "API keys at the Brain").',
    }),
    team_id: z.string().nullable().meta({ description: 'The team the key acts for, if any.' }),
  })
  .meta({ title: 'ApiKey' });

export const ApiKeyListSchema = listEnvelope('api_keys', ApiKeySchema, 'ApiKeyList');
export const ApiKeyWithSecretSchema = z
  .object({
    api_key: ApiKeySchema,
    secret: z.string().meta({ description: 'The key, to send as x-api-key. Shown only in this response.' }),
  })
  .meta({ title: 'ApiKeyWithSecret' });

export const CreateApiKeySchema = z
  .object({
    name: Name,
    scopes: z.array(z.enum(API_KEY_SCOPES)).min(1).max(4).optional().meta({
      description:
        '"read" (the default), "memories" (also writes memories at the Brain), "write" and/or "admin"; each includes the ones before it.',
    }),
    team_id: z
      .string()
      .regex(/^team_[A-Za-z0-9]{1,60}$/, { error: 'must be a team id (team_...)' })
      .optional()
      .meta({ description: 'A team of the organization the key acts for.' }),
  })
  .strict()
  .meta({ title: 'CreateApiKey' });

interface ApiKeyMessage {
  keyId: string;
  organizationId: string;
  name: string;
  prefix: string;
  createdBy: string;
  createTime?: Timestamp;
  rotateTime?: Timestamp;
  lastUsedTime?: Timestamp;
  scopes: string[];
  teamId: string;
}

const apiKey = (k: ApiKeyMessage) => ({
  id: k.keyId,
  organization_id: k.organizationId,
  name: k.name,
  prefix: k.prefix,
  created_by: k.createdBy,
  created_at: iso(k.createTime),
  rotated_at: iso(k.rotateTime),
  last_used_at: iso(k.lastUsedTime),
  scopes: k.scopes as ApiKeyScope[],
  team_id: k.teamId || null,
});

function createApiKeyRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API key',
      description:
        'Creates an API key for the organization. The key (`secret`) is returned once and only its hash is stored. Requires a signed-in owner or admin.',
      tags: ['API keys'],
      params: orgParams,
      responses: {
        '201': json(ApiKeyWithSecretSchema, 'The key, with its secret.'),
        '401': errors['401'],
        '403': errors['403'],
        // The team named by team_id does not exist in the organization.
        '404': 'NotFound',
        '422': errors['422'],
      },
      handler: async (c) => {
        const caller = callerOf(c);
        const body = await readJson(c, CreateApiKeySchema, limit);
        const res = await ctx.clients.apiKeys.createApiKey({
          organizationId: c.input.params.organization_id,
          name: body.name,
          createdBy: caller.subject,
          scopes: body.scopes ?? [],
          teamId: body.team_id ?? '',
        });
        sendJson(c.res, 201, { api_key: apiKey(res.apiKey!), secret: res.secret }, { 'cache-control': 'no-store' });
      },
    }),
    body: CreateApiKeySchema,
    creates: true,
  };
}

function listApiKeysRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/api-keys',
    operationId: 'listApiKeys',
    summary: 'List API keys',
    description: "The organization's API keys, oldest first, never with their secrets.",
    tags: ['API keys'],
    params: orgParams,
    query: pageQuery,
    responses: { '200': json(ApiKeyListSchema, 'The keys.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
    handler: async (c) => {
      const res = await listing(() =>
        ctx.clients.apiKeys.listApiKeys({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
      );
      sendPage(c, 'api_keys', res.apiKeys.map(apiKey), res.nextPageToken);
    },
  });
}

function rotateApiKeyRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'POST',
    path: '/organizations/:organization_id/api-keys/:key_id/rotate',
    operationId: 'rotateApiKey',
    summary: 'Rotate an API key',
    description:
      "Replaces the key's secret; the previous one stops working at once. The new secret is returned once. Requires a signed-in owner or admin.",
    tags: ['API keys'],
    params: keyParams,
    responses: {
      '200': json(ApiKeyWithSecretSchema, 'The key, with its new secret.'),
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '422': errors['422'],
    },
    handler: async (c) => {
      const res = await notFoundAs404(() =>
        ctx.clients.apiKeys.rotateApiKey({ organizationId: c.input.params.organization_id, keyId: c.input.params.key_id }),
      );
      sendJson(c.res, 200, { api_key: apiKey(res.apiKey!), secret: res.secret }, { 'cache-control': 'no-store' });
    },
  });
}

function revokeApiKeyRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/api-keys/:key_id',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    description: 'Deletes the key; it stops working at once. Requires a signed-in owner or admin.',
    tags: ['API keys'],
    params: keyParams,
    responses: { '204': { description: 'Revoked.' }, '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
    handler: async (c) => {
      await notFoundAs404(() =>
        ctx.clients.apiKeys.revokeApiKey({ organizationId: c.input.params.organization_id, keyId: c.input.params.key_id }),
      );
      c.res.writeHead(204).end();
    },
  });
}

export function apiKeyRoutes(deps: RouteDeps): RestRoute[] {
  return [createApiKeyRoute(deps), listApiKeysRoute(deps), rotateApiKeyRoute(deps), revokeApiKeyRoute(deps)];
}
