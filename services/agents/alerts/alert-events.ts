// Alert events as people handle them: list (newest first; status, severity, source and thread
// filters: a thread's filter lists the alerts linked to an investigation),
// get, acknowledge, resolve by hand (its thread is told, alert.resolved is published), and snooze
// until a time. Each change is a compare-and-set on the event's version, with If-Match's etag
// when the caller sends one.
import { create } from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AcknowledgeAlertEventResponseSchema,
  AlertStatus,
  GetAlertEventResponseSchema,
  ListAlertEventsResponseSchema,
  ResolveAlertEventResponseSchema,
  SnoozeAlertEventResponseSchema,
  type AcknowledgeAlertEventRequest,
  type GetAlertEventRequest,
  type ListAlertEventsRequest,
  type ResolveAlertEventRequest,
  type SnoozeAlertEventRequest,
} from '../../../gen/mindgate/agents/v1/alerts_pb.js';
import { putWithEvents, type NewEvent } from '../../common/events/outbox.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { alertEvent, alertSubject, toAlertEvent } from './events.ts';
import { THREAD_ID } from '../handlers/threads.ts';
import { closeInThread } from './investigations.ts';
import type { AlertEventRecord, AlertsContext } from './records.ts';

const EVENT_ID = /^alrt_[A-Za-z0-9]{1,60}$/;
/** How far ahead a snooze may reach. */
export const MAX_SNOOZE_MS = 30 * 86_400_000;

export async function ownedAlertEvent(ctx: AlertsContext, organizationId: string, id: string): Promise<AlertEventRecord> {
  if (!EVENT_ID.test(id)) invalid('alert_event_id', 'is not an alert event id');
  const found = await ctx.events.get(id);
  if (!found || found.organizationId !== organizationId) throw new ConnectError(`alert event "${id}" does not exist`, Code.NotFound);
  return found;
}

export async function listAlertEvents(ctx: AlertsContext, req: ListAlertEventsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const filter: Record<string, string | number> = { organizationId };
  if (req.status !== AlertStatus.UNSPECIFIED) {
    if (!(req.status in AlertStatus)) invalid('status', 'is not an alert status');
    filter.status = req.status;
  }
  if (req.severity !== '') filter.severity = requireText('severity', req.severity, 50);
  if (req.sourceId !== '') filter.sourceId = requireText('source_id', req.sourceId, 100);
  if (req.threadId !== '') {
    if (!THREAD_ID.test(req.threadId)) invalid('thread_id', 'is not a thread id');
    filter.threadId = req.threadId;
  }
  const scope = `alert-events:${organizationId}:${req.status}:${req.severity}:${req.sourceId}:${req.threadId}`;
  const page = await findPage(ctx.events, filter, req, { field: 'createdAt', direction: 'desc', scope });
  return create(ListAlertEventsResponseSchema, { alertEvents: page.items.map(toAlertEvent), nextPageToken: page.nextPageToken });
}

export async function getAlertEvent(ctx: AlertsContext, req: GetAlertEventRequest) {
  const found = await ownedAlertEvent(ctx, requireOrganization(req.organizationId), req.alertEventId);
  return create(GetAlertEventResponseSchema, { alertEvent: toAlertEvent(found) });
}

type Change = (current: AlertEventRecord, now: number) => { fields: Partial<AlertEventRecord>; events: NewEvent[] };

/** Applies a change to an open event under its version; retried when only the alert's repeats moved it. */
async function change(ctx: AlertsContext, req: { organizationId: string; alertEventId: string; etag: string }, apply: Change) {
  const organizationId = requireOrganization(req.organizationId);
  for (;;) {
    const current = await ownedAlertEvent(ctx, organizationId, req.alertEventId);
    if (req.etag !== '' && req.etag !== String(current.version)) {
      throw failure('the alert event changed since it was read (If-Match): read it again', Code.FailedPrecondition, REASONS.etagMismatch);
    }
    if (current.status === AlertStatus.RESOLVED)
      throw failure('the alert event is resolved', Code.FailedPrecondition, REASONS.alertResolved);
    const { fields, events } = apply(current, ctx.now());
    const next: AlertEventRecord = { ...current, ...fields, version: current.version + 1 };
    if (await putWithEvents(ctx.outbox, alertSubject(ctx.events), next, current, events, { expect: { version: current.version } }))
      return next;
  }
}

export async function acknowledgeAlertEvent(ctx: AlertsContext, req: AcknowledgeAlertEventRequest) {
  const actor = requireText('actor', req.actor, 200);
  const next = await change(ctx, req, (current, now) => ({
    fields: {
      acknowledgedBy: actor,
      acknowledgedAt: now,
      status: current.status === AlertStatus.SNOOZED ? AlertStatus.SNOOZED : AlertStatus.ACKNOWLEDGED,
    },
    events: [],
  }));
  return create(AcknowledgeAlertEventResponseSchema, { alertEvent: toAlertEvent(next) });
}

export async function resolveAlertEvent(ctx: AlertsContext, req: ResolveAlertEventRequest) {
  const actor = requireText('actor', req.actor, 200);
  const next = await change(ctx, req, (current, now) => {
    const fields = { status: AlertStatus.RESOLVED, resolvedBy: actor, endsAt: now };
    return { fields, events: [alertEvent('alert.resolved', { ...current, ...fields })] };
  });
  await closeInThread(ctx, next, `by ${actor}`);
  return create(ResolveAlertEventResponseSchema, { alertEvent: toAlertEvent(next) });
}

export async function snoozeAlertEvent(ctx: AlertsContext, req: SnoozeAlertEventRequest) {
  const actor = requireText('actor', req.actor, 200);
  if (!req.until) invalid('until', 'is required');
  const until = timestampMs(req.until);
  const now = ctx.now();
  if (until <= now || until > now + MAX_SNOOZE_MS) invalid('until', 'must be in the future, at most 30 days ahead');
  const next = await change(ctx, req, () => ({
    fields: { status: AlertStatus.SNOOZED, snoozedUntil: until, snoozedBy: actor },
    events: [],
  }));
  return create(SnoozeAlertEventResponseSchema, { alertEvent: toAlertEvent(next) });
}
