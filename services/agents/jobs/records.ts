// The jobs' records: `jobs` (settings and state, in one document changed by compare-and-set on
// its version) and `job_executions`. A scheduled execution's id is derived from (job, occurrence),
// so inserting it with insert-if-absent is the lease on that occurrence: one replica wins it.
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import {
  ExecutionOutcome,
  ExecutionTrigger,
  JobExecutionSchema,
  JobSchema,
  MissedPolicy,
  PlaybookTargetSchema,
  RunTargetSchema,
  SeedingTargetSchema,
  type Job,
  type JobExecution,
  type JobTarget,
} from '../../../gen/mindgate/agents/v1/jobs_pb.js';
import type { Executor, Run } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import type { RecordCollection, RecordDoc, RecordStore } from '../../common/storage/records/interface.ts';

/** A run on a new thread (RunTarget in jobs.proto). */
export interface RunTargetRecord {
  kind: 'run';
  titleTemplate: string;
  message: string;
  instructions: string;
  executor: Executor;
  timeoutSeconds: number;
}

/** A playbook run on a new thread (PlaybookTarget in jobs.proto). */
export interface PlaybookTargetRecord {
  kind: 'playbook';
  playbookId: string;
  /** 0: the version published when the occurrence fires. */
  version: number;
  inputs: JsonObject;
  /** '' for the playbook's name and the occurrence. */
  titleTemplate: string;
  executor: Executor;
  timeoutSeconds: number;
  brainFeedback: boolean;
}

/** A seeding run of the Brain from a web page (SeedingTarget in jobs.proto). */
export interface SeedingTargetRecord {
  kind: 'seeding';
  url: string;
  namespace: 'knowledge' | 'episodes';
  keyPrefix: string;
  tags: string[];
}

export type TargetRecord = RunTargetRecord | PlaybookTargetRecord | SeedingTargetRecord;

export interface ExecutionFields {
  jobId: string;
  organizationId: string;
  occurrenceAt: number;
  firedAt: number;
  trigger: ExecutionTrigger;
  outcome: ExecutionOutcome;
  error: string;
  occurrences: number;
  threadId: string;
  runId: string;
  /** The seeding run a seeding target started (absent on executions of other targets). */
  seedingRunId?: string;
}

export interface ExecutionRecord extends RecordDoc, ExecutionFields {
  /** While pending: until when the replica that holds it works on it; another takes it over after. */
  leaseUntil?: number;
  version: number;
}

export interface JobRecord extends RecordDoc {
  organizationId: string;
  name: string;
  schedule: string;
  timeZone: string;
  target: TargetRecord;
  enabled: boolean;
  missedPolicy: MissedPolicy;
  /** The occurrence the scheduler fires next; absent while paused. Indexed: the scheduler's queue. */
  nextFireAt?: number;
  lastExecution?: ExecutionFields & { _id: string };
  consecutiveFailures: number;
  lastError: string;
  backoffSkips: number;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  version: number;
}

export interface JobCollections {
  jobs: RecordCollection<JobRecord>;
  executions: RecordCollection<ExecutionRecord>;
}

export function openJobCollections(records: RecordStore): JobCollections {
  return {
    jobs: records.collection<JobRecord>('jobs', { indexes: [{ fields: ['nextFireAt'] }, { fields: ['organizationId', 'createdAt'] }] }),
    executions: records.collection<ExecutionRecord>('job_executions', {
      indexes: [{ fields: ['jobId', 'firedAt'] }, { fields: ['organizationId'] }],
    }),
  };
}

/** The execution id of a job's scheduled occurrence: the same on every replica. */
export const scheduledExecutionId = (jobId: string, occurrenceAt: number) => `exe_${jobId.slice(4)}_${occurrenceAt.toString(36)}`;

const ms = (t: number | undefined) => (t === undefined ? undefined : timestampFromMs(t));

export function toExecution(r: ExecutionFields & { _id: string }, run?: Run): JobExecution {
  return create(JobExecutionSchema, {
    executionId: r._id,
    jobId: r.jobId,
    occurrenceTime: timestampFromMs(r.occurrenceAt),
    fireTime: timestampFromMs(r.firedAt),
    trigger: r.trigger,
    outcome: r.outcome,
    error: r.error,
    occurrences: r.occurrences,
    threadId: r.threadId,
    runId: r.runId,
    seedingRunId: r.seedingRunId ?? '',
    run,
  });
}

function toTarget(t: TargetRecord): JobTarget['kind'] {
  switch (t.kind) {
    case 'run': {
      const { kind: _kind, ...run } = t;
      return { case: 'run', value: create(RunTargetSchema, run) };
    }
    case 'playbook': {
      const { kind: _kind, ...playbook } = t;
      return { case: 'playbook', value: create(PlaybookTargetSchema, playbook) };
    }
    case 'seeding': {
      const { kind: _kind, namespace, ...seeding } = t;
      return { case: 'seeding', value: create(SeedingTargetSchema, { ...seeding, namespace: namespace === 'knowledge' ? '' : namespace }) };
    }
  }
}

export function toJob(r: JobRecord): Job {
  const last = r.lastExecution;
  return create(JobSchema, {
    jobId: r._id,
    organizationId: r.organizationId,
    name: r.name,
    schedule: r.schedule,
    timeZone: r.timeZone,
    target: { kind: toTarget(r.target) },
    enabled: r.enabled,
    missedPolicy: r.missedPolicy,
    state: {
      nextFireTime: ms(r.nextFireAt),
      lastExecution: last ? toExecution(last) : undefined,
      consecutiveFailures: r.consecutiveFailures,
      lastError: r.lastError,
      backoffSkips: r.backoffSkips,
    },
    createdBy: r.createdBy,
    etag: String(r.version),
    createTime: timestampFromMs(r.createdAt),
    updateTime: timestampFromMs(r.updatedAt),
  });
}

/** What a job record keeps of an execution (its lease and version are the execution's own business). */
export function executionSummary(e: ExecutionRecord): ExecutionFields & { _id: string } {
  const { leaseUntil: _lease, version: _version, ...fields } = e;
  return fields;
}

export const PENDING = ExecutionOutcome.PENDING;
export { ExecutionOutcome, ExecutionTrigger, MissedPolicy };
