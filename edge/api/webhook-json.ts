// The webhooks' resources as the REST API shows them (zod schemas for the OpenAPI document and
// validation) and the conversions from the WebhooksService's messages.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import * as z from 'zod';
import {
  DeliveryStatus,
  type DeliveryAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '../../gen/mindgate/agents/v1/webhooks_pb.js';
import { RequestValidationError } from '../http/validation.ts';
import { iso, OrganizationId } from './rest-route.ts';

export const EndpointId = z
  .string()
  .regex(/^whe_[A-Za-z0-9]{20}$/, { error: 'must be a webhook endpoint id (whe_...)' })
  .meta({ description: 'Webhook endpoint id.', example: 'whe_4kT8pQ2wZr9xLm3N7bVc' });
export const DeliveryId = z
  .string()
  .regex(/^dlv_[0-9a-f]{24}$/, { error: 'must be a delivery id (dlv_...)' })
  .meta({ description: 'Delivery id: one per event and endpoint.', example: 'dlv_9f2c4e1a7b3d5f6081a2c3d4' });
export const endpointParams = z.object({ organization_id: OrganizationId, endpoint_id: EndpointId });
export const deliveryParams = z.object({ organization_id: OrganizationId, delivery_id: DeliveryId });

const Time = z.string().nullable();
const EventTypes = z
  .array(z.string().max(100, { error: 'must be at most 100 characters' }))
  .min(1, { error: 'must name at least one event type (or "*")' })
  .max(100, { error: 'must have at most 100 items' })
  .meta({
    description: 'Types of the catalogue (`GET …/webhook-event-types`), `<noun>.*` for all of a noun, or `*` for every type.',
    example: ['memory.*', 'contradiction.flagged', 'member.added'],
  });
const Url = z.string().max(2_000, { error: 'must be at most 2000 characters' }).meta({
  description:
    'An http(s) URL; it must not resolve to a loopback, private, link-local or metadata address unless the operator allows them.',
  example: 'https://93.184.215.14/mindgate',
});
const Description = z
  .string()
  .max(500, { error: 'must be at most 500 characters' })
  .meta({ description: 'What the endpoint is for.', example: 'Sync memories to the search index' });

export const WebhookEndpointSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    url: z.string(),
    event_types: z.array(z.string()),
    description: z.string(),
    enabled: z.boolean(),
    disabled_reason: z
      .enum(['failing'])
      .nullable()
      .meta({ description: '"failing": disabled automatically after failing for a sustained time.' }),
    secret_prefix: z.string().meta({ description: 'The first characters of the current signing secret.' }),
    previous_secret_expires_at: Time.meta({ description: 'Until when the secret before the last rotation still signs too.' }),
    created_by: z.string(),
    created_at: Time,
    updated_at: Time,
    failing_since: Time.meta({ description: 'Since when every attempt has failed; null while the last one succeeded.' }),
    consecutive_failures: z.int(),
    last_success_at: Time,
  })
  .meta({ title: 'WebhookEndpoint' });

export const WebhookEndpointWithSecretSchema = z
  .object({
    endpoint: WebhookEndpointSchema,
    secret: z.string().meta({
      description: 'The signing secret (`whsec_…`). Shown only in this response.',
      example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    }),
  })
  .meta({ title: 'WebhookEndpointWithSecret' });

export const CreateWebhookEndpointSchema = z
  .object({ url: Url, event_types: EventTypes, description: Description.optional(), enabled: z.boolean().optional() })
  .strict()
  .meta({ title: 'CreateWebhookEndpoint' });

export const UpdateWebhookEndpointSchema = z
  .object({ url: Url.optional(), event_types: EventTypes.optional(), description: Description.optional(), enabled: z.boolean().optional() })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), { error: 'give at least one of url, event_types, description, enabled' })
  .meta({ title: 'UpdateWebhookEndpoint', minProperties: 1 });

export const RotateSecretSchema = z
  .object({
    overlap_seconds: z
      .int({ error: 'must be an integer' })
      .min(0, { error: 'must be from 0 to 604800' })
      .max(604_800, { error: 'must be from 0 to 604800' })
      .optional()
      .meta({ description: "How long the previous secret keeps signing too (default: the operator's, 24 hours unless set)." }),
  })
  .strict()
  .meta({ title: 'RotateWebhookSecret' });

const at = (t: Timestamp | undefined) => iso(t);

export function endpointJson(e: WebhookEndpoint): z.infer<typeof WebhookEndpointSchema> {
  return {
    id: e.endpointId,
    organization_id: e.organizationId,
    url: e.url,
    event_types: e.eventTypes,
    description: e.description,
    enabled: e.enabled,
    disabled_reason: e.disabledReason === 'failing' ? 'failing' : null,
    secret_prefix: e.secretPrefix,
    previous_secret_expires_at: at(e.previousSecretExpireTime),
    created_by: e.createdBy,
    created_at: at(e.createTime),
    updated_at: at(e.updateTime),
    failing_since: at(e.failingSince),
    consecutive_failures: e.consecutiveFailures,
    last_success_at: at(e.lastSuccessTime),
  };
}

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export const STATUS_ENUM: Record<(typeof DELIVERY_STATUSES)[number], DeliveryStatus> = {
  pending: DeliveryStatus.PENDING,
  succeeded: DeliveryStatus.SUCCEEDED,
  failed: DeliveryStatus.FAILED,
};

export const WebhookDeliverySchema = z
  .object({
    id: z.string(),
    endpoint_id: z.string(),
    event_id: z.string().meta({ description: 'The `webhook-id` of every attempt.', example: 'evt_ayf3kqmz2vx7wbn5hd4tjr6sce' }),

    event_type: z.string().meta({ example: 'memory.created' }),
    event_time: Time,
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.int(),
    next_attempt_at: Time,
    last_status_code: z.int().nullable(),
    last_error: z.string().nullable(),
    created_at: Time,
    completed_at: Time,
  })
  .meta({ title: 'WebhookDelivery' });

export const DeliveryAttemptSchema = z
  .object({
    number: z.int(),
    started_at: Time,
    url: z.string(),
    request_headers: z.record(z.string(), z.string()),
    response_status: z.int().nullable().meta({ description: 'null when no answer came.' }),
    response_body: z.string().meta({ description: 'The first 1,024 bytes of the answer.' }),
    latency_ms: z.int(),
    error: z.string().nullable(),
  })
  .meta({ title: 'WebhookDeliveryAttempt' });

export const DeliveryDetailSchema = z
  .object({
    delivery: WebhookDeliverySchema,
    payload: z.string().meta({ description: 'The request body, exactly as signed.' }),
    attempts: z.array(DeliveryAttemptSchema),
  })
  .meta({ title: 'WebhookDeliveryDetail' });

const STATUS_NAMES: Record<number, (typeof DELIVERY_STATUSES)[number]> = {
  [DeliveryStatus.PENDING]: 'pending',
  [DeliveryStatus.SUCCEEDED]: 'succeeded',
  [DeliveryStatus.FAILED]: 'failed',
};

export function deliveryJson(d: WebhookDelivery): z.infer<typeof WebhookDeliverySchema> {
  return {
    id: d.deliveryId,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    event_type: d.eventType,
    event_time: at(d.eventTime),
    status: STATUS_NAMES[d.status] ?? 'pending',
    attempts: d.attempts,
    next_attempt_at: at(d.nextAttemptTime),
    last_status_code: d.lastStatusCode || null,
    last_error: d.lastError || null,
    created_at: at(d.createTime),
    completed_at: at(d.completeTime),
  };
}

export function attemptJson(a: DeliveryAttempt): z.infer<typeof DeliveryAttemptSchema> {
  return {
    number: a.number,
    started_at: at(a.startTime),
    url: a.url,
    request_headers: a.requestHeaders,
    response_status: a.responseStatus || null,
    response_body: a.responseBody,
    latency_ms: a.latencyMs,
    error: a.error || null,
  };
}

/**
 * Runs a call whose INVALID_ARGUMENT names a field of the request body ("url: …", "event_types[2]:
 * …"): answered as a 422 on that field, like the body's own validation.
 */
export async function bodyFieldErrors<T>(work: () => Promise<T>, fields: string[]): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const match =
      err instanceof ConnectError && err.code === Code.InvalidArgument ? /^([a-z_]+)(?:\[(\d+)\])?: (.*)$/s.exec(err.rawMessage) : null;
    if (!match || !fields.includes(match[1])) throw err;
    const loc = ['body', match[1], ...(match[2] === undefined ? [] : [Number(match[2])])];
    throw new RequestValidationError([{ type: 'value_error', loc, msg: match[3] }]);
  }
}
