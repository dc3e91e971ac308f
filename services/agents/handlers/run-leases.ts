// The executor's side of runs: claim with a lease, heartbeat, report steps, complete. A claim is a
// compare-and-set on the run's version that gives it a new lease id and moves `dueAt` to the end
// of the lease, so exactly one executor holds a run, and one that dies leaves the lease to expire
// for another to take over (with the steps already recorded, so it resumes instead of starting
// over). Every later call names the lease; a holder whose lease expired, was taken over or ended
// with the run is refused (lease-lost) and must stop. A step is written under its index with
// insert-if-absent, so no step is ever recorded twice. A claim writes run.started (with the
// attempt) in its compare-and-set; heartbeats and steps write no event.
import { create, type JsonObject } from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { Code } from '@connectrpc/connect';
import { randomUUID } from 'node:crypto';
import {
  ClaimRunResponseSchema,
  CompleteRunResponseSchema,
  Executor,
  HeartbeatRunResponseSchema,
  ReportStepResponseSchema,
  RunStatus,
  StepKind,
  type ClaimRunRequest,
  type CompleteRunRequest,
  type HeartbeatRunRequest,
  type ReportStepRequest,
} from '../../../gen/mindgate/agents/v1/runs_pb.js';
import { MessageRole } from '../../../gen/mindgate/agents/v1/threads_pb.js';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import type { Filter } from '../../common/storage/records/interface.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { finish, FINISHED, ownedRun, putRun, toRun, toStep, type RunRecord, type RunsContext, type StepRecord } from './runs.ts';
import { recordWrittenMemory } from './thread-memories.ts';
import { appendMessage, MAX_CONTENT, ownedThread, toMessage } from './threads.ts';

const AGENT_ID = /^[A-Za-z0-9._:@-]{1,200}$/;
const CLAIM_BATCH = 10;
/** Batches a claim looks at before it says the queue is empty (each lost only to other claimers). */
const CLAIM_ROUNDS = 5;
const MESSAGES_GIVEN = 200;

function leaseMs(seconds: number): number {
  if (seconds === 0) return 60_000;
  if (seconds < 5 || seconds > 3_600) invalid('lease_seconds', 'must be from 5 to 3600 (0 for 60)');
  return seconds * 1000;
}

const lost = (why: string) =>
  failure(`the lease on this run is lost (${why}): stop working on it`, Code.FailedPrecondition, REASONS.leaseLost);

/** The run, if the caller still holds its lease; a run past its deadline is timed out on the way. */
async function held(ctx: RunsContext, organizationId: string, runId: string, leaseId: string): Promise<RunRecord> {
  const run = await ownedRun(ctx, requireOrganization(organizationId), runId);
  if (run.status !== RunStatus.RUNNING || run.leaseId !== leaseId)
    throw lost(FINISHED.has(run.status) ? 'the run has finished' : 'another claim holds it');
  if ((run.leaseExpiresAt ?? 0) <= ctx.now()) throw lost('it expired');
  if (run.deadlineAt <= ctx.now()) {
    await finish(ctx, run, RunStatus.TIMED_OUT, { error: `timed out after ${run.timeoutSeconds} s` });
    throw lost('the run timed out');
  }
  return run;
}

/** Moves the run one version on (extending the lease), or refuses when someone else moved it first. */
async function advance(ctx: RunsContext, run: RunRecord, fields: Partial<RunRecord>, lease: number): Promise<RunRecord> {
  const leaseExpiresAt = ctx.now() + lease;
  const next: RunRecord = { ...run, ...fields, leaseExpiresAt, dueAt: leaseExpiresAt, version: run.version + 1 };
  if (!(await ctx.runs.put(next, { expect: { version: run.version } }))) throw lost('the run changed under it');
  return next;
}

async function tryClaim(ctx: RunsContext, run: RunRecord, agentId: string, lease: number) {
  const now = ctx.now();
  if (run.deadlineAt <= now) {
    await finish(ctx, run, RunStatus.TIMED_OUT, { error: `timed out after ${run.timeoutSeconds} s` });
    return undefined;
  }
  const claimed: RunRecord = {
    ...run,
    status: RunStatus.RUNNING,
    agentId,
    attempt: run.attempt + 1,
    leaseId: randomUUID(),
    leaseExpiresAt: now + lease,
    dueAt: now + lease,
    startedAt: run.startedAt ?? now,
    version: run.version + 1,
  };
  return (await putRun(ctx, claimed, run, { expect: { version: run.version } })) ? claimed : undefined;
}

/** Claims the oldest claimable run; another batch when every one of this batch went to a quicker claimer. */
async function claimNext(ctx: RunsContext, queue: Filter, agentId: string, lease: number): Promise<RunRecord | undefined> {
  for (let round = 0; round < CLAIM_ROUNDS; round += 1) {
    const due = await ctx.runs.find(
      { ...queue, dueAt: { $lte: ctx.now() } },
      { sort: { field: 'dueAt', direction: 'asc' }, limit: CLAIM_BATCH },
    );
    for (const candidate of due) {
      const run = await tryClaim(ctx, candidate, agentId, lease);
      if (run) return run;
    }
    if (due.length === 0) return undefined;
  }
  return undefined;
}

/** Which runs a claimer may take: the platform runners' of every organization, or an organization's external ones. */
function queueOf(req: ClaimRunRequest): Filter {
  const executor = req.executor === Executor.UNSPECIFIED ? Executor.LLM : req.executor;
  if (executor === Executor.LLM || executor === Executor.PLAYBOOK) {
    if (req.organizationId !== '') invalid('organization_id', "must be empty for the platform's runners, which serve every organization");
    return { executor };
  }
  if (executor !== Executor.EXTERNAL) invalid('executor', 'is not an executor');
  return { executor, organizationId: requireOrganization(req.organizationId) };
}

export async function claimRun(ctx: RunsContext, req: ClaimRunRequest) {
  if (!AGENT_ID.test(req.agentId)) invalid('agent_id', 'must be 1-200 characters of [A-Za-z0-9._:@-]');
  const queue = queueOf(req);
  const run = await claimNext(ctx, queue, req.agentId, leaseMs(req.leaseSeconds));
  if (!run) return create(ClaimRunResponseSchema, {});
  const thread = await ownedThread(ctx.threads, run.organizationId, run.threadId);
  const steps = await ctx.steps.find({ runId: run._id }, { sort: { field: 'index', direction: 'asc' } });
  const latest = await ctx.threads.messages.find(
    { threadId: thread._id },
    { sort: { field: 'seq', direction: 'desc' }, limit: MESSAGES_GIVEN },
  );
  return create(ClaimRunResponseSchema, {
    run: toRun(run),
    leaseId: run.leaseId,
    steps: steps.map(toStep),
    messages: latest.reverse().map(toMessage),
  });
}

export async function heartbeatRun(ctx: RunsContext, req: HeartbeatRunRequest) {
  const lease = leaseMs(req.leaseSeconds);
  const run = await held(ctx, req.organizationId, req.runId, req.leaseId);
  return create(HeartbeatRunResponseSchema, { run: toRun(await advance(ctx, run, {}, lease)) });
}

function stepOf(run: RunRecord, req: ReportStepRequest, now: number): StepRecord {
  if (!(req.kind in StepKind) || req.kind === StepKind.UNSPECIFIED) invalid('kind', 'is not a step kind');
  return {
    _id: `${run._id}/${String(run.stepCount).padStart(6, '0')}`,
    runId: run._id,
    organizationId: run.organizationId,
    index: run.stepCount,
    kind: req.kind,
    name: requireText('name', req.name, 200, { required: true }),
    ok: req.ok,
    arguments: (req.arguments ?? {}) as JsonObject,
    result: (req.result ?? {}) as JsonObject,
    error: requireText('error', req.error, 10_000),
    inputTokens: Number(req.inputTokens),
    outputTokens: Number(req.outputTokens),
    attempt: run.attempt,
    startedAt: req.startTime ? timestampMs(req.startTime) : now,
    finishedAt: now,
  };
}

export async function reportStep(ctx: RunsContext, req: ReportStepRequest) {
  const lease = leaseMs(req.leaseSeconds);
  const run = await held(ctx, req.organizationId, req.runId, req.leaseId);
  const step = stepOf(run, req, ctx.now());
  // Before the step: a write the Brain has made is the thread's even if the step is never recorded
  // (the holder dies first, or loses the lease); the takeover's record of it is the same one.
  await recordWrittenMemory(ctx.threads, run.threadId, step);
  if (!(await ctx.steps.put(step, { expect: null }))) throw lost('another claim recorded this step');
  const counted = step.kind === StepKind.MODEL_CALL ? 0 : 1;
  const next = await advance(
    ctx,
    run,
    {
      stepCount: run.stepCount + 1,
      inputTokens: run.inputTokens + step.inputTokens,
      outputTokens: run.outputTokens + step.outputTokens,
      toolCalls: run.toolCalls + counted,
      model: req.model === '' ? run.model : requireText('model', req.model, 200),
    },
    lease,
  ).catch(async (err: unknown) => {
    // The run moved on without this step (cancelled, taken over): take the step back out.
    await ctx.steps.delete(step._id);
    throw err;
  });
  return create(ReportStepResponseSchema, { run: toRun(next), step: toStep(step) });
}

export async function completeRun(ctx: RunsContext, req: CompleteRunRequest) {
  if (req.status !== RunStatus.SUCCEEDED && req.status !== RunStatus.FAILED) invalid('status', 'must be succeeded or failed');
  const output = requireText('output', req.output, MAX_CONTENT);
  const error = requireText('error', req.error, 10_000);
  const run = await held(ctx, req.organizationId, req.runId, req.leaseId);
  const done = await finish(ctx, run, req.status, { output, error });
  if (!done) throw lost('the run changed under it');
  const text = req.status === RunStatus.SUCCEEDED ? output : `The run failed: ${error}`;
  if (text.trim() !== '') {
    const thread = await ownedThread(ctx.threads, run.organizationId, run.threadId);
    // A fixed id: the conclusion is posted once, however often this is retried.
    await appendMessage(ctx.threads, thread, {
      id: `msg_${run._id}`,
      role: MessageRole.AGENT,
      content: text,
      author: run.agentId,
      runId: run._id,
    });
  }
  return create(CompleteRunResponseSchema, { run: toRun(done) });
}
