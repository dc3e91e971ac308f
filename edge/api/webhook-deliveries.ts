// The REST API's delivery log and what goes with it: deliveries (filtered, newest first), one
// delivery with its payload and every attempt, redelivery of one delivery or of an endpoint's
// failed deliveries over a time range, the event catalogue with the JSON Schema of each type's
// data, and this month's events against the plan (published, dropped over the limit).
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { RequestValidationError } from '../http/validation.ts';
import {
  errors,
  iso,
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
  attemptJson,
  DELIVERY_STATUSES,
  DeliveryDetailSchema,
  deliveryJson,
  deliveryParams,
  EndpointId,
  endpointParams,
  STATUS_ENUM,
  WebhookDeliverySchema,
} from './webhook-json.ts';

const tags = ['Webhooks'];
const Rfc3339 = z.iso.datetime({ offset: true, error: 'must be an RFC 3339 time, such as 2026-05-01T00:00:00Z' });
const ms = (value: string | undefined) => (value === undefined ? undefined : timestampFromMs(Date.parse(value)));

const DeliveriesQuery = pageQuery.extend({
  endpoint_id: EndpointId.optional().meta({ description: "Only this endpoint's deliveries." }),
  event_id: z
    .string()
    .regex(/^evt_[a-z2-7]{26}$/, { error: 'must be an event id (evt_...)' })
    .optional()
    .meta({ description: "Only this event's deliveries (its webhook-id)." }),
  status: z.enum(DELIVERY_STATUSES).optional(),
  since: Rfc3339.optional().meta({ description: 'Only deliveries created at or after this time.' }),
  until: Rfc3339.optional().meta({ description: 'Only deliveries created before this time.' }),
});

function listDeliveriesRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/webhook-deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'List webhook deliveries',
    description: 'The delivery log, newest first: one delivery per event and endpoint, with its status and attempts. Kept 30 days.',
    tags,
    params: orgParams,
    query: DeliveriesQuery,
    responses: {
      '200': json(listEnvelope('deliveries', WebhookDeliverySchema, 'WebhookDeliveryList'), 'One page of deliveries.'),
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const q = c.input.query;
      const res = await listing(() =>
        ctx.clients.webhooks.listDeliveries({
          organizationId: c.input.params.organization_id,
          endpointId: q.endpoint_id ?? '',
          eventId: q.event_id ?? '',
          status: q.status ? STATUS_ENUM[q.status] : undefined,
          since: ms(q.since),
          until: ms(q.until),
          ...pageArgs(q),
        }),
      );
      sendPage(c, 'deliveries', res.deliveries.map(deliveryJson), res.nextPageToken);
    },
  });
}

function getDeliveryRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/webhook-deliveries/:delivery_id',
    operationId: 'getWebhookDelivery',
    summary: 'Get a webhook delivery',
    description:
      'The delivery, the request body as signed, and every attempt: request headers, response status, the start of the response, latency, error.',
    tags,
    params: deliveryParams,
    responses: {
      '200': json(DeliveryDetailSchema, 'The delivery.'),
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '422': errors['422'],
    },
    handler: async (c) => {
      const { organization_id: organizationId, delivery_id: deliveryId } = c.input.params;
      const res = await notFoundAs404(() => ctx.clients.webhooks.getDelivery({ organizationId, deliveryId }));
      sendJson(c.res, 200, { delivery: deliveryJson(res.delivery!), payload: res.payload, attempts: res.attempts.map(attemptJson) });
    },
  });
}

function redeliverRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'POST',
    path: '/organizations/:organization_id/webhook-deliveries/:delivery_id/redeliver',
    operationId: 'redeliverWebhookDelivery',
    summary: 'Redeliver a webhook delivery',
    description: 'Sends the event again now, with the same webhook-id, and a new round of retries. 412 while the endpoint is disabled.',
    tags,
    params: deliveryParams,
    responses: {
      '202': json(WebhookDeliverySchema, 'The delivery, pending again.'),
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '412': 'PreconditionFailed',
      '422': errors['422'],
    },
    handler: async (c) => {
      const { organization_id: organizationId, delivery_id: deliveryId } = c.input.params;
      const { delivery } = await notFoundAs404(() => ctx.clients.webhooks.redeliverDelivery({ organizationId, deliveryId }));
      sendJson(c.res, 202, deliveryJson(delivery!));
    },
  });
}

const RedeliverRangeSchema = z
  .object({
    since: Rfc3339.meta({ description: 'Events that happened at or after this time…' }),
    until: Rfc3339.optional().meta({ description: '…and before this one (default: now).' }),
  })
  .strict()
  .refine((b) => b.until === undefined || Date.parse(b.since) < Date.parse(b.until), {
    error: 'since must be earlier than until',
    path: ['since'],
  })
  .meta({ title: 'RedeliverWebhookRange' });

function redeliverRangeRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/webhook-endpoints/:endpoint_id/redeliver',
      operationId: 'redeliverWebhookEndpoint',
      summary: "Redeliver an endpoint's failed deliveries",
      description:
        'Every failed delivery to the endpoint whose event happened in [since, until) is sent again (at most 1,000 per call). 412 while the endpoint is disabled.',
      tags,
      params: endpointParams,
      responses: {
        '202': json(z.object({ requeued: z.int() }).meta({ title: 'Requeued' }), 'How many deliveries were queued again.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '412': 'PreconditionFailed',
        '422': errors['422'],
      },
      handler: async (c) => {
        const body = await readJson(c, RedeliverRangeSchema, limit);
        const { organization_id: organizationId, endpoint_id: endpointId } = c.input.params;
        const res = await notFoundAs404(() =>
          ctx.clients.webhooks.redeliverEndpoint({ organizationId, endpointId, since: ms(body.since), until: ms(body.until) }),
        );
        sendJson(c.res, 202, { requeued: res.requeued });
      },
    }),
    body: RedeliverRangeSchema,
  };
}

const EventTypeSchema = z
  .object({
    type: z.string(),
    description: z.string(),
    schema: z.record(z.string(), z.unknown()).meta({ description: "The JSON Schema (draft 2020-12) of the event's `data`." }),
  })
  .meta({ title: 'WebhookEventType' });

/** Catalogue pages: the token is the last type of the previous page, bound to this listing. */
function pageOf<T extends { type: string }>(items: T[], size: number, token: string): { page: T[]; next: string } {
  let start = 0;
  if (token !== '') {
    let after: unknown;
    try {
      after = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    } catch {}
    const last = (after as { s?: string; t?: string } | undefined)?.s === 'event-types' ? (after as { t?: string }).t : undefined;
    if (typeof last !== 'string') {
      throw new RequestValidationError([
        { type: 'value_error', loc: ['query', 'page_token'], msg: 'is not a token of this listing; start again without it' },
      ]);
    }
    start = items.findIndex((i) => i.type > last);
    if (start < 0) start = items.length;
  }
  const page = items.slice(start, start + size);
  const more = start + size < items.length;
  return { page, next: more ? Buffer.from(JSON.stringify({ s: 'event-types', t: page[page.length - 1].type })).toString('base64url') : '' };
}

function eventTypesRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/webhook-event-types',
    operationId: 'listWebhookEventTypes',
    summary: 'List the webhook event types',
    description:
      'The event catalogue, sorted by type: what each type means and the JSON Schema of its `data`. Every body is `{type, timestamp, data}`.',
    tags,
    params: orgParams,
    query: pageQuery,
    responses: {
      '200': json(listEnvelope('event_types', EventTypeSchema, 'WebhookEventTypeList'), 'One page of the catalogue.'),
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const { eventTypes } = await ctx.clients.webhooks.listEventTypes({});
      const all = eventTypes.map((t) => ({
        type: t.type,
        description: t.description,
        schema: JSON.parse(t.schemaJson) as Record<string, unknown>,
      }));
      const { page, next } = pageOf(all, c.input.query.page_size, c.input.query.page_token);
      sendPage(c, 'event_types', page, next);
    },
  });
}

const WebhookUsageSchema = z
  .object({
    period: z.object({ start: z.string(), end: z.string() }).meta({ description: 'This calendar month (UTC).' }),
    limit: z.int().meta({ description: "Events the plan allows this month (billing's webhook_events_per_month)." }),
    published: z.int().meta({ description: 'Events sent (or being sent) to at least one endpoint. Test events are not counted.' }),
    dropped: z.int().meta({ description: 'Events not sent because the limit was reached.' }),
    dropped_reason: z.string().nullable().meta({ description: 'Why events were dropped, when some were.' }),
  })
  .meta({ title: 'WebhookUsage' });

function usageRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/webhook-usage',
    operationId: 'getWebhookUsage',
    summary: 'Webhook events this month',
    description: "Events published and dropped this month against the plan's limit. Over the limit, events are counted here and not sent.",
    tags,
    params: orgParams,
    responses: { '200': json(WebhookUsageSchema, 'The usage.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
    handler: async (c) => {
      const organizationId = c.input.params.organization_id;
      const [usage, billing] = await Promise.all([
        ctx.clients.webhooks.getWebhookUsage({ organizationId }),
        ctx.clients.billing.getEntitlements({ organizationId }),
      ]);
      const limit = Number(billing.entitlements?.webhookEventsPerMonth ?? 0n);
      const dropped = Number(usage.dropped);
      sendJson(c.res, 200, {
        period: { start: iso(usage.periodStart)!, end: iso(usage.periodEnd)! },
        limit,
        published: Number(usage.published),
        dropped,
        dropped_reason: dropped > 0 ? `the plan's limit of ${limit} webhook events a month was reached` : null,
      });
    },
  });
}

export function webhookDeliveryRoutes(deps: RouteDeps): RestRoute[] {
  return [
    listDeliveriesRoute(deps),
    getDeliveryRoute(deps),
    redeliverRoute(deps),
    redeliverRangeRoute(deps),
    eventTypesRoute(deps),
    usageRoute(deps),
  ];
}
