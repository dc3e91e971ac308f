// What an incoming alert does. Every step is a compare-and-set on an id derived from the alert
// (records.ts), so two replicas handling the same payload at once agree:
//
// - firing, with an open occurrence of its fingerprint: the occurrence's count and last-seen
//   time go up (a compare-and-set on its version, retried when another replica moved it first);
// - firing, with none: the next occurrence is inserted if absent; the replica whose insert wins
//   publishes alert.received and attaches the investigation, the other sees the occurrence and
//   counts a repeat. An occurrence whose previous one was snoozed past now is snoozed too: it
//   publishes nothing and opens nothing;
// - resolved: the open occurrence closes (alert.resolved) and its thread gets a message; a
//   resolved notification for nothing open changes nothing.
import { AlertStatus } from '../../../gen/mindgate/agents/v1/alerts_pb.js';
import { putWithEvents } from '../../common/events/outbox.ts';
import type { IncomingAlert } from './payloads.ts';
import { alertEventId, generationKey, type AlertEventRecord, type AlertRuleRecord, type AlertsContext } from './records.ts';
import { alertEvent, alertSubject } from './events.ts';
import { attachInvestigation, closeInThread } from './investigations.ts';
import { latestGeneration, noteGeneration } from './generations.ts';

export type Outcome =
  | { kind: 'opened'; event: AlertEventRecord; investigation: boolean }
  | { kind: 'deduplicated' | 'resolved' | 'ignored'; event?: AlertEventRecord };

const ATTEMPTS = 50;

interface Lookup {
  /** The open occurrence, when there is one. */
  open?: AlertEventRecord;
  /** Otherwise: the generation a new occurrence takes, and the one before it. */
  free: number;
  previous?: AlertEventRecord;
}

async function lookup(ctx: AlertsContext, sourceId: string, organizationId: string, fingerprint: string): Promise<Lookup> {
  const key = generationKey('fingerprint', sourceId, fingerprint);
  let previous: AlertEventRecord | undefined;
  for (let g = await latestGeneration(ctx, key); ; g++) {
    const found = await ctx.events.get(alertEventId(sourceId, fingerprint, g));
    if (!found) {
      if (previous === undefined && g > 1) previous = await ctx.events.get(alertEventId(sourceId, fingerprint, g - 1));
      await noteGeneration(ctx, key, organizationId, g);
      return { free: g, previous };
    }
    if (found.status !== AlertStatus.RESOLVED) return { open: found, free: g };
    previous = found;
  }
}

function newOccurrence(ctx: AlertsContext, sourceId: string, organizationId: string, alert: IncomingAlert, at: Lookup): AlertEventRecord {
  const now = ctx.now();
  const snoozedUntil = at.previous?.snoozedUntil !== undefined && at.previous.snoozedUntil > now ? at.previous.snoozedUntil : undefined;
  return {
    _id: alertEventId(sourceId, alert.fingerprint, at.free),
    organizationId,
    sourceId,
    status: snoozedUntil === undefined ? AlertStatus.FIRING : AlertStatus.SNOOZED,
    title: alert.title,
    severity: alert.severity,
    labels: alert.labels,
    annotations: alert.annotations,
    fingerprint: alert.fingerprint,
    generation: at.free,
    groupKey: alert.groupKey,
    generatorUrl: alert.generatorUrl,
    count: 1,
    threadId: '',
    runId: '',
    ruleId: '',
    acknowledgedBy: '',
    resolvedBy: '',
    note: '',
    // A snoozed occurrence opens nothing, now or on its repeats.
    attached: snoozedUntil !== undefined,
    startsAt: alert.startsAt ?? now,
    lastSeenAt: now,
    snoozedUntil,
    createdAt: now,
    version: 1,
  };
}

/** A repeat of an open occurrence: counted; a snooze that has run out ends. */
function repeated(ctx: AlertsContext, open: AlertEventRecord, alert: IncomingAlert): AlertEventRecord {
  const now = ctx.now();
  const woke = open.status === AlertStatus.SNOOZED && (open.snoozedUntil ?? 0) <= now;
  const status = woke ? (open.acknowledgedBy === '' ? AlertStatus.FIRING : AlertStatus.ACKNOWLEDGED) : open.status;
  return { ...open, status, annotations: alert.annotations, count: open.count + 1, lastSeenAt: now, version: open.version + 1 };
}

async function fire(
  ctx: AlertsContext,
  sourceId: string,
  organizationId: string,
  alert: IncomingAlert,
  rules: () => Promise<AlertRuleRecord[]>,
): Promise<Outcome> {
  for (let i = 0; i < ATTEMPTS; i++) {
    const at = await lookup(ctx, sourceId, organizationId, alert.fingerprint);
    if (at.open) {
      const next = repeated(ctx, at.open, alert);
      if (!(await ctx.events.put(next, { expect: { version: at.open.version } }))) continue;
      // The replica that opened it died before its investigation step: this repeat does it.
      if (next.attached === false)
        return { kind: 'deduplicated', event: (await attachInvestigation(ctx, next, alert, await rules())).event };
      return { kind: 'deduplicated', event: next };
    }
    const record = newOccurrence(ctx, sourceId, organizationId, alert, at);
    const quiet = record.status === AlertStatus.SNOOZED;
    const events = quiet ? [] : [alertEvent('alert.received', record)];
    if (!(await putWithEvents(ctx.outbox, alertSubject(ctx.events), record, undefined, events, { expect: null }))) continue;
    if (quiet) return { kind: 'opened', event: record, investigation: false };
    const attached = await attachInvestigation(ctx, record, alert, await rules());
    return { kind: 'opened', event: attached.event, investigation: attached.opened };
  }
  throw new Error(`alert ${alert.fingerprint}: no write won after ${ATTEMPTS} attempts`);
}

async function resolve(ctx: AlertsContext, sourceId: string, organizationId: string, alert: IncomingAlert): Promise<Outcome> {
  for (let i = 0; i < ATTEMPTS; i++) {
    const { open } = await lookup(ctx, sourceId, organizationId, alert.fingerprint);
    if (!open) return { kind: 'ignored' };
    const now = ctx.now();
    const next: AlertEventRecord = {
      ...open,
      status: AlertStatus.RESOLVED,
      endsAt: alert.endsAt ?? now,
      lastSeenAt: now,
      version: open.version + 1,
    };
    const quiet = open.status === AlertStatus.SNOOZED && (open.snoozedUntil ?? 0) > now;
    const events = quiet ? [] : [alertEvent('alert.resolved', next)];
    if (!(await putWithEvents(ctx.outbox, alertSubject(ctx.events), next, open, events, { expect: { version: open.version } }))) continue;
    await closeInThread(ctx, next, 'resolved at the source');
    return { kind: 'resolved', event: next };
  }
  throw new Error(`alert ${alert.fingerprint}: no write won after ${ATTEMPTS} attempts`);
}

export function processAlert(
  ctx: AlertsContext,
  source: { _id: string; organizationId: string },
  alert: IncomingAlert,
  rules: () => Promise<AlertRuleRecord[]>,
): Promise<Outcome> {
  return alert.status === 'firing'
    ? fire(ctx, source._id, source.organizationId, alert, rules)
    : resolve(ctx, source._id, source.organizationId, alert);
}
