// Starting an execution's target. A run target creates a thread (its title from the template with
// the occurrence's local time) and queues a run on it through the very code CreateThread and
// CreateRun use; a playbook target does the same through StartPlaybookRun's (the version planned
// and checked before the thread is made); so the plan's runs_per_month and the run settings'
// limits apply, and a refusal is the execution's failure, with its message (job_execution.failed).
// Each step is recorded on the execution (a compare-and-set on its version) before the next, and a
// replica taking over an execution whose holder died adopts the thread and run already made, so an
// occurrence never starts two runs. A seeding target asks the brain's SeedingService for a run
// with the execution's id as the request id: a takeover's repeat gets the run already started.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { CreateRunRequestSchema } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import { CreateThreadRequestSchema } from '../../../gen/mindgate/agents/v1/threads_pb.js';
import { Namespace } from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { putWithEvents, type NewEvent } from '../../common/events/outbox.ts';
import { openingMessage, planPlaybookRun, queuePlaybookRun } from '../handlers/playbook-runs.ts';
import { createRun } from '../handlers/runs.ts';
import { createThread } from '../handlers/threads.ts';
import type { JobsContext } from './context.ts';
import { executionEvent, executionSubject } from './events.ts';
import {
  ExecutionOutcome,
  type ExecutionRecord,
  type JobRecord,
  type PlaybookTargetRecord,
  type RunTargetRecord,
  type SeedingTargetRecord,
} from './records.ts';
import { localTime } from './schedule.ts';

/** How long a replica holds a pending execution before another may take it over. */
export const EXECUTION_LEASE_MS = 60_000;

/** Saves the execution (with its events) if it is still at the version read; undefined when it is not (the lease was lost). */
async function save(
  ctx: JobsContext,
  e: ExecutionRecord,
  fields: Partial<ExecutionRecord>,
  events: (next: ExecutionRecord) => NewEvent[] = () => [],
): Promise<ExecutionRecord | undefined> {
  const next: ExecutionRecord = { ...e, ...fields, version: e.version + 1 };
  if (next.outcome !== ExecutionOutcome.PENDING) delete next.leaseUntil;
  const stored = await putWithEvents(ctx.outbox, executionSubject(ctx.executions), next, e, events(next), {
    expect: { version: e.version },
  });
  return stored ? next : undefined;
}

export const renderTitle = (template: string, at: number, timeZone: string) =>
  template.replaceAll('{occurrence}', localTime(at, timeZone)).slice(0, 200);

/** The execution's thread, made now unless an earlier holder made it. */
async function ensureThread(ctx: JobsContext, job: JobRecord, e: ExecutionRecord, title: string, message: string) {
  if (e.threadId !== '') return e;
  // Refused before a thread is made, so a job over its plan's limit leaves no empty threads.
  await ctx.runs.runLimit?.(job.organizationId);
  const { thread } = await createThread(
    ctx.runs.threads,
    create(CreateThreadRequestSchema, { organizationId: job.organizationId, title, message, createdBy: job._id }),
  );
  return save(ctx, e, { threadId: thread!.threadId });
}

/** The execution's run: found on its thread (a holder that died after queueing it but before recording it), or queued now. */
async function ensureRun(ctx: JobsContext, job: JobRecord, e: ExecutionRecord, queueRun: () => Promise<string>) {
  const { organizationId } = job;
  const made = e.runId === '' ? (await ctx.runs.runs.find({ organizationId, threadId: e.threadId }, { limit: 1 }))[0] : undefined;
  const runId = e.runId || made?._id || (await queueRun());
  return save(ctx, e, { runId, outcome: ExecutionOutcome.SUCCEEDED, error: '' });
}

async function startRun(ctx: JobsContext, job: JobRecord, target: RunTargetRecord, held: ExecutionRecord) {
  const title = renderTitle(target.titleTemplate, held.occurrenceAt, job.timeZone);
  const e = await ensureThread(ctx, job, held, title, target.message);
  if (!e) return undefined;
  return ensureRun(ctx, job, e, async () => {
    const { run } = await createRun(
      ctx.runs,
      create(CreateRunRequestSchema, {
        organizationId: job.organizationId,
        threadId: e.threadId,
        executor: target.executor,
        instructions: target.instructions,
        timeoutSeconds: target.timeoutSeconds,
        createdBy: job._id,
      }),
    );
    return run!.runId;
  });
}

async function startPlaybook(ctx: JobsContext, job: JobRecord, target: PlaybookTargetRecord, held: ExecutionRecord) {
  const { organizationId } = job;
  const choice = {
    organizationId,
    playbookId: target.playbookId,
    version: target.version,
    inputs: target.inputs,
    executor: target.executor,
  };
  const plan = await planPlaybookRun(ctx.playbooks, choice);
  const title = renderTitle(target.titleTemplate || `${plan.document.name} {occurrence}`, held.occurrenceAt, job.timeZone);
  const e = await ensureThread(ctx, job, held, title, openingMessage(plan.document, plan.version.version, target.inputs));
  if (!e) return undefined;
  return ensureRun(ctx, job, e, async () => {
    const spec = { organizationId, threadId: e.threadId, timeoutSeconds: target.timeoutSeconds, createdBy: job._id };
    return (await queuePlaybookRun(ctx.runs, plan, { ...spec, brainFeedback: target.brainFeedback }))._id;
  });
}

async function startSeeding(ctx: JobsContext, job: JobRecord, target: SeedingTargetRecord, held: ExecutionRecord) {
  if (!ctx.seeding) throw new ConnectError('seeding targets need the brain service (BRAIN_SERVICE_ADDR)', Code.FailedPrecondition);
  const { run } = await ctx.seeding().startSeeding({
    organizationId: job.organizationId,
    source: { case: 'url', value: target.url },
    namespace: target.namespace === 'episodes' ? Namespace.EPISODES : Namespace.KNOWLEDGE,
    keyPrefix: target.keyPrefix,
    tags: target.tags,
    writer: {
      clientId: `job:${job._id}`,
      clientName: `Scheduled job ${job.name}`,
      userId: job.createdBy.startsWith('usr_') ? job.createdBy : '',
    },
    requestId: held._id,
  });
  return save(ctx, held, { seedingRunId: run!.runId, outcome: ExecutionOutcome.SUCCEEDED, error: '' });
}

function startKind(ctx: JobsContext, job: JobRecord, held: ExecutionRecord): Promise<ExecutionRecord | undefined> {
  const target = job.target;
  switch (target.kind) {
    case 'run':
      return startRun(ctx, job, target, held);
    case 'playbook':
      return startPlaybook(ctx, job, target, held);
    case 'seeding':
      return startSeeding(ctx, job, target, held);
  }
}

/** The platform's answers that refuse the target; any other (a service or store that failed) is tried again. */
const REFUSALS = new Set([
  Code.InvalidArgument,
  Code.FailedPrecondition,
  Code.ResourceExhausted,
  Code.NotFound,
  Code.PermissionDenied,
  Code.OutOfRange,
  Code.AlreadyExists,
]);

/**
 * Starts the target of an execution this replica holds; the finished execution, or undefined when
 * the lease was lost meanwhile. A refusal of the platform (the plan's limit, a thread or run
 * setting out of range, a playbook or seeding URL it can no longer use) fails the execution; any
 * other error (the store, a service that did not answer) leaves it pending, for its lease to end
 * and a replica to try again.
 */
export async function startTarget(ctx: JobsContext, job: JobRecord, held: ExecutionRecord): Promise<ExecutionRecord | undefined> {
  try {
    return await startKind(ctx, job, held);
  } catch (err) {
    if (!(err instanceof ConnectError) || !REFUSALS.has(err.code)) throw err;
    const current = (await ctx.executions.get(held._id)) ?? held;
    if (current.outcome !== ExecutionOutcome.PENDING) return undefined;
    const fields = { outcome: ExecutionOutcome.FAILED, error: err.rawMessage };
    return save(ctx, current, fields, (next) => [executionEvent('job_execution.failed', job, next)]);
  }
}
