// The event catalogue: every type of event the platform publishes as a webhook, with the schema
// of its `data`. Producers emit with `event(type, data)`, typed by the schema, and the webhooks
// service lists the catalogue with each schema as JSON Schema. Adding an event type is an entry
// here and an emit call where the change is made (see services/common/events/outbox.ts).
// Types are `noun.verb`; adding a field to a type's data is not a breaking change (Standard
// Webhooks), removing or renaming one is.
import * as z from 'zod';

const Time = z.string().meta({ description: 'RFC 3339 time.' });
const Namespace = z.enum(['knowledge', 'episodes']);
const MemoryRef = z.object({ namespace: Namespace, key: z.string() });
const Writer = z
  .object({ client_id: z.string(), client_name: z.string(), user_id: z.string(), user_name: z.string() })
  .meta({ description: 'Who made the change: the OAuth client and the user it acted for.' });

const Memory = z.object({
  namespace: Namespace,
  key: z.string(),
  title: z.string(),
  content: z.string(),
  tags: z.array(z.string()),
  entities: z.array(z.string()),
  version: z.int().meta({ description: '1 on create, +1 on every content update.' }),
  written_by: Writer,
  created_at: Time,
  updated_at: Time,
  supersedes: MemoryRef.nullable().meta({ description: 'The memory this one corrects.' }),
});

const ItemStatus = z.enum(['open', 'resolved', 'dismissed', 'obsolete']);
const Contradiction = z.object({
  id: z.string(),
  memories: z.array(MemoryRef.extend({ version: z.int() })),
  reason: z.string(),
  status: ItemStatus,
  resolution: z.string(),
  flagged_by: z.enum(['detector', 'client']),
});
const Question = z.object({
  id: z.string(),
  question: z.string(),
  memories: z.array(MemoryRef),
  entities: z.array(z.string()),
  status: ItemStatus,
  resolution: z.string(),
});

const Role = z.enum(['owner', 'admin', 'member', 'viewer', 'billing_admin']);
const Invitation = z.object({
  id: z.string(),
  email: z.string(),
  role: Role,
  team_ids: z.array(z.string()),
  invited_by: z.string(),
  expires_at: Time,
});
const ApiKey = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.string()),
  team_id: z.string().nullable(),
  created_by: z.string(),
});

const Run = z
  .object({
    id: z.string(),
    thread_id: z.string(),
    status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out']),
    executor: z.enum(['llm', 'external', 'playbook']),
    agent_id: z.string().meta({ description: 'The executor that holds or last held it; empty while queued.' }),
    attempt: z.int().meta({ description: 'How many times it was claimed (more than 1 after a takeover).' }),
    timeout_seconds: z.int(),
    usage: z.object({ input_tokens: z.int(), output_tokens: z.int(), tool_calls: z.int(), duration_ms: z.int() }),
    model: z.string(),
    output: z.string().meta({ description: 'What the run concluded (Markdown), once it succeeded.' }),
    error: z.string(),
    step_count: z.int(),
    created_by: z.string(),
    retry_of: z.string().nullable().meta({ description: 'The run this one retries.' }),
    playbook_id: z.string().nullable().meta({ description: 'The playbook it follows, when it was started from one.' }),
    playbook_version: z.int().nullable().meta({ description: 'The playbook version it follows.' }),
    created_at: Time,
    started_at: Time.nullable(),
    finished_at: Time.nullable(),
  })
  .meta({ description: "The run as it stands after the change (the REST API's Run, without the lease)." });
const Thread = z.object({
  id: z.string(),
  title: z.string(),
  status: z.enum(['open', 'resolved', 'archived']),
  created_by: z.string(),
  created_at: Time,
  updated_at: Time,
});

const AlertEvent = z
  .object({
    id: z.string(),
    source_id: z.string(),
    status: z.enum(['firing', 'acknowledged', 'snoozed', 'resolved']),
    title: z.string(),
    severity: z.string(),
    labels: z.record(z.string(), z.string()),
    fingerprint: z.string().meta({ description: "The deduplication key: Alertmanager's fingerprint, or the generic dedup_key." }),
    group_key: z.string(),
    generator_url: z.string(),
    count: z.int().meta({ description: 'Notifications of this occurrence so far.' }),
    thread_id: z.string().nullable().meta({ description: 'The investigation it opened or joined.' }),
    rule_id: z.string().nullable().meta({ description: 'The alert rule that matched it.' }),
    starts_at: Time,
    ends_at: Time.nullable(),
  })
  .meta({ description: "The alert event as it stands after the change (the REST API's AlertEvent, in part)." });

const JobExecution = z
  .object({
    id: z.string(),
    job_id: z.string(),
    job_name: z.string(),
    trigger: z.enum(['schedule', 'manual']),
    outcome: z.enum(['pending', 'succeeded', 'failed', 'skipped']),
    error: z.string().meta({ description: 'Why it failed, or which occurrences were skipped.' }),
    occurrence_at: Time.meta({ description: 'The occurrence (the first missed one of a skip).' }),
    fired_at: Time,
    occurrences: z.int().meta({ description: 'How many occurrences it stands for (counted up to 1,000).' }),
    thread_id: z.string().nullable(),
    run_id: z.string().nullable(),
    seeding_run_id: z.string().nullable(),
  })
  .meta({ description: "The execution as it stands after the change (the REST API's JobExecution, without its run)." });

const Investigation = {
  rule_id: z.string().meta({ description: 'The alert rule that opened the investigation.' }),
  rule_name: z.string(),
  thread_id: z.string().meta({ description: 'The investigation (thread).' }),
};

/** Every event type: its description and the schema of its data. */
export const EVENT_TYPES = {
  'memory.created': { description: 'A memory was written under a new key.', data: Memory },
  'memory.updated': { description: "A memory's content changed (a new version).", data: Memory },
  'memory.deleted': {
    description: 'A memory was deleted.',
    data: z.object({ namespace: Namespace, key: z.string(), version: z.int(), deleted_by: Writer }),
  },
  'memory.superseded': {
    description: 'A memory was corrected by another one (written with supersedes): it is history now.',
    data: z.object({ namespace: Namespace, key: z.string(), version: z.int(), superseded_by: MemoryRef }),
  },
  'contradiction.flagged': {
    description: 'Memories that disagree were flagged, by the write-time detector or a client.',
    data: Contradiction.extend({ flagged: Writer }),
  },
  'contradiction.resolved': {
    description: 'A contradiction was closed: resolved, dismissed, or obsolete (a memory it names was deleted or superseded).',
    data: Contradiction.extend({ resolved_by: Writer }),
  },
  'question.opened': { description: 'An open question was asked.', data: Question.extend({ asked_by: Writer }) },
  'question.resolved': { description: 'An open question was answered or dropped.', data: Question.extend({ resolved_by: Writer }) },
  'member.added': {
    description: 'Someone became a member of the organization.',
    data: z.object({ user_id: z.string(), role: Role, via: z.enum(['organization_created', 'invitation', 'direct']) }),
  },
  'member.updated': {
    description: "A member's role changed.",
    data: z.object({ user_id: z.string(), role: Role, previous_role: Role }),
  },
  'member.removed': {
    description: 'A member left or was removed from the organization (also when their account was deleted).',
    data: z.object({ user_id: z.string(), role: Role, reason: z.enum(['removed', 'left', 'account_deleted']) }),
  },
  'invitation.created': { description: 'An invitation was sent.', data: Invitation },
  'invitation.resent': { description: 'An invitation was sent again with a new link.', data: Invitation },
  'invitation.revoked': { description: 'An invitation was withdrawn.', data: Invitation },
  'invitation.accepted': { description: 'An invitation was accepted.', data: Invitation.extend({ user_id: z.string() }) },
  'api_key.created': { description: 'An API key was created.', data: ApiKey },
  'api_key.rotated': { description: "An API key's secret was replaced.", data: ApiKey },
  'api_key.revoked': { description: 'An API key was revoked.', data: ApiKey },
  'thread.created': { description: 'An investigation (a thread) was opened.', data: Thread },
  'thread.resolved': { description: 'An investigation was marked resolved.', data: Thread },
  'run.queued': { description: 'A run was queued on a thread (created, or a retry of a finished run).', data: Run },
  'run.started': {
    description:
      'An executor claimed the run and started an attempt: attempt 1 is the first start, a later one a takeover after a lease was lost.',
    data: Run,
  },
  'run.succeeded': { description: 'The run finished with a conclusion (`output`).', data: Run },
  'run.failed': { description: 'The run finished with an error (`error`).', data: Run },
  'run.cancelled': { description: 'The run was cancelled before it finished (`error` holds the reason).', data: Run },
  'run.timed_out': { description: 'The run passed its timeout before it finished.', data: Run },
  'alert.received': {
    description:
      'A new alert occurrence fired at an alert source (not its repeats, nor while snoozed); thread.created follows when a rule opens an investigation.',
    data: AlertEvent,
  },
  'alert.resolved': { description: 'An alert occurrence closed: resolved at its source, or by hand.', data: AlertEvent },
  'alert.investigation_opened': {
    description:
      "An alert rule opened an investigation for an alert: sent to the rule's notification channels (its webhook endpoints, whatever they subscribe to, and its e-mail addresses) and to subscribers.",
    data: z.object({
      ...Investigation,
      thread_title: z.string(),
      run_id: z
        .string()
        .nullable()
        .meta({ description: "The run queued on it; null when the plan's runs_per_month refused it (note says so)." }),
      playbook_id: z.string().nullable().meta({ description: 'The playbook the run follows, when the rule names one.' }),
      playbook_version: z.int().nullable(),
      note: z.string().meta({ description: 'Why no run was queued, when none was.' }),
      alert: AlertEvent,
    }),
  },
  'alert.investigation_finished': {
    description: "The run of an investigation an alert rule opened has ended: sent to the rule's notification channels and to subscribers.",
    data: z.object({
      ...Investigation,
      alert_event_id: z.string().meta({ description: 'The alert event that opened the investigation.' }),
      outcome: z.enum(['succeeded', 'failed', 'cancelled', 'timed_out']),
      run: Run,
    }),
  },
  'job_execution.failed': {
    description:
      "A scheduled job's execution failed: its target was refused (the plan's run limit, a playbook it can no longer run, a seeding URL refused); `error` says why.",
    data: JobExecution,
  },
  'job_execution.skipped': {
    description: "A scheduled job's missed occurrences were skipped (missed policy skip): no replica fired them in time.",
    data: JobExecution,
  },
  'job.backed_off': {
    description:
      'A scheduled job that keeps failing skips occurrences before it fires again (2^(k-1) - 1 after k failures in a row, at most 15).',
    data: z.object({
      id: z.string(),
      name: z.string(),
      consecutive_failures: z.int(),
      backoff_skips: z.int().meta({ description: 'Occurrences it skips before the next firing.' }),
      last_error: z.string(),
      next_fire_at: Time.nullable(),
    }),
  },
  'webhook_endpoint.disabled': {
    description: 'A webhook endpoint was disabled automatically after failing for a sustained time; its owners are e-mailed too.',
    data: z.object({
      endpoint_id: z.string(),
      url: z.string(),
      reason: z.literal('failing'),
      failing_since: Time,
      consecutive_failures: z.int(),
    }),
  },
  'webhook.test': {
    description: 'A test event, sent to one endpoint on request (never to subscribers).',
    data: z.object({ endpoint_id: z.string(), message: z.string() }),
  },
} as const satisfies Record<string, { description: string; data: z.ZodObject }>;

export type EventType = keyof typeof EVENT_TYPES;
export type EventData<T extends EventType> = z.input<(typeof EVENT_TYPES)[T]['data']>;

/** A noun's every type ("memory.*") or all of them ("*"). */
export const WILDCARD = /^(\*|[a-z_]+\.\*)$/;

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_TYPES, value);
}

/** Whether an endpoint subscribed to `patterns` receives events of `type`. */
export function subscribes(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));
}

/** A pattern that names at least one type of the catalogue. */
export function isEventPattern(value: string): boolean {
  if (isEventType(value)) return true;
  if (!WILDCARD.test(value)) return false;
  return Object.keys(EVENT_TYPES).some((t) => subscribes([value], t));
}

let schemas: Map<string, string> | undefined;

/** The JSON Schema (draft 2020-12) of each type's data, built once. */
export function eventSchemas(): Map<string, string> {
  schemas ??= new Map(
    Object.entries(EVENT_TYPES).map(([type, entry]) => [
      type,
      JSON.stringify(z.toJSONSchema(entry.data, { target: 'draft-2020-12', io: 'output' })),
    ]),
  );
  return schemas;
}
