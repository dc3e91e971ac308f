// Running a playbook: a new thread for the investigation and a run bound to a version of the
// playbook (its id and number recorded on the run, with the inputs given), so a later publish or
// rollback never changes what a queued run does. A version with structured steps goes to the
// built-in playbook runner; one without goes to the LLM runner (its instructions as the system
// prompt) or to an external agent. StartPlaybookRun runs the published version; alert rules and
// scheduled jobs plan their runs here too (the published version when they fire, or a pinned one),
// checking what they name when they are stored, with the problems at their own fields. An
// evaluation of a playbook queues its cases' runs the same way, bound to the version it evaluates
// (evaluation/case-runs.ts).
import { create, type JsonObject } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { StartPlaybookRunResponseSchema, type StartPlaybookRunRequest } from '../../../gen/mindgate/agents/v1/playbooks_pb.js';
import { Executor } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import { CreateThreadRequestSchema, type Thread } from '../../../gen/mindgate/agents/v1/threads_pb.js';
import { inputProblems, type PlaybookDocument } from '../../common/playbooks/validate.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { ownedPlaybook, versionOf, type PlaybookRecord, type PlaybooksContext, type PlaybookVersionRecord } from './playbooks.ts';
import { queue, toRun, type NewRun, type RunRecord, type RunsContext } from './runs.ts';
import { createThread } from './threads.ts';

/** The thread's first message: what was asked, so a reader (or the LLM runner) sees the inputs. */
export function openingMessage(doc: PlaybookDocument, version: number, inputs: JsonObject): string {
  const lines = [`Playbook **${doc.name}** (version ${version}).`];
  const given = Object.entries(inputs);
  if (given.length > 0) {
    lines.push('', 'Inputs:');
    for (const [name, value] of given) lines.push(`- ${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  return lines.join('\n');
}

/** A playbook version a run is to follow, as a caller names it. */
export interface PlaybookChoice {
  organizationId: string;
  playbookId: string;
  /** 0: the version published now. */
  version: number;
  /** The inputs, or how to make them from the version's document (an alert's fields). */
  inputs: JsonObject | ((document: PlaybookDocument) => JsonObject);
  /** For a version without steps: LLM (unspecified) or external. */
  executor: Executor;
}

/** The request fields a choice's problems are reported at; `stored`: a rule or job being saved. */
export interface ChoiceFields {
  playbookId: string;
  version: string;
  inputs: string;
  executor: string;
  stored: boolean;
}

const RUN_FIELDS: ChoiceFields = { playbookId: 'playbook_id', version: 'version', inputs: 'inputs', executor: 'executor', stored: false };

/** The fields of a stored choice under `prefix` (`rule.action.investigate.playbook`). */
export const storedChoiceFields = (prefix: string): ChoiceFields => ({
  playbookId: `${prefix}.playbook_id`,
  version: `${prefix}.version`,
  inputs: `${prefix}.inputs`,
  executor: `${prefix}.executor`,
  stored: true,
});

/** What a run of a playbook is: the version read, its document, the inputs checked, the executor. */
export interface PlaybookRunPlan {
  playbook: PlaybookRecord;
  version: PlaybookVersionRecord;
  document: PlaybookDocument;
  inputs: JsonObject;
  executor: Executor;
}

function executorFor(hasSteps: boolean, asked: Executor, field: string): Executor {
  if (hasSteps) return Executor.PLAYBOOK;
  if (asked === Executor.UNSPECIFIED) return Executor.LLM;
  if (asked !== Executor.LLM && asked !== Executor.EXTERNAL) invalid(field, 'must be llm or external for a playbook without steps');
  return asked;
}

async function choosePlaybook(ctx: PlaybooksContext, choice: PlaybookChoice, at: ChoiceFields): Promise<PlaybookRecord> {
  if (!at.stored) return ownedPlaybook(ctx, choice.organizationId, choice.playbookId);
  const found = /^pbk_[A-Za-z0-9]{1,60}$/.test(choice.playbookId) ? await ctx.playbooks.get(choice.playbookId) : undefined;
  if (!found || found.organizationId !== choice.organizationId) invalid(at.playbookId, 'is not a playbook of the organization');
  return found;
}

/**
 * Reads and checks the version a run is to follow: NOT_FOUND for another organization's playbook
 * and FAILED_PRECONDITION (playbook-unpublished) without a published version when a run is asked
 * for now; INVALID_ARGUMENT at the choice's own fields when a rule or job naming it is stored.
 */
export async function planPlaybookRun(ctx: PlaybooksContext, choice: PlaybookChoice, at = RUN_FIELDS): Promise<PlaybookRunPlan> {
  const playbook = await choosePlaybook(ctx, choice, at);
  if (choice.version === 0 && playbook.publishedVersion === 0) {
    if (at.stored) invalid(at.version, 'the playbook has no published version: publish one, or name a version');
    throw failure('the playbook has no published version: publish one first', Code.FailedPrecondition, REASONS.playbookUnpublished);
  }
  if (choice.version > playbook.latestVersion) invalid(at.version, `version ${choice.version} does not exist`);
  const version = await versionOf(ctx, playbook, choice.version);
  const document = version.document as unknown as PlaybookDocument;
  const inputs = typeof choice.inputs === 'function' ? choice.inputs(document) : choice.inputs;
  const [problem] = inputProblems(document, inputs);
  if (problem) invalid(`${at.inputs}${problem.path.replaceAll('/', '.')}`, problem.message);
  return { playbook, version, document, inputs, executor: executorFor(version.hasSteps, choice.executor, at.executor) };
}

/** Queues the run a plan describes on a thread (the plan's run limit applies, as for every run). */
export function queuePlaybookRun(
  runs: RunsContext,
  plan: PlaybookRunPlan,
  spec: Omit<NewRun, 'executor' | 'instructions' | 'playbookId' | 'playbookVersion' | 'inputs'>,
): Promise<RunRecord> {
  return queue(runs, {
    ...spec,
    executor: plan.executor,
    instructions: plan.document.instructions,
    playbookId: plan.playbook._id,
    playbookVersion: plan.version.version,
    inputs: plan.inputs,
  });
}

/** Playbooks and the runs queue as the module finally has it (with the plan's run limit). */
export interface PlaybookRunsContext {
  playbooks: PlaybooksContext;
  runs: () => RunsContext;
}

/** A run of one playbook version, its inputs checked. */
export interface VersionRun {
  organizationId: string;
  playbookId: string;
  version: PlaybookVersionRecord;
  inputs: JsonObject;
  /** The thread's title; empty for the playbook's name. */
  title: string;
  timeoutSeconds: number;
  createdBy: string;
  /** Asked for a version without steps (unspecified: the LLM runner). */
  executor: Executor;
  brainFeedback: boolean;
  /** Fixed ids (a case of an evaluation): the thread and the run are made only if absent. */
  ids?: { threadId: string; runId: string };
}

/** Opens the thread and queues the run of a playbook version (the runner its steps call for). */
export async function queueVersionRun(runs: RunsContext, spec: VersionRun): Promise<{ thread: Thread; run: RunRecord }> {
  const document = spec.version.document as unknown as PlaybookDocument;
  const executor = executorFor(spec.version.hasSteps, spec.executor, 'executor');
  // Before the thread: a run the plan refuses leaves no thread behind.
  await runs.runLimit?.(spec.organizationId);
  const title = spec.title.trim() === '' ? document.name.slice(0, 200) : spec.title;
  const { thread } = await createThread(
    runs.threads,
    create(CreateThreadRequestSchema, {
      organizationId: spec.organizationId,
      title,
      message: openingMessage(document, spec.version.version, spec.inputs),
      createdBy: spec.createdBy,
    }),
    spec.ids?.threadId,
  );
  const run = await queue(runs, {
    id: spec.ids?.runId,
    organizationId: spec.organizationId,
    threadId: thread!.threadId,
    executor,
    instructions: document.instructions,
    timeoutSeconds: spec.timeoutSeconds,
    createdBy: spec.createdBy,
    playbookId: spec.playbookId,
    playbookVersion: spec.version.version,
    inputs: spec.inputs,
    brainFeedback: spec.brainFeedback,
  });
  return { thread: thread!, run };
}

export async function startPlaybookRun(ctx: { playbooks: PlaybooksContext; runs: RunsContext }, req: StartPlaybookRunRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const createdBy = requireText('created_by', req.createdBy, 200);
  const timeoutSeconds = req.timeoutSeconds === 0 ? 3_600 : req.timeoutSeconds;
  if (timeoutSeconds > 86_400) invalid('timeout_seconds', 'must be from 1 to 86400 (0 for 3600)');
  const inputs = (req.inputs ?? {}) as JsonObject;
  const plan = await planPlaybookRun(ctx.playbooks, {
    organizationId,
    playbookId: req.playbookId,
    version: 0,
    inputs,
    executor: req.executor,
  });
  // Before the thread: a run the plan refuses leaves no thread behind.
  await ctx.runs.runLimit?.(organizationId);
  const title = req.title.trim() === '' ? plan.document.name.slice(0, 200) : req.title;
  const { thread } = await createThread(
    ctx.runs.threads,
    create(CreateThreadRequestSchema, {
      organizationId,
      title,
      message: openingMessage(plan.document, plan.version.version, inputs),
      createdBy,
    }),
  );
  const run = await queuePlaybookRun(ctx.runs, plan, {
    organizationId,
    threadId: thread!.threadId,
    timeoutSeconds,
    createdBy,
    brainFeedback: req.brainFeedback,
  });
  return create(StartPlaybookRunResponseSchema, { thread, run: toRun(run) });
}
