// What a source's payload says, as alerts of one shape. Two formats:
//
// - alertmanager: Prometheus Alertmanager's webhook (version "4"): the group key and status of a
//   group and its alerts, each with labels, annotations, startsAt/endsAt, generatorURL and a
//   fingerprint. Title: annotations.summary, else labels.alertname; severity: labels.severity.
// - generic: one alert, `{title, status?, severity?, labels?, annotations?, fingerprint? |
//   dedup_key?, group_key?, url?, starts_at?}`. Without a fingerprint or dedup_key, the alert is
//   deduplicated on a hash of its title and labels.
//
// A payload that is not of its source's format is INVALID_ARGUMENT naming the first failing field
// as a dotted path (`alerts.0.fingerprint: ...`), which the edge answers as a 422.
import { Code, ConnectError } from '@connectrpc/connect';
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { AlertFormat } from '../../../gen/mindgate/agents/v1/alerts_pb.js';

/** Alerts in one payload at most (Alertmanager's max_alerts is usually far below). */
export const MAX_ALERTS = 1_000;

export interface IncomingAlert {
  fingerprint: string;
  status: 'firing' | 'resolved';
  title: string;
  severity: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  groupKey: string;
  generatorUrl: string;
  startsAt?: number;
  endsAt?: number;
}

const Labels = z
  .record(z.string().min(1).max(200), z.string().max(4_096))
  .refine((r) => Object.keys(r).length <= 100, { error: 'must have at most 100 entries' });
const Time = z.iso.datetime({ offset: true, error: 'must be an RFC 3339 time' });
const Status = z.enum(['firing', 'resolved'], { error: 'must be firing or resolved' });

const AlertmanagerAlert = z.object({
  status: Status,
  labels: Labels,
  annotations: Labels.optional(),
  startsAt: Time.optional(),
  // Alertmanager sends the zero time ("0001-01-01T00:00:00Z") while an alert fires.
  endsAt: Time.optional(),
  generatorURL: z.string().max(4_096).optional(),
  fingerprint: z.string().min(1, { error: 'must not be empty' }).max(200),
});

const AlertmanagerPayload = z.object({
  version: z.literal('4', { error: 'must be "4" (the Alertmanager webhook version this accepts)' }),
  groupKey: z.string().min(1, { error: 'must not be empty' }).max(4_096),
  status: Status,
  receiver: z.string().max(1_000).optional(),
  truncatedAlerts: z.int().min(0).optional(),
  groupLabels: Labels.optional(),
  commonLabels: Labels.optional(),
  commonAnnotations: Labels.optional(),
  externalURL: z.string().max(4_096).optional(),
  alerts: z.array(AlertmanagerAlert).min(1, { error: 'must hold at least one alert' }).max(MAX_ALERTS),
});

const GenericPayload = z.object({
  title: z.string({ error: 'must be a string' }).trim().min(1, { error: 'must not be empty' }).max(500),
  status: Status.default('firing'),
  severity: z.string().max(50).default(''),
  labels: Labels.default({}),
  annotations: Labels.default({}),
  fingerprint: z.string().min(1).max(200).optional(),
  dedup_key: z.string().min(1).max(200).optional(),
  group_key: z.string().min(1).max(4_096).optional(),
  url: z.string().max(4_096).optional(),
  starts_at: Time.optional(),
});

function parse<S extends z.ZodType>(schema: S, payload: Uint8Array): z.output<S> {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(payload).toString('utf8'));
  } catch {
    throw new ConnectError('(body): is not JSON', Code.InvalidArgument);
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue.path.length === 0 ? '(body)' : issue.path.map(String).join('.');
  throw new ConnectError(`${path}: ${issue.message}`, Code.InvalidArgument);
}

const ms = (t: string | undefined) => {
  const v = t === undefined ? Number.NaN : Date.parse(t);
  // Alertmanager's zero time means "not ended": anything before 1971 is treated as absent.
  return Number.isFinite(v) && v > 31_536_000_000 ? v : undefined;
};

function fromAlertmanager(payload: Uint8Array): IncomingAlert[] {
  const body = parse(AlertmanagerPayload, payload);
  return body.alerts.map((a) => {
    const annotations = a.annotations ?? {};
    return {
      fingerprint: a.fingerprint,
      status: a.status,
      title: (annotations.summary || a.labels.alertname || 'Alert').slice(0, 500),
      severity: (a.labels.severity ?? '').slice(0, 50),
      labels: a.labels,
      annotations,
      groupKey: body.groupKey,
      generatorUrl: a.generatorURL ?? '',
      startsAt: ms(a.startsAt),
      endsAt: ms(a.endsAt),
    };
  });
}

function fromGeneric(payload: Uint8Array): IncomingAlert[] {
  const body = parse(GenericPayload, payload);
  const labels = Object.entries(body.labels).sort(([a], [b]) => (a < b ? -1 : 1));
  const derived = createHash('sha256')
    .update(JSON.stringify([body.title, labels]))
    .digest('hex')
    .slice(0, 32);
  return [
    {
      fingerprint: body.fingerprint ?? body.dedup_key ?? derived,
      status: body.status,
      title: body.title,
      severity: body.severity,
      labels: body.labels,
      annotations: body.annotations,
      groupKey: body.group_key ?? '',
      generatorUrl: body.url ?? '',
      startsAt: ms(body.starts_at),
    },
  ];
}

export function parseAlerts(format: AlertFormat, payload: Uint8Array): IncomingAlert[] {
  return format === AlertFormat.ALERTMANAGER ? fromAlertmanager(payload) : fromGeneric(payload);
}
