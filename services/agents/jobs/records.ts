// The jobs' records: `jobs` (settings and state, in one document changed by compare-and-set on
// its version) and `job_executions`. A scheduled execution's id is derived from (job, occurrence),
// so inserting it with insert-if-absent is the lease on that occurrence: one replica wins it.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import {
  ExecutionOutcome,
  ExecutionTrigger,
  JobExecutionSchema,
  JobSchema,
  MissedPolicy,
  type Job,
  type JobExecution,
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
  target: RunTargetRecord;
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
    run,
  });
}

export function toJob(r: JobRecord): Job {
  const { kind: _kind, ...run } = r.target;
  const last = r.lastExecution;
  return create(JobSchema, {
    jobId: r._id,
    organizationId: r.organizationId,
    name: r.name,
    schedule: r.schedule,
    timeZone: r.timeZone,
    target: { kind: { case: 'run', value: run } },
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
