// The alerts' records and their collections: sources (with their sealed secret), rules, and alert
// events. An alert event's id is derived from its source, fingerprint and generation (how many
// times that fingerprint fired and resolved before), so replicas receiving the same alert insert
// the same id and the records store's insert-if-absent lets exactly one of them open it. A group's
// thread id is derived the same way from the group key, so one thread serves an open group.
import { createHash } from 'node:crypto';
import type { JsonObject } from '@bufbuild/protobuf';
import type { AlertFormat, AlertStatus, LabelMatcher_MatchOp } from '../../../gen/mindgate/agents/v1/alerts_pb.js';
import type { Executor } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import type { EventOutbox } from '../../common/events/outbox.ts';
import type { KeyEncryption } from '../../common/key-encryption.ts';
import type { RecordCollection, RecordDoc, RecordStore } from '../../common/storage/records/interface.ts';
import type { PlaybooksContext } from '../handlers/playbooks.ts';
import type { RunsContext } from '../handlers/runs.ts';
import type { EndpointRecord } from '../webhooks/records.ts';

export interface AlertSourceRecord extends RecordDoc {
  organizationId: string;
  name: string;
  format: AlertFormat;
  /** The secret, sealed under the KEK (context: alertSecretContext). */
  sealed: string;
  prefix: string;
  createdBy: string;
  createdAt: number;
  lastReceivedAt?: number;
  version: number;
}

export interface MatcherRecord {
  label: string;
  op: LabelMatcher_MatchOp;
  value: string;
}

/** The playbook a rule's runs follow (AlertPlaybook in alerts.proto). */
export interface AlertPlaybookRecord {
  playbookId: string;
  /** 0: the version published when the run is queued. */
  version: number;
  /** Given to every run; they win over the alert's fields. */
  inputs: JsonObject;
  brainFeedback: boolean;
}

/** The rule's action, by kind: new kinds are new members (the proto's oneof). */
export type ActionRecord = {
  kind: 'investigate';
  instructions: string;
  executor: Executor;
  timeoutSeconds: number;
  playbook?: AlertPlaybookRecord;
};

/** Who hears of a rule's investigations (AlertNotifications in alerts.proto). */
export interface NotificationsRecord {
  emails: string[];
  endpointIds: string[];
}

export interface AlertRuleRecord extends RecordDoc {
  organizationId: string;
  name: string;
  enabled: boolean;
  severities: string[];
  matchers: MatcherRecord[];
  sourceIds: string[];
  action: ActionRecord;
  /** Absent on rules stored before notifications existed: nobody. */
  notifications?: NotificationsRecord;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  version: number;
}

export interface AlertEventRecord extends RecordDoc {
  organizationId: string;
  sourceId: string;
  status: AlertStatus;
  title: string;
  severity: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  fingerprint: string;
  /** The fingerprint's occurrence: 1, then +1 after each resolution. */
  generation: number;
  groupKey: string;
  generatorUrl: string;
  count: number;
  threadId: string;
  runId: string;
  ruleId: string;
  acknowledgedBy: string;
  resolvedBy: string;
  note: string;
  /**
   * False until the investigation step is done (joined, opened, or nothing to do): a process that
   * died before it leaves it false, and the alert's next repeat does it.
   */
  attached: boolean;
  startsAt: number;
  lastSeenAt: number;
  endsAt?: number;
  acknowledgedAt?: number;
  snoozedBy?: string;
  snoozedUntil?: number;
  createdAt: number;
  version: number;
}

/**
 * The latest generation seen of a key (a fingerprint, a group): only a hint where to start
 * looking, so reading it stale costs a few more reads and never a wrong answer.
 */
export interface GenerationRecord extends RecordDoc {
  organizationId: string;
  generation: number;
}

export interface AlertCollections {
  sources: RecordCollection<AlertSourceRecord>;
  rules: RecordCollection<AlertRuleRecord>;
  events: RecordCollection<AlertEventRecord>;
  generations: RecordCollection<GenerationRecord>;
}

export interface AlertsContext extends AlertCollections {
  kek: KeyEncryption;
  /** The service's outbox: alert.received and alert.resolved go with their change. */
  outbox: EventOutbox;
  /** Threads and runs, so an investigation is opened through their code (and the run limit). */
  runs: RunsContext;
  /** Playbooks, which a rule's runs may follow. */
  playbooks: PlaybooksContext;
  /** The organization's webhook endpoints, which a rule may notify. */
  endpoints: RecordCollection<EndpointRecord>;
  now: () => number;
}

export function openAlertCollections(records: RecordStore): AlertCollections {
  return {
    sources: records.collection<AlertSourceRecord>('alert_sources', { indexes: [{ fields: ['organizationId', 'createdAt'] }] }),
    rules: records.collection<AlertRuleRecord>('alert_rules', { indexes: [{ fields: ['organizationId', 'createdAt'] }] }),
    events: records.collection<AlertEventRecord>('alert_events', {
      indexes: [
        { fields: ['organizationId', 'createdAt'] },
        { fields: ['organizationId', 'status', 'createdAt'] },
        { fields: ['organizationId', 'severity', 'createdAt'] },
        { fields: ['organizationId', 'sourceId', 'createdAt'] },
        { fields: ['organizationId', 'threadId', 'createdAt'] },
      ],
    }),
    generations: records.collection<GenerationRecord>('alert_generations', { indexes: [{ fields: ['organizationId'] }] }),
  };
}

export const alertSecretContext = (sourceId: string) => `alert_sources/${sourceId}/secret`;

const digest = (...parts: string[]) =>
  createHash('sha256').update(parts.join('\u0000')).digest('base64url').replace(/[-_]/g, 'x').slice(0, 32);

/** The id of the run an alert rule's thread gets: one, whoever opens or joins the thread. */
export const alertRunId = (threadId: string) => `run_${digest(threadId)}`;

/** The id of a key's generation hint. */
export const generationKey = (kind: 'fingerprint' | 'group', ...parts: string[]) => `${kind}_${digest(...parts)}`;

/** The id of the `generation`th occurrence of a fingerprint of a source. */
export const alertEventId = (sourceId: string, fingerprint: string, generation: number) =>
  `alrt_${digest(sourceId, fingerprint, String(generation))}`;

/** The id of the `generation`th thread of a group of an organization. */
export const groupThreadId = (organizationId: string, groupKey: string, generation: number) =>
  `thr_${digest(organizationId, groupKey, String(generation))}`;
