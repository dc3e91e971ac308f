// Running a playbook: a new thread for the investigation and a run bound to the published version
// (its id and number recorded on the run, with the inputs given), so a later publish or rollback
// never changes what a queued run does. A version with structured steps goes to the built-in
// playbook runner; one without goes to the LLM runner (its instructions as the system prompt) or
// to an external agent. An evaluation of a playbook queues its cases' runs the same way, bound to
// the version it evaluates (evaluation/case-runs.ts).
import { create, type JsonObject } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { StartPlaybookRunResponseSchema, type StartPlaybookRunRequest } from '../../../gen/mindgate/agents/v1/playbooks_pb.js';
import { Executor } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import type { Thread } from '../../../gen/mindgate/agents/v1/threads_pb.js';
import { CreateThreadRequestSchema } from '../../../gen/mindgate/agents/v1/threads_pb.js';
import { inputProblems, type PlaybookDocument } from '../../common/playbooks/validate.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { ownedPlaybook, versionOf, type PlaybooksContext, type PlaybookVersionRecord } from './playbooks.ts';
import { queue, toRun, type RunRecord, type RunsContext } from './runs.ts';
import { createThread } from './threads.ts';

/** The thread's first message: what was asked, so a reader (or the LLM runner) sees the inputs. */
function openingMessage(doc: PlaybookDocument, version: number, inputs: JsonObject): string {
  const lines = [`Playbook **${doc.name}** (version ${version}).`];
  const given = Object.entries(inputs);
  if (given.length > 0) {
    lines.push('', 'Inputs:');
    for (const [name, value] of given) lines.push(`- ${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  return lines.join('\n');
}

function executorFor(hasSteps: boolean, asked: Executor): Executor {
  if (hasSteps) return Executor.PLAYBOOK;
  if (asked === Executor.UNSPECIFIED) return Executor.LLM;
  if (asked !== Executor.LLM && asked !== Executor.EXTERNAL) invalid('executor', 'must be llm or external for a playbook without steps');
  return asked;
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
  const executor = executorFor(spec.version.hasSteps, spec.executor);
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
  const playbook = await ownedPlaybook(ctx.playbooks, organizationId, req.playbookId);
  if (playbook.publishedVersion === 0) {
    throw failure('the playbook has no published version: publish one first', Code.FailedPrecondition, REASONS.playbookUnpublished);
  }
  const version = await versionOf(ctx.playbooks, playbook, 0);
  const inputs = (req.inputs ?? {}) as JsonObject;
  const [problem] = inputProblems(version.document as unknown as PlaybookDocument, inputs);
  if (problem) invalid(`inputs${problem.path.replace('/', '.')}`, problem.message);
  // An executor the version cannot take is refused before anything is made.
  executorFor(version.hasSteps, req.executor);
  const { thread, run } = await queueVersionRun(ctx.runs, {
    organizationId,
    playbookId: playbook._id,
    version,
    inputs,
    title: req.title,
    timeoutSeconds,
    createdBy,
    executor: req.executor,
    brainFeedback: req.brainFeedback,
  });
  return create(StartPlaybookRunResponseSchema, { thread, run: toRun(run) });
}
