// The REST API's gateway keys: the operator's X-Gateway-Key credentials, created, listed, rotated
// (the old secret keeps working for an overlap) and revoked by the owners and admins of the
// operator's organization (OPERATOR_ORGANIZATION_ID; `operator` in access.ts), each a call to the
// agents service's GatewayKeysService. A secret is shown once; only its hash is stored, and every
// gateway replica accepts or stops accepting it within about GATEWAY_REGISTRY_POLL_MS.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import type { GatewayKey } from '../../gen/mindgate/agents/v1/gateway_keys_pb.js';
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
  notFoundAs404,
  OrganizationId,
  orgParams,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

const KeyId = z.string().regex(/^gk[A-Za-z0-9]{16}$/, { error: 'must be a gateway key id (gk + 16 characters)' });
const keyParams = z.object({ organization_id: OrganizationId, key_id: KeyId });
const tags = ['Gateway keys'];

export const GatewayKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().meta({ description: 'The first characters of the key, to recognise it.' }),
    created_by: z.string(),
    created_at: z.string().nullable(),
    rotated_at: z.string().nullable(),
    previous_secret_expires_at: z
      .string()
      .nullable()
      .meta({ description: 'Until when the secret replaced by the last rotation still works.' }),
  })
  .meta({ title: 'GatewayKey' });

const GatewayKeyWithSecretSchema = z
  .object({
    gateway_key: GatewayKeySchema,
    secret: z.string().meta({ description: 'The key, to send as X-Gateway-Key. Shown only in this response.' }),
  })
  .meta({ title: 'GatewayKeyWithSecret' });

export const CreateGatewayKeySchema = z.object({ name: Name }).strict().meta({ title: 'CreateGatewayKey' });
export const RotateGatewayKeySchema = z
  .object({
    overlap_seconds: z
      .int()
      .min(0)
      .max(604_800)
      .optional()
      .meta({ description: 'How long the current secret keeps working beside the new one: 0 to 604800 (a week); default 3600.' }),
  })
  .strict()
  .meta({ title: 'RotateGatewayKey' });

const keyJson = (k: GatewayKey) => ({
  id: k.keyId,
  name: k.name,
  prefix: k.prefix,
  created_by: k.createdBy,
  created_at: iso(k.createTime as Timestamp | undefined),
  rotated_at: iso(k.rotateTime as Timestamp | undefined),
  previous_secret_expires_at: iso(k.previousExpireTime as Timestamp | undefined),
});
const NO_STORE = { 'cache-control': 'no-store' };
const OPERATOR_ONLY = "Only owners and admins of the operator's organization (OPERATOR_ORGANIZATION_ID), signed in.";

function createRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/gateway-keys',
      operationId: 'createGatewayKey',
      summary: 'Create a gateway key',
      description: `Issues an operator key for the gateway's X-Gateway-Key header. The key (\`secret\`) is returned once; only its hash is stored. ${OPERATOR_ONLY}`,
      tags,
      params: orgParams,
      responses: {
        '201': json(GatewayKeyWithSecretSchema, 'The key, with its secret.'),
        '401': errors['401'],
        '403': errors['403'],
        '422': errors['422'],
      },
      handler: async (c) => {
        const body = await readJson(c, CreateGatewayKeySchema, limit);
        const res = await ctx.clients.gatewayKeys.createGatewayKey({ name: body.name, createdBy: callerOf(c).subject });
        sendJson(c.res, 201, { gateway_key: keyJson(res.key!), secret: res.secret }, NO_STORE);
      },
    }),
    body: CreateGatewayKeySchema,
    creates: true,
  };
}

function listRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/gateway-keys',
    operationId: 'listGatewayKeys',
    summary: 'List gateway keys',
    description: `The operator's gateway keys, oldest first, never with their secrets (those of GATEWAY_KEYS are not listed). ${OPERATOR_ONLY}`,
    tags,
    params: orgParams,
    query: pageQuery,
    responses: {
      '200': json(listEnvelope('gateway_keys', GatewayKeySchema, 'GatewayKeyList'), 'One page of keys.'),
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const res = await listing(() => ctx.clients.gatewayKeys.listGatewayKeys(pageArgs(c.input.query)));
      sendPage(c, 'gateway_keys', res.keys.map(keyJson), res.nextPageToken);
    },
  });
}

function rotateRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/gateway-keys/:key_id/rotate',
      operationId: 'rotateGatewayKey',
      summary: 'Rotate a gateway key',
      description: `Gives the key a new secret, returned once. The current secret keeps working for \`overlap_seconds\` (default an hour), so that clients move over without an outage. The body is optional. ${OPERATOR_ONLY}`,
      tags,
      params: keyParams,
      responses: {
        '200': json(GatewayKeyWithSecretSchema, 'The key, with its new secret.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '422': errors['422'],
      },
      handler: async (c) => {
        // The body is optional: a bare POST rotates with the default overlap.
        const empty = c.req.headers['content-length'] === '0' || (!c.req.headers['content-type'] && !c.req.headers['transfer-encoding']);
        const body = empty ? {} : await readJson(c, RotateGatewayKeySchema, limit);
        const res = await notFoundAs404(() =>
          ctx.clients.gatewayKeys.rotateGatewayKey({ keyId: c.input.params.key_id, overlapSeconds: body.overlap_seconds ?? 3_600 }),
        );
        sendJson(c.res, 200, { gateway_key: keyJson(res.key!), secret: res.secret }, NO_STORE);
      },
    }),
    body: RotateGatewayKeySchema,
  };
}

function revokeRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/gateway-keys/:key_id',
    operationId: 'revokeGatewayKey',
    summary: 'Revoke a gateway key',
    description: `Deletes the key: both its secrets stop working on every replica within about GATEWAY_REGISTRY_POLL_MS. ${OPERATOR_ONLY}`,
    tags,
    params: keyParams,
    responses: { '204': { description: 'Revoked.' }, '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
    handler: async (c) => {
      await notFoundAs404(() => ctx.clients.gatewayKeys.revokeGatewayKey({ keyId: c.input.params.key_id }));
      c.res.writeHead(204).end();
    },
  });
}

export function gatewayKeyRoutes(deps: RouteDeps): RestRoute[] {
  return [createRoute(deps), listRoute(deps), rotateRoute(deps), revokeRoute(deps)];
}
