// Events in, deliveries out: PublishEvents takes the events the services' outboxes handed to the
// relay and queues one delivery per enabled endpoint subscribed to the type or named by the event
// (an alert rule's notification channels), once per event
// (idempotent by event id: a relayed retry is a duplicate). Over the organization's monthly limit
// an event is counted as dropped and nothing is queued. SendTestEvent queues a webhook.test event
// to one endpoint.
import { createHash } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import {
  PublishEventsResponseSchema,
  SendTestEventResponseSchema,
  type PublishEventsRequest,
  type SendTestEventRequest,
} from '../../../gen/mindgate/agents/v1/webhooks_pb.js';
import type { Event } from '../../../gen/mindgate/events/v1/outbox_pb.js';
import { isEventType, subscribes } from '../../common/events/catalogue.ts';
import { newEventId } from '../../common/events/outbox.ts';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import type { WebhooksContext } from './context.ts';
import { toDelivery } from './deliveries.ts';
import { ownedEndpoint } from './endpoints.ts';
import { LOG_KEPT_MS, type DeliveryRecord, type EndpointRecord, type EventRecord } from './records.ts';
import { eventBody } from './signing.ts';
import { countEvent } from './usage.ts';

/** One delivery per event and endpoint, whoever queues it. */
export function deliveryId(eventId: string, endpointId: string): string {
  return `dlv_${createHash('sha256').update(`${eventId}/${endpointId}`).digest('hex').slice(0, 24)}`;
}

function newDelivery(event: EventRecord, endpointId: string, now: number, test = false): DeliveryRecord {
  return {
    _id: deliveryId(event._id, endpointId),
    organizationId: event.organizationId,
    endpointId,
    eventId: event._id,
    eventType: event.type,
    eventTime: event.time,
    status: 'pending',
    attempts: 0,
    attemptBase: 0,
    dueAt: now,
    ...(test ? { test } : {}),
    createdAt: now,
    version: 1,
    expiresAt: now + LOG_KEPT_MS,
  };
}

function checkEvent(e: Event, i: number, limits: Record<string, bigint>): { data: unknown; limit: number } {
  if (!/^evt_[a-z2-7]{26}$/.test(e.eventId)) invalid(`events[${i}].event_id`, 'is not an event id');
  requireOrganization(e.organizationId);
  if (!isEventType(e.type)) invalid(`events[${i}].type`, `"${e.type}" is not a type of the event catalogue`);
  if (!e.time) invalid(`events[${i}].time`, 'is required');
  let data: unknown;
  try {
    data = JSON.parse(e.dataJson);
  } catch {
    invalid(`events[${i}].data_json`, 'is not JSON');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) invalid(`events[${i}].data_json`, 'must be a JSON object');
  const limit = limits[e.organizationId];
  if (limit === undefined) invalid('monthly_limits', `has no entry for ${e.organizationId}`);
  return { data, limit: Number(limit) };
}

type Outcome = 'published' | 'dropped' | 'duplicate';

/**
 * Queues one event. The event is recorded `new` first: a retry of a publish that was cut short
 * finds it `new` and finishes the work (counting it once more, the only double count there is).
 */
async function publishOne(ctx: WebhooksContext, e: Event, data: unknown, limit: number, targets: EndpointRecord[]): Promise<Outcome> {
  const now = ctx.now();
  const time = timestampMs(e.time!);
  const record: EventRecord = {
    _id: e.eventId,
    organizationId: e.organizationId,
    type: e.type,
    time,
    body: eventBody(e.type, time, data),
    state: 'new',
    expiresAt: now + LOG_KEPT_MS,
  };
  if (!(await ctx.events.put(record, { expect: null })) && (await ctx.events.get(e.eventId))?.state !== 'new') return 'duplicate';
  if (!(await countEvent(ctx, e.organizationId, limit))) {
    await ctx.events.put({ ...record, state: 'dropped' });
    ctx.logger.warn(
      { organizationId: e.organizationId, event: e.eventId, type: e.type, limit },
      "webhook event dropped: the plan's monthly limit is reached",
    );
    return 'dropped';
  }
  for (const endpoint of targets) await ctx.deliveries.put(newDelivery(record, endpoint._id, now), { expect: null });
  await ctx.events.put({ ...record, state: 'published' });
  return 'published';
}

export async function publishEvents(ctx: WebhooksContext, req: PublishEventsRequest) {
  if (req.events.length > 500) invalid('events', `must have at most 500 items, got ${req.events.length}`);
  const checked = req.events.map((e, i) => checkEvent(e, i, req.monthlyLimits));
  const endpoints = new Map<string, EndpointRecord[]>();
  const counts = { published: 0, unmatched: 0, dropped: 0, duplicates: 0 };
  for (const [i, e] of req.events.entries()) {
    let enabled = endpoints.get(e.organizationId);
    if (!enabled)
      endpoints.set(e.organizationId, (enabled = await ctx.endpoints.find({ organizationId: e.organizationId, enabled: true })));
    // Subscribers, and the endpoints the event names (an alert rule's channels), each once.
    const targets = enabled.filter((ep) => subscribes(ep.eventTypes, e.type) || e.endpointIds.includes(ep._id));
    if (targets.length === 0) {
      counts.unmatched++;
      continue;
    }
    const outcome = await publishOne(ctx, e, checked[i].data, checked[i].limit, targets);
    counts[outcome === 'duplicate' ? 'duplicates' : outcome]++;
  }
  if (counts.published > 0) ctx.wake();
  return create(PublishEventsResponseSchema, counts);
}

export async function sendTestEvent(ctx: WebhooksContext, req: SendTestEventRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const endpoint = await ownedEndpoint(ctx, organizationId, req.endpointId);
  const now = ctx.now();
  const data = { endpoint_id: endpoint._id, message: 'A test event from Mindgate: this endpoint receives signed webhooks.' };
  const event: EventRecord = {
    _id: newEventId(now),
    organizationId,
    type: 'webhook.test',
    time: now,
    body: eventBody('webhook.test', now, data),
    state: 'published',
    expiresAt: now + LOG_KEPT_MS,
  };
  await ctx.events.put(event, { expect: null });
  const delivery = newDelivery(event, endpoint._id, now, true);
  await ctx.deliveries.put(delivery, { expect: null });
  ctx.wake();
  return create(SendTestEventResponseSchema, { delivery: toDelivery(delivery) });
}
