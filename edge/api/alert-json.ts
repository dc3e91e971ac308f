// The alerts' REST shapes: the schemas of sources, rules and alert events, their JSON from the
// agents service's messages, and the mapping of a service's field error to a 422 on the body.
import type { JsonObject } from '@bufbuild/protobuf';
import { timestampFromMs, type Timestamp } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import * as z from 'zod';
import {
  AlertFormat,
  AlertStatus,
  LabelMatcher_MatchOp as MatchOp,
  type AlertEvent,
  type AlertRule,
  type AlertSource,
} from '../../gen/mindgate/agents/v1/alerts_pb.js';
import { Executor } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { RequestValidationError } from '../http/validation.ts';
import { PlaybookId } from './playbook-json.ts';
import { iso, Name, OrganizationId } from './rest-route.ts';
import { EndpointId } from './webhook-json.ts';

export const SourceId = z
  .string()
  .regex(/^als_[A-Za-z0-9]{1,60}$/, { error: 'must be an alert source id (als_...)' })
  .meta({ description: 'Alert source id.', example: 'als_Vb7kP2xQm9Lr4Tn8Zs1w' });
export const RuleId = z
  .string()
  .regex(/^alr_[A-Za-z0-9]{1,60}$/, { error: 'must be an alert rule id (alr_...)' })
  .meta({ description: 'Alert rule id.', example: 'alr_Hq3nW8xLp2Vr6Tk9Ms4d' });
export const AlertEventId = z
  .string()
  .regex(/^alrt_[A-Za-z0-9]{1,60}$/, { error: 'must be an alert event id (alrt_...)' })
  .meta({ description: 'Alert event id.', example: 'alrt_Zk2mQ8vLx4Pr7Tn1Ws9bHc3dFg6jKl0A' });
export const sourceParams = z.object({ organization_id: OrganizationId, source_id: SourceId });
export const ruleParams = z.object({ organization_id: OrganizationId, rule_id: RuleId });
export const alertEventParams = z.object({ organization_id: OrganizationId, alert_event_id: AlertEventId });

export const FORMATS = { alertmanager: AlertFormat.ALERTMANAGER, generic: AlertFormat.GENERIC } as const;
const FormatName = z.enum(['alertmanager', 'generic'], { error: 'must be alertmanager or generic' });
export const STATUSES = {
  firing: AlertStatus.FIRING,
  acknowledged: AlertStatus.ACKNOWLEDGED,
  snoozed: AlertStatus.SNOOZED,
  resolved: AlertStatus.RESOLVED,
} as const;
export const StatusName = z.enum(['firing', 'acknowledged', 'snoozed', 'resolved'], {
  error: 'must be firing, acknowledged, snoozed or resolved',
});
const OPS = { '=': MatchOp.EQUAL, '!=': MatchOp.NOT_EQUAL, '=~': MatchOp.REGEX, '!~': MatchOp.NOT_REGEX } as const;
const OpName = z.enum(['=', '!=', '=~', '!~'], { error: 'must be =, !=, =~ or !~' });
const EXECUTORS = { llm: Executor.LLM, external: Executor.EXTERNAL } as const;
const Labels = z.record(z.string(), z.string());
const Time = z.string().nullable();

const nameOf = <T extends Record<string, number>>(table: T, value: number) =>
  (Object.keys(table) as (keyof T)[]).find((k) => table[k] === value);

export const AlertSourceSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    format: FormatName,
    receive_url: z.string().meta({ description: 'Where the monitoring system sends its alerts.' }),
    secret_prefix: z.string().meta({ description: 'The first characters of the secret.' }),
    created_by: z.string(),
    created_at: Time,
    last_received_at: Time.meta({ description: 'When it last accepted a payload.' }),
  })
  .meta({ title: 'AlertSource' });
export const AlertSourceWithSecretSchema = z
  .object({ source: AlertSourceSchema, secret: z.string().meta({ description: 'Shown this once.' }) })
  .meta({ title: 'AlertSourceWithSecret' });
export const CreateAlertSourceSchema = z
  .object({ name: Name, format: FormatName.meta({ description: 'The payload shape it accepts.' }) })
  .strict()
  .meta({ title: 'CreateAlertSource' });

const Matcher = z
  .object({
    label: z.string({ error: 'must be a string' }).regex(/^[A-Za-z_][A-Za-z0-9_]{0,199}$/, { error: 'must be a label name' }),
    op: OpName,
    value: z.string({ error: 'must be a string' }).max(1_000),
  })
  .strict()
  .meta({ title: 'LabelMatcher' });
const AlertPlaybook = z
  .object({
    id: PlaybookId,
    version: z
      .int()
      .min(1)
      .nullable()
      .default(null)
      .meta({ description: 'A version to pin; null: the version published when the run is queued.' }),
    inputs: z
      .record(z.string(), z.unknown())
      .default({})
      .meta({ description: "Values of the playbook's inputs for every run; they win over the alert's fields." }),
    brain_feedback: z.boolean().default(false).meta({ description: "Report the run's outcome to the Brain as feedback." }),
  })
  .strict()
  .meta({
    title: 'AlertPlaybook',
    description:
      "The playbook the run follows. The alert's `labels`, `annotations` (objects), `status`, `fingerprint`, `severity`, `title`, `alert_event_id`, `source_id`, `group_key`, `generator_url` and `starts_at` (strings) fill the playbook's declared inputs of those names.",
  });
const InvestigateAction = z
  .object({
    type: z.literal('investigate'),
    instructions: z
      .string()
      .max(20_000)
      .default('')
      .meta({ description: "The run's instructions; empty: the runner's default. Empty with a playbook (its instructions apply)." }),
    executor: z.enum(['llm', 'external'], { error: 'must be llm or external' }).default('llm'),
    timeout_seconds: z.int().min(1).max(86_400).default(3_600),
    playbook: AlertPlaybook.nullable().default(null),
  })
  .strict()
  .meta({
    title: 'InvestigateAction',
    description: 'Open a thread with the alert and queue a run on it (following a playbook, when named).',
  });
const AlertNotifications = z
  .object({
    emails: z
      .array(z.string().max(254))
      .max(10)
      .default([])
      .meta({ description: 'Addresses e-mailed when the rule opens an investigation and when its run ends.' }),
    webhook_endpoint_ids: z
      .array(EndpointId)
      .max(10)
      .default([])
      .meta({ description: 'Webhook endpoints of the organization sent those events, whatever types they subscribe to.' }),
  })
  .strict()
  .meta({ title: 'AlertNotifications', description: "Who hears of the rule's investigations." });
const Action = z.discriminatedUnion('type', [InvestigateAction], { error: 'must be an action (type investigate)' });
const ruleFields = {
  name: Name,
  enabled: z.boolean().default(true),
  severities: z.array(z.string().min(1).max(50)).max(20).default([]).meta({ description: 'Any of these; empty: any severity.' }),
  matchers: z.array(Matcher).max(20).default([]).meta({ description: 'All must hold.' }),
  source_ids: z.array(SourceId).max(50).default([]).meta({ description: 'Only these sources; empty: any.' }),
  action: Action,
  notifications: AlertNotifications.default({ emails: [], webhook_endpoint_ids: [] }),
};
export const CreateAlertRuleSchema = z.object(ruleFields).strict().meta({ title: 'CreateAlertRule' });
export const UpdateAlertRuleSchema = z
  .object({
    name: Name.optional(),
    enabled: z.boolean().optional(),
    severities: ruleFields.severities.unwrap().optional(),
    matchers: ruleFields.matchers.unwrap().optional(),
    source_ids: ruleFields.source_ids.unwrap().optional(),
    action: Action.optional(),
    notifications: AlertNotifications.optional(),
  })
  .strict()
  .meta({ title: 'UpdateAlertRule' });
export const AlertRuleSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    enabled: z.boolean(),
    severities: z.array(z.string()),
    matchers: z.array(z.object({ label: z.string(), op: OpName, value: z.string() })),
    source_ids: z.array(z.string()),
    action: z.object({
      type: z.literal('investigate'),
      instructions: z.string(),
      executor: z.enum(['llm', 'external']),
      timeout_seconds: z.int(),
      playbook: z
        .object({ id: z.string(), version: z.int().nullable(), inputs: z.record(z.string(), z.unknown()), brain_feedback: z.boolean() })
        .nullable(),
    }),
    notifications: z.object({ emails: z.array(z.string()), webhook_endpoint_ids: z.array(z.string()) }),
    created_by: z.string(),
    created_at: Time,
    updated_at: Time,
  })
  .meta({ title: 'AlertRule' });

export const AlertEventSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    source_id: z.string(),
    status: StatusName,
    title: z.string(),
    severity: z.string(),
    labels: Labels,
    annotations: Labels,
    fingerprint: z.string(),
    group_key: z.string(),
    generator_url: z.string(),
    count: z.int().meta({ description: 'Notifications of this occurrence (1 for the first).' }),
    thread_id: z.string().nullable().meta({ description: 'The investigation it opened or joined.' }),
    run_id: z.string().nullable().meta({ description: 'The run queued when it opened the investigation.' }),
    rule_id: z.string().nullable(),
    acknowledged_by: z.string().nullable(),
    resolved_by: z.string().nullable(),
    note: z.string().meta({ description: 'Why a matching rule queued no run (the plan limit), when it did not.' }),
    starts_at: Time,
    last_seen_at: Time,
    ends_at: Time,
    acknowledged_at: Time,
    snoozed_until: Time,
    created_at: Time,
  })
  .meta({ title: 'AlertEvent' });
export const SnoozeAlertEventSchema = z
  .object({ until: z.iso.datetime({ offset: true, error: 'must be an RFC 3339 time' }).meta({ description: 'At most 30 days ahead.' }) })
  .strict()
  .meta({ title: 'SnoozeAlertEvent' });
export const ReceiptSchema = z
  .object({
    received: z.int(),
    opened: z.int(),
    deduplicated: z.int(),
    resolved: z.int(),
    investigations_opened: z.int(),
    alert_event_ids: z.array(z.string()),
  })
  .meta({ title: 'AlertReceipt' });

const orNull = (v: string) => (v === '' ? null : v);

export const sourceJson = (s: AlertSource, api: string) => ({
  id: s.sourceId,
  organization_id: s.organizationId,
  name: s.name,
  format: nameOf(FORMATS, s.format) ?? 'generic',
  receive_url: `${api}/alert-sources/${s.sourceId}/alerts`,
  secret_prefix: s.secretPrefix,
  created_by: s.createdBy,
  created_at: iso(s.createTime as Timestamp | undefined),
  last_received_at: iso(s.lastReceiveTime as Timestamp | undefined),
});

export function ruleJson(r: AlertRule) {
  const a = r.action.case === 'investigate' ? r.action.value : undefined;
  return {
    id: r.ruleId,
    organization_id: r.organizationId,
    name: r.name,
    enabled: r.enabled,
    severities: r.severities,
    matchers: r.matchers.map((m) => ({ label: m.label, op: nameOf(OPS, m.op) ?? '=', value: m.value })),
    source_ids: r.sourceIds,
    action: {
      type: 'investigate' as const,
      instructions: a?.instructions ?? '',
      executor: nameOf(EXECUTORS, a?.executor ?? Executor.LLM) ?? 'llm',
      timeout_seconds: a?.timeoutSeconds ?? 3_600,
      playbook: a?.playbook
        ? {
            id: a.playbook.playbookId,
            version: a.playbook.version === 0 ? null : a.playbook.version,
            inputs: (a.playbook.inputs ?? {}) as Record<string, unknown>,
            brain_feedback: a.playbook.brainFeedback,
          }
        : null,
    },
    notifications: { emails: r.notifications?.emails ?? [], webhook_endpoint_ids: r.notifications?.webhookEndpointIds ?? [] },
    created_by: r.createdBy,
    created_at: iso(r.createTime as Timestamp | undefined),
    updated_at: iso(r.updateTime as Timestamp | undefined),
  };
}

type RuleBody = z.output<typeof CreateAlertRuleSchema>;

/** The rule as the service takes it. */
export const ruleMessage = (b: RuleBody) => ({
  name: b.name,
  enabled: b.enabled,
  severities: b.severities,
  matchers: b.matchers.map((m) => ({ label: m.label, op: OPS[m.op], value: m.value })),
  sourceIds: b.source_ids,
  action: {
    case: 'investigate' as const,
    value: {
      instructions: b.action.instructions,
      executor: EXECUTORS[b.action.executor],
      timeoutSeconds: b.action.timeout_seconds,
      playbook: b.action.playbook
        ? {
            playbookId: b.action.playbook.id,
            version: b.action.playbook.version ?? 0,
            inputs: b.action.playbook.inputs as JsonObject,
            brainFeedback: b.action.playbook.brain_feedback,
          }
        : undefined,
    },
  },
  notifications: { emails: b.notifications.emails, webhookEndpointIds: b.notifications.webhook_endpoint_ids },
});

/** A service field of a rule (`rule.action.investigate.playbook.playbook_id`) as the body's path. */
export const ruleFieldPath = (field: string) =>
  field
    .replace(/^rule\./, '')
    .replace(/^action\.investigate\./, 'action.')
    .replace(/^action\.playbook\.playbook_id$/, 'action.playbook.id');

/** A stored rule as a body, so a partial update can be laid over it. */
export const ruleBody = (r: ReturnType<typeof ruleJson>): RuleBody => ({ ...r, action: r.action });

export const alertEventJson = (e: AlertEvent) => ({
  id: e.alertEventId,
  organization_id: e.organizationId,
  source_id: e.sourceId,
  status: nameOf(STATUSES, e.status) ?? 'firing',
  title: e.title,
  severity: e.severity,
  labels: e.labels,
  annotations: e.annotations,
  fingerprint: e.fingerprint,
  group_key: e.groupKey,
  generator_url: e.generatorUrl,
  count: e.count,
  thread_id: orNull(e.threadId),
  run_id: orNull(e.runId),
  rule_id: orNull(e.ruleId),
  acknowledged_by: orNull(e.acknowledgedBy),
  resolved_by: orNull(e.resolvedBy),
  note: e.note,
  starts_at: iso(e.startTime as Timestamp | undefined),
  last_seen_at: iso(e.lastSeenTime as Timestamp | undefined),
  ends_at: iso(e.endTime as Timestamp | undefined),
  acknowledged_at: iso(e.acknowledgeTime as Timestamp | undefined),
  snoozed_until: iso(e.snoozeUntil as Timestamp | undefined),
  created_at: iso(e.createTime as Timestamp | undefined),
});

export const timestampOf = (value: string) => timestampFromMs(Date.parse(value));

/**
 * Runs a call whose INVALID_ARGUMENT names a dotted field path (`alerts.0.fingerprint: ...`,
 * `rule.matchers.1.value: ...`), answering it as a 422 with that location under `body`.
 */
export async function fieldErrors<T>(work: () => Promise<T>, strip: string | ((field: string) => string) = ''): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const match = err instanceof ConnectError && err.code === Code.InvalidArgument ? /^([^:\s]+): (.*)$/s.exec(err.rawMessage) : null;
    if (!match || match[1] === 'organization_id' || match[1] === 'page_token') throw err;
    const field = match[1];
    const path = typeof strip === 'function' ? strip(field) : field.startsWith(strip) ? field.slice(strip.length) : field;
    const loc = path === '(body)' ? ['body'] : ['body', ...path.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p))];
    throw new RequestValidationError([{ type: 'value_error', loc, msg: match[2] }]);
  }
}

const Strings = z.record(z.string(), z.string());
const AlertmanagerWebhookSchema = z
  .object({
    version: z.literal('4'),
    groupKey: z.string(),
    truncatedAlerts: z.int().optional(),
    status: z.enum(['firing', 'resolved']),
    receiver: z.string().optional(),
    groupLabels: Strings.optional(),
    commonLabels: Strings.optional(),
    commonAnnotations: Strings.optional(),
    externalURL: z.string().optional(),
    alerts: z.array(
      z.object({
        status: z.enum(['firing', 'resolved']),
        labels: Strings,
        annotations: Strings.optional(),
        startsAt: z.string().optional(),
        endsAt: z.string().optional(),
        generatorURL: z.string().optional(),
        fingerprint: z.string(),
      }),
    ),
  })
  .meta({ title: 'AlertmanagerWebhook', description: "Prometheus Alertmanager's webhook payload, version 4 (an `alertmanager` source)." });
const GenericAlertSchema = z
  .object({
    title: z.string(),
    status: z.enum(['firing', 'resolved']).optional().meta({ description: 'Default firing.' }),
    severity: z.string().optional(),
    labels: Strings.optional(),
    annotations: Strings.optional(),
    fingerprint: z.string().optional().meta({ description: 'The deduplication key (or dedup_key); default: a hash of title and labels.' }),
    dedup_key: z.string().optional(),
    group_key: z.string().optional().meta({ description: 'Alerts of one group key share an investigation.' }),
    url: z.string().optional(),
    starts_at: z.string().optional(),
  })
  .meta({ title: 'GenericAlert', description: 'One alert (a `generic` source).' });
/** What the receive URL takes, for the document: the source's format decides which. */
export const AlertPayloadSchema = z.union([AlertmanagerWebhookSchema, GenericAlertSchema]).meta({ title: 'AlertPayload' });
