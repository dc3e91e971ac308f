// EventOutboxService over a service's outbox (outbox.ts): what a relay calls to take the events a
// service recorded and to acknowledge them once published. Every service that produces events
// registers it on its own router.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { ConnectRouter, HandlerContext } from '@connectrpc/connect';
import {
  AckEventsResponseSchema,
  ClaimEventsResponseSchema,
  EventOutboxService,
  EventSchema,
  type AckEventsRequest,
  type ClaimEventsRequest,
} from '../../../gen/mindgate/events/v1/outbox_pb.js';
import { invalid } from '../rpc/validate.ts';
import type { EventOutbox, OutboxEntry } from './outbox.ts';

function bounded(field: string, value: number, min: number, max: number, fallback: number): number {
  if (value === 0) return fallback;
  if (value < min || value > max) invalid(field, `must be from ${min} to ${max} (0 for ${fallback}), got ${value}`);
  return value;
}

export function toEvent(entry: OutboxEntry) {
  return create(EventSchema, {
    eventId: entry._id,
    organizationId: entry.organizationId,
    type: entry.type,
    time: timestampFromMs(entry.time),
    dataJson: JSON.stringify(entry.data),
    endpointIds: entry.notify?.endpointIds ?? [],
    emails: entry.notify?.emails ?? [],
  });
}

export async function claimEvents(outbox: EventOutbox, req: ClaimEventsRequest, context?: HandlerContext) {
  const maxEvents = bounded('max_events', req.maxEvents, 1, 500, 100);
  const leaseMs = bounded('lease_ms', req.leaseMs, 1_000, 600_000, 30_000);
  if (req.waitMs < 0 || req.waitMs > 10_000) invalid('wait_ms', `must be from 0 to 10000, got ${req.waitMs}`);
  const claimed = await outbox.claim({ maxEvents, leaseMs, waitMs: req.waitMs, signal: context?.signal });
  return create(ClaimEventsResponseSchema, { events: claimed.map(toEvent) });
}

export async function ackEvents(outbox: EventOutbox, req: AckEventsRequest) {
  if (req.eventIds.length > 500) invalid('event_ids', `must have at most 500 items, got ${req.eventIds.length}`);
  for (const [i, id] of req.eventIds.entries()) if (!/^evt_[a-z2-7]{26}$/.test(id)) invalid(`event_ids[${i}]`, 'is not an event id');
  return create(AckEventsResponseSchema, { removed: await outbox.ack(req.eventIds) });
}

export function outboxRoutes(router: ConnectRouter, outbox: EventOutbox): void {
  router.service(EventOutboxService, {
    claimEvents: (req, context) => claimEvents(outbox, req, context),
    ackEvents: (req) => ackEvents(outbox, req),
  });
}
