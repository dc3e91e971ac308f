// The jobs' webhook events, written to the agents service's outbox with the change that makes
// them (putWithEvents): job_execution.failed when an execution's target was refused (its error
// says why), job_execution.skipped when missed occurrences were recorded as skipped (policy skip),
// and job.backed_off when failures in a row make the job skip occurrences before it fires again.
import { event, type NewEvent } from '../../common/events/outbox.ts';
import type { RecordCollection } from '../../common/storage/records/interface.ts';
import { SUBJECTS } from '../events.ts';
import { ExecutionOutcome, ExecutionTrigger, type ExecutionRecord, type JobRecord } from './records.ts';

export const jobSubject = (records: RecordCollection<JobRecord>) => ({ collection: SUBJECTS.jobs, records });
export const executionSubject = (records: RecordCollection<ExecutionRecord>) => ({ collection: SUBJECTS.jobExecutions, records });

const iso = (ms: number) => new Date(ms).toISOString();
const orNull = (v: string | undefined) => (v ? v : null);

const OUTCOMES = {
  [ExecutionOutcome.PENDING]: 'pending',
  [ExecutionOutcome.SUCCEEDED]: 'succeeded',
  [ExecutionOutcome.FAILED]: 'failed',
  [ExecutionOutcome.SKIPPED]: 'skipped',
} as const;

export function executionEvent(type: 'job_execution.failed' | 'job_execution.skipped', job: JobRecord, e: ExecutionRecord): NewEvent {
  return event(type, e.organizationId, {
    id: e._id,
    job_id: job._id,
    job_name: job.name,
    trigger: e.trigger === ExecutionTrigger.MANUAL ? 'manual' : 'schedule',
    outcome: OUTCOMES[e.outcome as keyof typeof OUTCOMES] ?? 'failed',
    error: e.error,
    occurrence_at: iso(e.occurrenceAt),
    fired_at: iso(e.firedAt),
    occurrences: e.occurrences,
    thread_id: orNull(e.threadId),
    run_id: orNull(e.runId),
    seeding_run_id: orNull(e.seedingRunId),
  });
}

/** The job as it is after a failure that made it skip occurrences. */
export function backedOff(job: JobRecord): NewEvent {
  return event('job.backed_off', job.organizationId, {
    id: job._id,
    name: job.name,
    consecutive_failures: job.consecutiveFailures,
    backoff_skips: job.backoffSkips,
    last_error: job.lastError,
    next_fire_at: job.nextFireAt === undefined ? null : iso(job.nextFireAt),
  });
}
