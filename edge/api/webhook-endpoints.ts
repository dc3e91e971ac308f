// The REST API's webhook endpoints of an organization: create (the signing secret shown once),
// list, read, change (If-Match), delete, rotate the secret with an overlap, and send a test event.
// Each a call to the agents service's WebhooksService (services/agents/webhooks/).
import { create } from '@bufbuild/protobuf';
import { EventTypeListSchema, type WebhookEndpoint } from '../../gen/mindgate/agents/v1/webhooks_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf } from './access.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import {
  errors,
  json,
  listEnvelope,
  listing,
  notFoundAs404,
  orgParams,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';
import {
  bodyFieldErrors,
  CreateWebhookEndpointSchema,
  deliveryJson,
  endpointJson,
  endpointParams,
  RotateSecretSchema,
  UpdateWebhookEndpointSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
} from './webhook-json.ts';

const tags = ['Webhooks'];
const BODY_FIELDS = ['url', 'event_types', 'description'];
const withEtag = (description: string) => ({ ...json(WebhookEndpointSchema, description), headers: ETAG_HEADER });
const etagOf = (e: WebhookEndpoint | undefined) => ({ etag: quoteEtag(e!.etag) });
const noStore = { 'cache-control': 'no-store' };

function createEndpointRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/webhook-endpoints',
      operationId: 'createWebhookEndpoint',
      summary: 'Add a webhook endpoint',
      description:
        "Events of the types named are sent to the URL, signed as Standard Webhooks specifies with the endpoint's secret (`secret`, returned once). At most 50 endpoints per organization.",
      tags,
      params: orgParams,
      responses: {
        '201': { ...json(WebhookEndpointWithSecretSchema, 'The endpoint, with its signing secret.'), headers: ETAG_HEADER },
        '401': errors['401'],
        '403': errors['403'],
        '422': errors['422'],
      },
      handler: async (c) => {
        const body = await readJson(c, CreateWebhookEndpointSchema, limit);
        const res = await bodyFieldErrors(
          () =>
            ctx.clients.webhooks.createWebhookEndpoint({
              organizationId: c.input.params.organization_id,
              url: body.url,
              eventTypes: body.event_types,
              description: body.description ?? '',
              disabled: body.enabled === false,
              createdBy: callerOf(c).subject,
            }),
          BODY_FIELDS,
        );
        sendJson(c.res, 201, { endpoint: endpointJson(res.endpoint!), secret: res.secret }, { ...noStore, ...etagOf(res.endpoint) });
      },
    }),
    body: CreateWebhookEndpointSchema,
    creates: true,
  };
}

function listEndpointsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/webhook-endpoints',
    operationId: 'listWebhookEndpoints',
    summary: 'List webhook endpoints',
    description: "The organization's endpoints, oldest first, never with their secrets.",
    tags,
    params: orgParams,
    query: pageQuery,
    responses: {
      '200': json(listEnvelope('endpoints', WebhookEndpointSchema, 'WebhookEndpointList'), 'One page of endpoints.'),
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const res = await listing(() =>
        ctx.clients.webhooks.listWebhookEndpoints({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
      );
      sendPage(c, 'endpoints', res.endpoints.map(endpointJson), res.nextPageToken);
    },
  });
}

function getEndpointRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/webhook-endpoints/:endpoint_id',
    operationId: 'getWebhookEndpoint',
    summary: 'Get a webhook endpoint',
    description: 'The endpoint, with its failure streak and last success.',
    tags,
    params: endpointParams,
    responses: { '200': withEtag('The endpoint.'), '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
    handler: async (c) => {
      const { organization_id: organizationId, endpoint_id: endpointId } = c.input.params;
      const { endpoint } = await notFoundAs404(() => ctx.clients.webhooks.getWebhookEndpoint({ organizationId, endpointId }));
      sendJson(c.res, 200, endpointJson(endpoint!), etagOf(endpoint));
    },
  });
}

function updateEndpointRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/organizations/:organization_id/webhook-endpoints/:endpoint_id',
      operationId: 'updateWebhookEndpoint',
      summary: 'Change a webhook endpoint',
      description:
        'Changes the URL, the event types, the description, or enables or disables it. Enabling an endpoint disabled for failing clears its failure streak. With If-Match, only if the endpoint is still at that ETag (412 otherwise).',
      tags,
      params: endpointParams,
      responses: {
        '200': withEtag('The endpoint, as stored.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '409': 'Conflict',
        '412': 'PreconditionFailed',
        '422': errors['422'],
      },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, UpdateWebhookEndpointSchema, limit);
        const { organization_id: organizationId, endpoint_id: endpointId } = c.input.params;
        const { endpoint } = await notFoundAs404(() =>
          bodyFieldErrors(
            () =>
              ctx.clients.webhooks.updateWebhookEndpoint({
                organizationId,
                endpointId,
                url: body.url,
                eventTypes: body.event_types ? create(EventTypeListSchema, { types: body.event_types }) : undefined,
                description: body.description,
                enabled: body.enabled,
                etag,
              }),
            BODY_FIELDS,
          ),
        );
        sendJson(c.res, 200, endpointJson(endpoint!), etagOf(endpoint));
      },
    }),
    body: UpdateWebhookEndpointSchema,
  };
}

function deleteEndpointRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/webhook-endpoints/:endpoint_id',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint',
    description: 'Nothing more is sent to it; its pending deliveries end as failed. The delivery log keeps what was sent.',
    tags,
    params: endpointParams,
    responses: { '204': { description: 'Deleted.' }, '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
    handler: async (c) => {
      const { organization_id: organizationId, endpoint_id: endpointId } = c.input.params;
      await notFoundAs404(() => ctx.clients.webhooks.deleteWebhookEndpoint({ organizationId, endpointId }));
      c.res.writeHead(204).end();
    },
  });
}

function rotateSecretRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/webhook-endpoints/:endpoint_id/rotate-secret',
      operationId: 'rotateWebhookEndpointSecret',
      summary: "Rotate a webhook endpoint's secret",
      description:
        'A new signing secret, returned once. The previous one keeps signing too for `overlap_seconds` (deliveries then carry two `v1,` signatures), so the receiver can switch without missing a message. Requires a signed-in owner or admin.',
      tags,
      params: endpointParams,
      responses: {
        '200': json(WebhookEndpointWithSecretSchema, 'The endpoint, with its new secret.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '422': errors['422'],
      },
      handler: async (c) => {
        const body = await readJson(c, RotateSecretSchema, limit);
        const { organization_id: organizationId, endpoint_id: endpointId } = c.input.params;
        const res = await notFoundAs404(() =>
          ctx.clients.webhooks.rotateWebhookEndpointSecret({ organizationId, endpointId, overlapSeconds: body.overlap_seconds }),
        );
        sendJson(c.res, 200, { endpoint: endpointJson(res.endpoint!), secret: res.secret }, { ...noStore, ...etagOf(res.endpoint) });
      },
    }),
    body: RotateSecretSchema,
  };
}

function testEventRoute({ ctx }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/webhook-endpoints/:endpoint_id/test',
      operationId: 'sendWebhookTestEvent',
      summary: 'Send a test event',
      description:
        'Queues a `webhook.test` event to this endpoint only (enabled or not), not counted against the plan. Follow its delivery with `GET …/webhook-deliveries/{delivery_id}`.',
      tags,
      params: endpointParams,
      responses: {
        '202': json(WebhookDeliverySchema, 'The queued delivery.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '422': errors['422'],
      },
      handler: async (c) => {
        const { organization_id: organizationId, endpoint_id: endpointId } = c.input.params;
        const { delivery } = await notFoundAs404(() => ctx.clients.webhooks.sendTestEvent({ organizationId, endpointId }));
        sendJson(c.res, 202, deliveryJson(delivery!));
      },
    }),
    creates: true,
  };
}

export function webhookEndpointRoutes(deps: RouteDeps): RestRoute[] {
  return [
    createEndpointRoute(deps),
    listEndpointsRoute(deps),
    getEndpointRoute(deps),
    updateEndpointRoute(deps),
    deleteEndpointRoute(deps),
    rotateSecretRoute(deps),
    testEventRoute(deps),
  ];
}
