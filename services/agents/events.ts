// The agents service's events (services/common/events/catalogue.ts): members, invitations, API
// keys, webhook endpoints disabled for failing, and investigations (threads and runs). Each is written to the service's outbox with
// the change that makes it (putWithEvents, deleteWithEvents), so none is lost or invented.
import { event, type EventOutbox, type NewEvent } from '../common/events/outbox.ts';
import type { RecordCollection } from '../common/storage/records/interface.ts';
import type { ApiKeyRecord } from './handlers/api-keys.ts';
import type { InvitationRecord } from './handlers/invitations.ts';
import { Executor, RunStatus } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { ThreadStatus } from '../../gen/mindgate/agents/v1/threads_pb.js';
import type { MembershipRecord, RoleName } from './handlers/organizations.ts';
import type { RunNotify, RunRecord } from './handlers/runs.ts';
import type { ThreadRecord } from './handlers/threads.ts';

/** What a handler needs to write records with their events. */
export interface EventsContext {
  events: EventOutbox;
}

/** The collections the agents service's events are about, by name. */
export const SUBJECTS = {
  memberships: 'memberships',
  invitations: 'invitations',
  apiKeys: 'api_keys',
  webhookEndpoints: 'webhook_endpoints',
  runs: 'runs',
  threads: 'threads',
  alertEvents: 'alert_events',
  jobs: 'jobs',
  jobExecutions: 'job_executions',
} as const;

export const membershipSubject = (records: RecordCollection<MembershipRecord>) => ({ collection: SUBJECTS.memberships, records });
export const invitationSubject = (records: RecordCollection<InvitationRecord>) => ({ collection: SUBJECTS.invitations, records });
export const apiKeySubject = (records: RecordCollection<ApiKeyRecord>) => ({ collection: SUBJECTS.apiKeys, records });
export const runSubject = (records: RecordCollection<RunRecord>) => ({ collection: SUBJECTS.runs, records });
export const threadSubject = (records: RecordCollection<ThreadRecord>) => ({ collection: SUBJECTS.threads, records });

const iso = (ms: number) => new Date(ms).toISOString();

export function memberAdded(m: MembershipRecord, via: 'organization_created' | 'invitation' | 'direct'): NewEvent {
  return event('member.added', m.organizationId, { user_id: m.userId, role: m.role, via });
}

/** Nothing when the role did not change. */
export function memberUpdated(m: MembershipRecord, previous: RoleName): NewEvent[] {
  if (m.role === previous) return [];
  return [event('member.updated', m.organizationId, { user_id: m.userId, role: m.role, previous_role: previous })];
}

export function memberRemoved(m: MembershipRecord, reason: 'removed' | 'left' | 'account_deleted'): NewEvent {
  return event('member.removed', m.organizationId, { user_id: m.userId, role: m.role, reason });
}

type InvitationType = 'invitation.created' | 'invitation.resent' | 'invitation.revoked' | 'invitation.accepted';

export function invitationEvent(type: InvitationType, r: InvitationRecord): NewEvent {
  const data = {
    id: r._id,
    email: r.email,
    role: r.role,
    team_ids: r.teamIds ?? [],
    invited_by: r.invitedBy,
    expires_at: iso(r.expireAt),
  };
  if (type === 'invitation.accepted') return event(type, r.organizationId, { ...data, user_id: r.acceptedBy ?? '' });
  return event(type, r.organizationId, data);
}

export function apiKeyEvent(type: 'api_key.created' | 'api_key.rotated' | 'api_key.revoked', r: ApiKeyRecord): NewEvent {
  return event(type, r.organizationId, {
    id: r._id,
    name: r.name,
    prefix: r.prefix,
    scopes: r.scopes ?? ['read'],
    team_id: r.teamId ?? null,
    created_by: r.createdBy,
  });
}

const RUN_STATUS = {
  [RunStatus.UNSPECIFIED]: 'queued',
  [RunStatus.QUEUED]: 'queued',
  [RunStatus.RUNNING]: 'running',
  [RunStatus.SUCCEEDED]: 'succeeded',
  [RunStatus.FAILED]: 'failed',
  [RunStatus.CANCELLED]: 'cancelled',
  [RunStatus.TIMED_OUT]: 'timed_out',
} as const;

/** The event a run's move to `status` makes: queued, started (a claim), or how it finished. */
const RUN_EVENT = {
  [RunStatus.QUEUED]: 'run.queued',
  [RunStatus.RUNNING]: 'run.started',
  [RunStatus.SUCCEEDED]: 'run.succeeded',
  [RunStatus.FAILED]: 'run.failed',
  [RunStatus.CANCELLED]: 'run.cancelled',
  [RunStatus.TIMED_OUT]: 'run.timed_out',
} as const;

const EXECUTOR_NAMES: Record<number, 'external' | 'playbook'> = { [Executor.EXTERNAL]: 'external', [Executor.PLAYBOOK]: 'playbook' };

/** The run as events show it (the catalogue's Run). */
function runData(r: RunRecord) {
  const end = r.finishedAt ?? 0;
  return {
    id: r._id,
    thread_id: r.threadId,
    status: RUN_STATUS[r.status],
    executor: EXECUTOR_NAMES[r.executor] ?? 'llm',
    agent_id: r.agentId,
    attempt: r.attempt,
    timeout_seconds: r.timeoutSeconds,
    usage: {
      input_tokens: r.inputTokens,
      output_tokens: r.outputTokens,
      tool_calls: r.toolCalls,
      duration_ms: r.startedAt !== undefined && end > 0 ? end - r.startedAt : 0,
    },
    model: r.model,
    output: r.output,
    error: r.error,
    step_count: r.stepCount,
    created_by: r.createdBy,
    retry_of: r.retryOf ? r.retryOf : null,
    playbook_id: r.playbookId ? r.playbookId : null,
    playbook_version: r.playbookVersion ? r.playbookVersion : null,
    created_at: iso(r.createdAt),
    started_at: r.startedAt === undefined ? null : iso(r.startedAt),
    finished_at: r.finishedAt === undefined ? null : iso(r.finishedAt),
  };
}

/** The event of a run that has just moved to its status (the run as it is after the change). */
export function runEvent(r: RunRecord): NewEvent {
  const type = RUN_EVENT[r.status as keyof typeof RUN_EVENT];
  if (!type) throw new Error(`a run in status ${r.status} makes no event`);
  return event(type, r.organizationId, runData(r));
}

/** An alert rule's run has ended: announced to the rule's channels (and alert.* subscribers). */
export function investigationFinished(r: RunRecord, notify: RunNotify): NewEvent {
  const data = runData(r);
  const outcome = data.status === 'queued' || data.status === 'running' ? 'failed' : data.status;
  const announced = event('alert.investigation_finished', r.organizationId, {
    rule_id: notify.ruleId,
    rule_name: notify.ruleName,
    alert_event_id: notify.alertEventId,
    thread_id: r.threadId,
    outcome,
    run: data,
  });
  return { ...announced, notify: { endpointIds: notify.endpointIds, emails: notify.emails } };
}

const THREAD_STATUS = { [ThreadStatus.OPEN]: 'open', [ThreadStatus.RESOLVED]: 'resolved', [ThreadStatus.ARCHIVED]: 'archived' } as const;

export function threadEvent(type: 'thread.created' | 'thread.resolved', t: ThreadRecord): NewEvent {
  return event(type, t.organizationId, {
    id: t._id,
    title: t.title,
    status: THREAD_STATUS[t.status as keyof typeof THREAD_STATUS] ?? 'open',
    created_by: t.createdBy,
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
  });
}
