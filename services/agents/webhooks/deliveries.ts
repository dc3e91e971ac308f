// The delivery log: deliveries, newest first, filtered by endpoint, event, status and time; one
// delivery with the payload and every attempt; and redelivery, of one delivery or of an endpoint's
// failed deliveries over a time range. A redelivered delivery keeps its webhook-id and gets a new
// round of attempts.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs, timestampMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  DeliveryAttemptSchema,
  DeliveryStatus,
  GetDeliveryResponseSchema,
  ListDeliveriesResponseSchema,
  RedeliverDeliveryResponseSchema,
  RedeliverEndpointResponseSchema,
  WebhookDeliverySchema,
  type GetDeliveryRequest,
  type ListDeliveriesRequest,
  type RedeliverDeliveryRequest,
  type RedeliverEndpointRequest,
} from '../../../gen/mindgate/agents/v1/webhooks_pb.js';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import type { Filter } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import type { WebhooksContext } from './context.ts';
import { ENDPOINT_ID, ownedEndpoint } from './endpoints.ts';
import { LOG_KEPT_MS, type AttemptRecord, type DeliveryRecord } from './records.ts';

const DELIVERY_ID = /^dlv_[0-9a-f]{24}$/;
const MAX_REQUEUED = 1_000;

const STATUS: Record<DeliveryRecord['status'], DeliveryStatus> = {
  pending: DeliveryStatus.PENDING,
  succeeded: DeliveryStatus.SUCCEEDED,
  failed: DeliveryStatus.FAILED,
};
const STATUS_NAME = new Map(Object.entries(STATUS).map(([name, value]) => [value, name as DeliveryRecord['status']]));

const ms = (t: number | undefined) => (t === undefined ? undefined : timestampFromMs(t));

export function toDelivery(r: DeliveryRecord) {
  return create(WebhookDeliverySchema, {
    deliveryId: r._id,
    organizationId: r.organizationId,
    endpointId: r.endpointId,
    eventId: r.eventId,
    eventType: r.eventType,
    eventTime: ms(r.eventTime),
    status: STATUS[r.status],
    attempts: r.attempts,
    nextAttemptTime: ms(r.status === 'pending' ? r.dueAt : undefined),
    lastStatusCode: r.lastStatusCode ?? 0,
    lastError: r.lastError ?? '',
    createTime: ms(r.createdAt),
    completeTime: ms(r.completedAt),
  });
}

function toAttempt(r: AttemptRecord) {
  return create(DeliveryAttemptSchema, {
    number: r.number,
    startTime: timestampFromMs(r.startedAt),
    url: r.url,
    requestHeaders: r.requestHeaders,
    responseStatus: r.responseStatus,
    responseBody: r.responseBody,
    latencyMs: r.latencyMs,
    error: r.error,
  });
}

async function ownedDelivery(ctx: WebhooksContext, organizationId: string, deliveryId: string): Promise<DeliveryRecord> {
  if (!DELIVERY_ID.test(deliveryId)) invalid('delivery_id', 'is not a delivery id (dlv_...)');
  const record = await ctx.deliveries.get(deliveryId);
  if (!record || record.organizationId !== organizationId) throw new ConnectError(`delivery "${deliveryId}" does not exist`, Code.NotFound);
  return record;
}

export async function listDeliveries(ctx: WebhooksContext, req: ListDeliveriesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const filter: Filter = { organizationId };
  if (req.endpointId) {
    if (!ENDPOINT_ID.test(req.endpointId)) invalid('endpoint_id', 'is not a webhook endpoint id (whe_...)');
    filter.endpointId = req.endpointId;
  }
  if (req.eventId) {
    if (!/^evt_[a-z2-7]{26}$/.test(req.eventId)) invalid('event_id', 'is not an event id (evt_...)');
    filter.eventId = req.eventId;
  }
  if (req.status !== DeliveryStatus.UNSPECIFIED) {
    const status = STATUS_NAME.get(req.status) ?? invalid('status', 'is not a delivery status');
    filter.status = status;
  }
  const range = { gte: req.since ? timestampMs(req.since) : undefined, lt: req.until ? timestampMs(req.until) : undefined };
  const page = await findPage(ctx.deliveries, filter, req, {
    field: 'createdAt',
    direction: 'desc',
    range,
    scope: `webhook-deliveries:${organizationId}:${req.endpointId}:${req.eventId}:${req.status}:${range.gte}:${range.lt}`,
  });
  return create(ListDeliveriesResponseSchema, { deliveries: page.items.map(toDelivery), nextPageToken: page.nextPageToken });
}

export async function getDelivery(ctx: WebhooksContext, req: GetDeliveryRequest) {
  const delivery = await ownedDelivery(ctx, requireOrganization(req.organizationId), req.deliveryId);
  const [event, attempts] = await Promise.all([
    ctx.events.get(delivery.eventId),
    ctx.attempts.find({ deliveryId: delivery._id }, { sort: { field: 'number', direction: 'asc' }, limit: 500 }),
  ]);
  return create(GetDeliveryResponseSchema, {
    delivery: toDelivery(delivery),
    payload: event?.body ?? '',
    attempts: attempts.map(toAttempt),
  });
}

/** Pending again, due now, with a new round of attempts; false when it changed meanwhile. */
async function requeue(ctx: WebhooksContext, d: DeliveryRecord): Promise<DeliveryRecord | undefined> {
  const now = ctx.now();
  const next: DeliveryRecord = {
    ...d,
    status: 'pending',
    dueAt: now,
    attemptBase: d.attempts,
    version: d.version + 1,
    expiresAt: now + LOG_KEPT_MS,
  };
  delete next.leaseOwner;
  delete next.completedAt;
  if (!(await ctx.deliveries.put(next, { expect: { version: d.version } }))) return undefined;
  // The body must outlive the delivery it is sent by.
  const event = await ctx.events.get(d.eventId);
  if (event) await ctx.events.put({ ...event, expiresAt: Math.max(event.expiresAt ?? 0, now + LOG_KEPT_MS) });
  return next;
}

function requireEnabled(enabled: boolean): void {
  if (!enabled) throw new ConnectError('the endpoint is disabled: enable it first, then redeliver', Code.FailedPrecondition);
}

export async function redeliverDelivery(ctx: WebhooksContext, req: RedeliverDeliveryRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const delivery = await ownedDelivery(ctx, organizationId, req.deliveryId);
  const endpoint = await ownedEndpoint(ctx, organizationId, delivery.endpointId);
  if (!delivery.test) requireEnabled(endpoint.enabled);
  const requeued = await requeue(ctx, delivery);
  if (!requeued) throw new ConnectError('the delivery changed concurrently; try again', Code.Aborted);
  ctx.wake();
  return create(RedeliverDeliveryResponseSchema, { delivery: toDelivery(requeued) });
}

export async function redeliverEndpoint(ctx: WebhooksContext, req: RedeliverEndpointRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const endpoint = await ownedEndpoint(ctx, organizationId, req.endpointId);
  requireEnabled(endpoint.enabled);
  if (!req.since) invalid('since', 'is required');
  const since = timestampMs(req.since);
  const until = req.until ? timestampMs(req.until) : ctx.now();
  if (since >= until) invalid('since', 'must be earlier than until');
  const failed = await ctx.deliveries.find(
    { endpointId: endpoint._id, status: 'failed', eventTime: { $gte: since, $lt: until } },
    { sort: { field: 'eventTime', direction: 'asc' }, limit: MAX_REQUEUED },
  );
  let requeued = 0;
  for (const d of failed) if (await requeue(ctx, d)) requeued++;
  if (requeued > 0) ctx.wake();
  return create(RedeliverEndpointResponseSchema, { requeued });
}
