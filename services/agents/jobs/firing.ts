// Firing one due occurrence of a job, on whichever replica gets there first. The occurrence's
// execution, inserted with insert-if-absent under an id derived from (job, occurrence), is the
// lease: the replica whose insert wins starts the target; the others see the execution and leave
// it (or take it over, by compare-and-set, once its holder's lease has ended without an outcome).
// The job then moves on to its next occurrence in a compare-and-set on its version that expects
// the occurrence just fired, so its state (failures, back-off, last execution) changes once.
//
// Missed occurrences: an occurrence found more than JOBS_MISSED_GRACE_SECONDS late (no replica ran,
// or the store was down) is missed, with every later one up to now. Under `skip` they are recorded
// as one skipped execution; under `run_once` one execution fires for the latest of them.
//
// Back-off: after k failed executions in a row, the job skips 2^(k-1) - 1 occurrences (at most
// MAX_BACKOFF_SKIPS) before it fires again: a failing hourly job tries again after 1, 2, 4, 8,
// then every 16 hours, until an execution succeeds.
//
// Events go with the writes that make them: job_execution.skipped with the skipped execution's
// insert, job.backed_off with the job's move after a failure that makes it skip occurrences
// (job_execution.failed is target.ts's).
import { putWithEvents } from '../../common/events/outbox.ts';
import type { JobsContext } from './context.ts';
import { backedOff, executionEvent, executionSubject, jobSubject } from './events.ts';
import {
  ExecutionOutcome,
  ExecutionTrigger,
  executionSummary,
  MissedPolicy,
  scheduledExecutionId,
  type ExecutionRecord,
  type JobRecord,
} from './records.ts';
import { MAX_COUNTED, nextAfter, occurrencesBetween } from './schedule.ts';
import { EXECUTION_LEASE_MS, startTarget } from './target.ts';

export const MAX_BACKOFF_SKIPS = 15;

export const backoffSkips = (failures: number) => (failures <= 0 ? 0 : Math.min(2 ** (failures - 1) - 1, MAX_BACKOFF_SKIPS));

/** The job's counters after an execution ended. */
export function afterExecution(job: JobRecord, e: ExecutionRecord): Partial<JobRecord> {
  const last = executionSummary(e);
  if (e.outcome === ExecutionOutcome.SUCCEEDED) return { lastExecution: last, consecutiveFailures: 0, lastError: '', backoffSkips: 0 };
  if (e.outcome !== ExecutionOutcome.FAILED) return { lastExecution: last };
  const consecutiveFailures = job.consecutiveFailures + 1;
  return { lastExecution: last, consecutiveFailures, lastError: e.error, backoffSkips: backoffSkips(consecutiveFailures) };
}

/** The occurrence to fire after `after`, skipping `skips` occurrences first. */
export function nextOccurrence(job: JobRecord, after: number, skips: number): number | undefined {
  let next = nextAfter(job, after);
  for (let i = 0; i < skips && next !== undefined; i++) next = nextAfter(job, next);
  return next;
}

/** The new execution of the occurrence `at`, as found `now`. */
function newExecution(ctx: JobsContext, job: JobRecord, at: number, now: number): ExecutionRecord {
  const base = { jobId: job._id, organizationId: job.organizationId, firedAt: now, trigger: ExecutionTrigger.SCHEDULE };
  const fields = { error: '', threadId: '', runId: '', version: 1 };
  const id = scheduledExecutionId(job._id, at);
  if (now - at <= ctx.config.missedGraceMs) {
    return {
      _id: id,
      ...base,
      ...fields,
      occurrenceAt: at,
      occurrences: 1,
      outcome: ExecutionOutcome.PENDING,
      leaseUntil: now + EXECUTION_LEASE_MS,
    };
  }
  const missed = occurrencesBetween(job, at - 1, now);
  const count = Math.max(missed.count, 1);
  const since = new Date(at).toISOString();
  if (job.missedPolicy === MissedPolicy.RUN_ONCE) {
    return {
      _id: id,
      ...base,
      ...fields,
      occurrenceAt: missed.latest ?? at,
      occurrences: count,
      outcome: ExecutionOutcome.PENDING,
      leaseUntil: now + EXECUTION_LEASE_MS,
    };
  }
  const error = `missed ${count}${count >= MAX_COUNTED ? ' or more' : ''} occurrence(s) from ${since}: no scheduler fired them in time (policy skip)`;
  return { _id: id, ...base, ...fields, error, occurrenceAt: at, occurrences: count, outcome: ExecutionOutcome.SKIPPED };
}

/** The execution of the occurrence when this replica may act on it: it inserted it, took it over, or it is finished. */
async function hold(ctx: JobsContext, job: JobRecord, at: number, now: number): Promise<ExecutionRecord | undefined> {
  const fresh = newExecution(ctx, job, at, now);
  const events = fresh.outcome === ExecutionOutcome.SKIPPED ? [executionEvent('job_execution.skipped', job, fresh)] : [];
  if (await putWithEvents(ctx.outbox, executionSubject(ctx.executions), fresh, undefined, events, { expect: null })) return fresh;
  const found = await ctx.executions.get(fresh._id);
  if (!found) return undefined;
  if (found.outcome !== ExecutionOutcome.PENDING) return found;
  if ((found.leaseUntil ?? 0) > now) return undefined;
  const taken: ExecutionRecord = { ...found, leaseUntil: now + EXECUTION_LEASE_MS, version: found.version + 1 };
  return (await ctx.executions.put(taken, { expect: { version: found.version } })) ? taken : undefined;
}

/** Moves the job past the occurrence `at` with the execution's outcome; nothing when it already moved. */
async function advance(ctx: JobsContext, read: JobRecord, at: number, e: ExecutionRecord): Promise<void> {
  let job: JobRecord | undefined = read;
  for (let tries = 0; job && job.nextFireAt === at && tries < 5; tries++) {
    const state = afterExecution(job, e);
    const nextFireAt = nextOccurrence(job, Math.max(ctx.now(), e.occurrenceAt, at), state.backoffSkips ?? job.backoffSkips);
    const next: JobRecord = { ...job, ...state, nextFireAt, version: job.version + 1 };
    // A failure that makes the job skip occurrences says so (job.backed_off), with the job's move.
    const events = e.outcome === ExecutionOutcome.FAILED && next.backoffSkips > 0 ? [backedOff(next)] : [];
    if (await putWithEvents(ctx.outbox, jobSubject(ctx.jobs), next, job, events, { expect: { version: job.version } })) return;
    // Changed meanwhile (renamed, a manual trigger's counters): apply to what it is now.
    job = await ctx.jobs.get(read._id);
  }
}

/** Fires the job's due occurrence if this replica wins it. */
export async function fireDue(ctx: JobsContext, job: JobRecord): Promise<void> {
  const at = job.nextFireAt;
  if (at === undefined) return;
  const held = await hold(ctx, job, at, ctx.now());
  if (!held) return;
  const started = held.outcome === ExecutionOutcome.PENDING;
  const done = started ? await startTarget(ctx, job, held) : held;
  if (!done) return;
  if (started) ctx.logger.debug({ job: job._id, execution: done._id, outcome: ExecutionOutcome[done.outcome] }, 'job occurrence fired');
  await advance(ctx, job, at, done);
}
