// Running a playbook: a new thread for the investigation and a run bound to the published version
// (its id and number recorded on the run, with the inputs given), so a later publish or rollback
// never changes what a queued run does. A version with structured steps goes to the built-in
// playbook runner; one without goes to the LLM runner (its instructions as the system prompt) or
// to an external agent.
import { create, type JsonObject } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { StartPlaybookRunResponseSchema, type StartPlaybookRunRequest } from '../../../gen/mindgate/agents/v1/playbooks_pb.js';
import { Executor } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import { CreateThreadRequestSchema } from '../../../gen/mindgate/agents/v1/threads_pb.js';
import { inputProblems, type PlaybookDocument } from '../../common/playbooks/validate.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { ownedPlaybook, versionOf, type PlaybooksContext } from './playbooks.ts';
import { queue, toRun, type RunsContext } from './runs.ts';
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
  const document = version.document as unknown as PlaybookDocument;
  const inputs = (req.inputs ?? {}) as JsonObject;
  const [problem] = inputProblems(document, inputs);
  if (problem) invalid(`inputs${problem.path.replace('/', '.')}`, problem.message);
  const executor = executorFor(version.hasSteps, req.executor);
  // Before the thread: a run the plan refuses leaves no thread behind.
  await ctx.runs.runLimit?.(organizationId);
  const title = req.title.trim() === '' ? document.name.slice(0, 200) : req.title;
  const { thread } = await createThread(
    ctx.runs.threads,
    create(CreateThreadRequestSchema, { organizationId, title, message: openingMessage(document, version.version, inputs), createdBy }),
  );
  const run = await queue(ctx.runs, {
    organizationId,
    threadId: thread!.threadId,
    executor,
    instructions: document.instructions,
    timeoutSeconds,
    createdBy,
    playbookId: playbook._id,
    playbookVersion: version.version,
    inputs,
    brainFeedback: req.brainFeedback,
  });
  return create(StartPlaybookRunResponseSchema, { thread, run: toRun(run) });
}
