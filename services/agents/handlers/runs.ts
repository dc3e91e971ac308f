// Runs: an agent working on a thread, and the steps it took. A run is a record in `runs` whose
// `dueAt` says when an executor may claim it: its creation for a queued run, the end of the lease
// for a running one, absent once it finished. Every change is a compare-and-set on the run's
// version, so a claim, a step report, a cancellation and a completion racing each other apply
// one at a time (run-leases.ts holds the executor side). Each move of the run's status writes its
// run.* event to the outbox in that same compare-and-set (putWithEvents): queued, started (a
// claim), succeeded, failed, cancelled, timed out.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import type { JsonObject } from '@bufbuild/protobuf';
import {
  CancelRunResponseSchema,
  CreateRunResponseSchema,
  GetRunResponseSchema,
  ListRunsResponseSchema,
  ListStepsResponseSchema,
  RetryRunResponseSchema,
  Executor,
  RunSchema,
  RunStatus,
  StepSchema,
  type CancelRunRequest,
  type CreateRunRequest,
  type GetRunRequest,
  type ListRunsRequest,
  type ListStepsRequest,
  type RetryRunRequest,
  type Run,
  type Step,
  type StepKind,
} from '../../../gen/mindgate/agents/v1/runs_pb.js';
import { putWithEvents, type EventOutbox, type NewEvent } from '../../common/events/outbox.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { PutOptions, RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { investigationFinished, runEvent, runSubject } from '../events.ts';
import { newId } from './organizations.ts';
import { ownedThread, type ThreadsContext } from './threads.ts';

const RUN_ID = /^run_[A-Za-z0-9]{1,60}$/;

export interface RunRecord extends RecordDoc {
  organizationId: string;
  threadId: string;
  status: RunStatus;
  executor: Executor;
  instructions: string;
  agentId: string;
  attempt: number;
  leaseId?: string;
  leaseExpiresAt?: number;
  /** When an executor may claim it; absent once it finished. */
  dueAt?: number;
  timeoutSeconds: number;
  /** createdAt + timeoutSeconds: past it, the run is timed out. */
  deadlineAt: number;
  inputTokens: number;
  outputTokens: number;
  toolCalls: number;
  output: string;
  error: string;
  stepCount: number;
  createdBy: string;
  /** The run this one retries, or ''. */
  retryOf?: string;
  /** The playbook and version it follows, and the inputs given (StartPlaybookRun). */
  playbookId?: string;
  playbookVersion?: number;
  inputs?: JsonObject;
  /** Report the outcome to the Brain as feedback on the memories the run read. */
  brainFeedback?: boolean;
  /** An alert rule's run: whom its end is announced to (alert.investigation_finished). */
  notify?: RunNotify;
  model: string;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  version: number;
}

/** The alert rule whose investigation a run works, and the rule's notification channels then. */
export interface RunNotify {
  ruleId: string;
  ruleName: string;
  alertEventId: string;
  endpointIds: string[];
  emails: string[];
}

export interface StepRecord extends RecordDoc {
  runId: string;
  organizationId: string;
  index: number;
  kind: StepKind;
  name: string;
  ok: boolean;
  arguments: JsonObject;
  result: JsonObject;
  error: string;
  inputTokens: number;
  outputTokens: number;
  attempt: number;
  startedAt: number;
  finishedAt: number;
}

export interface RunsContext {
  runs: RecordCollection<RunRecord>;
  steps: RecordCollection<StepRecord>;
  threads: ThreadsContext;
  /** The service's outbox, which run.* events are written to with their change. */
  events: EventOutbox;
  now: () => number;
  /** The plan's runs_per_month (run-limit.ts); absent: no limit (a module built without billing). */
  runLimit?: (organizationId: string) => Promise<void>;
}

export const FINISHED = new Set([RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED, RunStatus.TIMED_OUT]);

const ms = (t: number | undefined) => (t === undefined ? undefined : timestampFromMs(t));

export function toRun(r: RunRecord): Run {
  const end = r.finishedAt ?? 0;
  return create(RunSchema, {
    runId: r._id,
    organizationId: r.organizationId,
    threadId: r.threadId,
    status: r.status,
    executor: r.executor,
    instructions: r.instructions,
    agentId: r.agentId,
    attempt: r.attempt,
    leaseExpireTime: r.status === RunStatus.RUNNING ? ms(r.leaseExpiresAt) : undefined,
    timeoutSeconds: r.timeoutSeconds,
    usage: {
      inputTokens: BigInt(r.inputTokens),
      outputTokens: BigInt(r.outputTokens),
      toolCalls: r.toolCalls,
      durationMs: BigInt(r.startedAt !== undefined && end > 0 ? end - r.startedAt : 0),
    },
    output: r.output,
    error: r.error,
    stepCount: r.stepCount,
    createdBy: r.createdBy,
    retryOf: r.retryOf ?? '',
    playbookId: r.playbookId ?? '',
    playbookVersion: r.playbookVersion ?? 0,
    inputs: r.inputs,
    brainFeedback: r.brainFeedback ?? false,
    model: r.model,
    etag: String(r.version),
    createTime: timestampFromMs(r.createdAt),
    startTime: ms(r.startedAt),
    finishTime: ms(r.finishedAt),
  });
}

export const toStep = (r: StepRecord): Step =>
  create(StepSchema, {
    runId: r.runId,
    index: r.index,
    kind: r.kind,
    name: r.name,
    ok: r.ok,
    arguments: r.arguments,
    result: r.result,
    error: r.error,
    inputTokens: BigInt(r.inputTokens),
    outputTokens: BigInt(r.outputTokens),
    attempt: r.attempt,
    startTime: timestampFromMs(r.startedAt),
    finishTime: timestampFromMs(r.finishedAt),
  });

/** The run, when it is one of the organization's; NOT_FOUND otherwise (another tenant's too). */
export async function ownedRun(ctx: RunsContext, organizationId: string, runId: string): Promise<RunRecord> {
  if (!RUN_ID.test(runId)) invalid('run_id', 'is not a run id');
  const run = await ctx.runs.get(runId);
  if (!run || run.organizationId !== organizationId) throw new ConnectError(`run "${runId}" does not exist`, Code.NotFound);
  return run;
}

export interface NewRun {
  /** A fixed id: queued only if no run has it (an alert's investigation); a new one otherwise. */
  id?: string;
  organizationId: string;
  threadId: string;
  executor: Executor;
  instructions: string;
  timeoutSeconds: number;
  createdBy: string;
  retryOf?: string;
  playbookId?: string;
  playbookVersion?: number;
  inputs?: JsonObject;
  brainFeedback?: boolean;
  notify?: RunNotify;
  /** Events written with the run's insert besides run.queued (an alert rule's announcement). */
  events?: NewEvent[];
}

/** Queues a run under the plan's run limit (RESOURCE_EXHAUSTED, reason plan-limit, past it). */
export async function queue(ctx: RunsContext, { id, events, ...spec }: NewRun): Promise<RunRecord> {
  await ctx.runLimit?.(spec.organizationId);
  const now = ctx.now();
  const run: RunRecord = {
    _id: id ?? newId('run'),
    ...spec,
    status: RunStatus.QUEUED,
    agentId: '',
    attempt: 0,
    dueAt: now,
    deadlineAt: now + spec.timeoutSeconds * 1000,
    inputTokens: 0,
    outputTokens: 0,
    toolCalls: 0,
    output: '',
    error: '',
    stepCount: 0,
    model: '',
    createdAt: now,
    version: 1,
  };
  await putRun(ctx, run, undefined, { expect: null }, events);
  return run;
}

export async function createRun(ctx: RunsContext, req: CreateRunRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const thread = await ownedThread(ctx.threads, organizationId, req.threadId);
  const timeoutSeconds = req.timeoutSeconds === 0 ? 3_600 : req.timeoutSeconds;
  if (timeoutSeconds > 86_400) invalid('timeout_seconds', 'must be from 1 to 86400 (0 for 3600)');
  const executor = req.executor === Executor.UNSPECIFIED ? Executor.LLM : req.executor;
  if (!(executor in Executor)) invalid('executor', 'is not an executor');
  if (executor === Executor.PLAYBOOK) invalid('executor', 'is for runs of a playbook (StartPlaybookRun)');
  const run = await queue(ctx, {
    organizationId,
    threadId: thread._id,
    executor,
    instructions: requireText('instructions', req.instructions, 20_000),
    timeoutSeconds,
    createdBy: requireText('created_by', req.createdBy, 200),
    brainFeedback: req.brainFeedback,
  });
  return create(CreateRunResponseSchema, { run: toRun(run) });
}

export async function retryRun(ctx: RunsContext, req: RetryRunRequest) {
  const previous = await ownedRun(ctx, requireOrganization(req.organizationId), req.runId);
  if (!FINISHED.has(previous.status)) {
    throw failure('the run is still queued or running: cancel it first, or wait for it', Code.FailedPrecondition, REASONS.runActive);
  }
  const { organizationId, threadId, executor, instructions, timeoutSeconds, playbookId, playbookVersion, inputs, brainFeedback } = previous;
  const createdBy = requireText('created_by', req.createdBy, 200);
  const playbook = { playbookId, playbookVersion, inputs, brainFeedback };
  const run = await queue(ctx, {
    organizationId,
    threadId,
    executor,
    instructions,
    timeoutSeconds,
    createdBy,
    retryOf: previous._id,
    ...playbook,
  });
  return create(RetryRunResponseSchema, { run: toRun(run) });
}

export async function getRun(ctx: RunsContext, req: GetRunRequest) {
  const run = await ownedRun(ctx, requireOrganization(req.organizationId), req.runId);
  return create(GetRunResponseSchema, { run: toRun(run) });
}

export async function listRuns(ctx: RunsContext, req: ListRunsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const filter: Record<string, string | number> = { organizationId };
  if (req.threadId !== '') filter.threadId = (await ownedThread(ctx.threads, organizationId, req.threadId))._id;
  if (req.status !== RunStatus.UNSPECIFIED) {
    if (!(req.status in RunStatus)) invalid('status', 'is not a run status');
    filter.status = req.status;
  }
  const scope = `runs:${organizationId}:${req.threadId}:${req.status}`;
  const page = await findPage(ctx.runs, filter, req, { field: 'createdAt', direction: 'desc', scope });
  return create(ListRunsResponseSchema, { runs: page.items.map(toRun), nextPageToken: page.nextPageToken });
}

/**
 * Writes a run that moved to another status, with that move's event (and, for an alert rule's
 * run that ended, the rule's announcement of it), under the compare-and-set `expect`. False when
 * the compare-and-set lost (the events are dropped with the change).
 */
export function putRun(
  ctx: RunsContext,
  run: RunRecord,
  previous: RunRecord | undefined,
  options: PutOptions,
  extra: NewEvent[] = [],
): Promise<boolean> {
  const ended = run.notify && FINISHED.has(run.status) ? [investigationFinished(run, run.notify)] : [];
  return putWithEvents(ctx.events, runSubject(ctx.runs), run, previous, [runEvent(run), ...extra, ...ended], options);
}

/** Ends a run that has not finished; the holder's lease goes with it. False when the CAS lost. */
export async function finish(
  ctx: RunsContext,
  run: RunRecord,
  status: RunStatus,
  fields: Partial<RunRecord>,
): Promise<RunRecord | undefined> {
  const { dueAt: _due, leaseId: _lease, ...kept } = run;
  const next: RunRecord = { ...kept, ...fields, status, finishedAt: ctx.now(), version: run.version + 1 };
  return (await putRun(ctx, next, run, { expect: { version: run.version } })) ? next : undefined;
}

export async function cancelRun(ctx: RunsContext, req: CancelRunRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const reason = requireText('reason', req.reason, 1_000);
  for (;;) {
    const run = await ownedRun(ctx, organizationId, req.runId);
    if (FINISHED.has(run.status)) {
      throw failure(`the run has finished (${RunStatus[run.status].toLowerCase()})`, Code.FailedPrecondition, REASONS.runFinished);
    }
    const done = await finish(ctx, run, RunStatus.CANCELLED, { error: reason === '' ? 'cancelled' : `cancelled: ${reason}` });
    if (done) return create(CancelRunResponseSchema, { run: toRun(done) });
    // An executor changed the run meanwhile (a step, a claim): look again.
  }
}

export async function listSteps(ctx: RunsContext, req: ListStepsRequest) {
  const run = await ownedRun(ctx, requireOrganization(req.organizationId), req.runId);
  const page = await findPage(ctx.steps, { runId: run._id }, req, { field: 'index', scope: `steps:${run._id}` });
  return create(ListStepsResponseSchema, { steps: page.items.map(toStep), nextPageToken: page.nextPageToken });
}
