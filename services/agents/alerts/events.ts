// Alert events as the contract shows them, and the webhook events they publish (alert.received
// when a new occurrence fires, unless it is snoozed; alert.resolved when it closes), written to
// the service's outbox with the change that makes them (putWithEvents).
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { AlertEventSchema, AlertStatus, type AlertEvent } from '../../../gen/mindgate/agents/v1/alerts_pb.js';
import { event, type NewEvent } from '../../common/events/outbox.ts';
import type { RecordCollection } from '../../common/storage/records/interface.ts';
import type { AlertEventRecord } from './records.ts';

/** The outbox subject of alert events (services/agents/events.ts SUBJECTS.alertEvents). */
export const ALERT_EVENTS_SUBJECT = 'alert_events';
export const alertSubject = (records: RecordCollection<AlertEventRecord>) => ({ collection: ALERT_EVENTS_SUBJECT, records });

const ms = (t: number | undefined) => (t === undefined ? undefined : timestampFromMs(t));
const iso = (t: number | undefined) => (t === undefined ? null : new Date(t).toISOString());

export const STATUS_NAMES = {
  [AlertStatus.FIRING]: 'firing',
  [AlertStatus.ACKNOWLEDGED]: 'acknowledged',
  [AlertStatus.SNOOZED]: 'snoozed',
  [AlertStatus.RESOLVED]: 'resolved',
} as const;

export const toAlertEvent = (r: AlertEventRecord): AlertEvent =>
  create(AlertEventSchema, {
    alertEventId: r._id,
    organizationId: r.organizationId,
    sourceId: r.sourceId,
    status: r.status,
    title: r.title,
    severity: r.severity,
    labels: r.labels,
    annotations: r.annotations,
    fingerprint: r.fingerprint,
    groupKey: r.groupKey,
    generatorUrl: r.generatorUrl,
    count: r.count,
    threadId: r.threadId,
    runId: r.runId,
    ruleId: r.ruleId,
    acknowledgedBy: r.acknowledgedBy,
    resolvedBy: r.resolvedBy,
    note: r.note,
    etag: String(r.version),
    startTime: ms(r.startsAt),
    lastSeenTime: ms(r.lastSeenAt),
    endTime: ms(r.endsAt),
    acknowledgeTime: ms(r.acknowledgedAt),
    snoozeUntil: ms(r.snoozedUntil),
    createTime: ms(r.createdAt),
  });

/** The alert event as events show it (the catalogue's AlertEvent). */
export function alertEventData(r: AlertEventRecord) {
  return {
    id: r._id,
    source_id: r.sourceId,
    status: STATUS_NAMES[r.status as keyof typeof STATUS_NAMES] ?? 'firing',
    title: r.title,
    severity: r.severity,
    labels: r.labels,
    fingerprint: r.fingerprint,
    group_key: r.groupKey,
    generator_url: r.generatorUrl,
    count: r.count,
    thread_id: r.threadId === '' ? null : r.threadId,
    rule_id: r.ruleId === '' ? null : r.ruleId,
    starts_at: iso(r.startsAt) ?? new Date(r.createdAt).toISOString(),
    ends_at: iso(r.endsAt),
  };
}

export function alertEvent(type: 'alert.received' | 'alert.resolved', r: AlertEventRecord): NewEvent {
  return event(type, r.organizationId, alertEventData(r));
}
