// Starting an execution's target. A run target creates a thread (its title from the template with
// the occurrence's local time) and queues a run on it through the very code CreateThread and
// CreateRun use, so the plan's runs_per_month and the run settings' limits apply; a refusal is the
// execution's failure, with its message. Each step is recorded on the execution (a compare-and-set
// on its version) before the next, and a replica taking over an execution whose holder died adopts
// the thread and run already made, so an occurrence never starts two runs.
import { create } from '@bufbuild/protobuf';
import { ConnectError } from '@connectrpc/connect';
import { CreateRunRequestSchema } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import { CreateThreadRequestSchema } from '../../../gen/mindgate/agents/v1/threads_pb.js';
import { createRun } from '../handlers/runs.ts';
import { createThread } from '../handlers/threads.ts';
import type { JobsContext } from './context.ts';
import { ExecutionOutcome, type ExecutionRecord, type JobRecord } from './records.ts';
import { localTime } from './schedule.ts';

/** How long a replica holds a pending execution before another may take it over. */
export const EXECUTION_LEASE_MS = 60_000;

/** Saves the execution if it is still at the version read; undefined when it is not (the lease was lost). */
async function save(ctx: JobsContext, e: ExecutionRecord, fields: Partial<ExecutionRecord>): Promise<ExecutionRecord | undefined> {
  const next: ExecutionRecord = { ...e, ...fields, version: e.version + 1 };
  if (next.outcome !== ExecutionOutcome.PENDING) delete next.leaseUntil;
  return (await ctx.executions.put(next, { expect: { version: e.version } })) ? next : undefined;
}

export const renderTitle = (template: string, at: number, timeZone: string) =>
  template.replaceAll('{occurrence}', localTime(at, timeZone)).slice(0, 200);

async function startRun(ctx: JobsContext, job: JobRecord, held: ExecutionRecord): Promise<ExecutionRecord | undefined> {
  const { organizationId } = job;
  const target = job.target;
  let e: ExecutionRecord | undefined = held;
  if (e.threadId === '') {
    // Refused before a thread is made, so a job over its plan's limit leaves no empty threads.
    await ctx.runs.runLimit?.(organizationId);
    const { thread } = await createThread(
      ctx.runs.threads,
      create(CreateThreadRequestSchema, {
        organizationId,
        title: renderTitle(target.titleTemplate, e.occurrenceAt, job.timeZone),
        message: target.message,
        createdBy: job._id,
      }),
    );
    e = await save(ctx, e, { threadId: thread!.threadId });
    if (!e) return undefined;
  }
  // A holder that died after queueing the run but before recording it left the run on the thread.
  const made = e.runId === '' ? (await ctx.runs.runs.find({ organizationId, threadId: e.threadId }, { limit: 1 }))[0] : undefined;
  let runId = e.runId || made?._id || '';
  if (runId === '') {
    const { run } = await createRun(
      ctx.runs,
      create(CreateRunRequestSchema, {
        organizationId,
        threadId: e.threadId,
        executor: target.executor,
        instructions: target.instructions,
        timeoutSeconds: target.timeoutSeconds,
        createdBy: job._id,
      }),
    );
    runId = run!.runId;
  }
  return save(ctx, e, { runId, outcome: ExecutionOutcome.SUCCEEDED, error: '' });
}

/**
 * Starts the target of an execution this replica holds; the finished execution, or undefined when
 * the lease was lost meanwhile. A refusal of the platform (a ConnectError: the plan's limit, a
 * thread or run setting out of range) fails the execution; any other error (the store) leaves it
 * pending, for its lease to end and a replica to try again.
 */
export async function startTarget(ctx: JobsContext, job: JobRecord, held: ExecutionRecord): Promise<ExecutionRecord | undefined> {
  try {
    return await startRun(ctx, job, held);
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    const current = (await ctx.executions.get(held._id)) ?? held;
    if (current.outcome !== ExecutionOutcome.PENDING) return undefined;
    return save(ctx, current, { outcome: ExecutionOutcome.FAILED, error: err.rawMessage });
  }
}
