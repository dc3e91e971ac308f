// One claimed run, worked through by a model: the conversation is the run's instructions, the
// thread's messages and the steps already recorded (a run taken over after its previous holder
// died resumes where that one stopped, doing again only the tool call that was in flight: a call
// whose step is recorded is never made again), then model calls and the tool calls they ask for
// (the Brain's and the organization's MCP servers', tools.ts), each reported as a step, until the
// model answers without a tool call: that answer is the run's output. A heartbeat keeps the lease
// while the model thinks; losing the lease (cancelled, timed out, taken over) aborts the work at once.
import type { JsonObject } from '@bufbuild/protobuf';
import { Code, ConnectError, type Client } from '@connectrpc/connect';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { McpServersService } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import type { PlaybooksService } from '../../gen/mindgate/agents/v1/playbooks_pb.js';
import {
  RunStatus,
  StepKind,
  type ClaimRunResponse,
  type ReportStepRequestSchema,
  type RunsService,
  type Step,
} from '../../gen/mindgate/agents/v1/runs_pb.js';
import { MessageRole, type Message } from '../../gen/mindgate/agents/v1/threads_pb.js';
import type { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { Logger } from '../../services/common/log.ts';
import { reasonOf, REASONS } from '../../services/common/rpc/reasons.ts';
import type { ConnectionTickets } from '../gateway/connection-test.ts';
import { ChatCompletionError, type ChatMessage, type ChatModel, type ToolCall } from './chat-completions.ts';
import type { RunnerConfig } from './config.ts';
import { isFeedback, memoriesRead, reportFeedback } from './feedback.ts';
import { playbookDocument } from './playbook-document.ts';
import { createToolbox, toolText, type Toolbox } from './tools.ts';

export const DEFAULT_INSTRUCTIONS =
  "You are an investigation agent of the organization. Work out the answer to the thread's question or incident. " +
  'Use the brain_recall tool to learn what the organization already knows before you conclude, and the other tools ' +
  'to look at the systems involved; record what you learned with brain_remember. Answer in Markdown.';

export interface ExecutionDeps {
  runs: Client<typeof RunsService>;
  brain: Client<typeof BrainService>;
  playbooks: Client<typeof PlaybooksService>;
  mcpServers: Client<typeof McpServersService>;
  /** The gateway (this replica's listener) and the runner's credential there: MCP tool calls go through it. */
  gatewayUrl: string;
  tickets: ConnectionTickets;
  model: ChatModel;
  config: RunnerConfig;
  logger: Logger;
}

/** A thread message as the model reads it; attachments are listed after the text, by reference. */
function threadMessage(m: Message): ChatMessage {
  const listed = m.attachments.map((a) => {
    const size = a.sizeBytes === undefined ? '' : `, ${a.sizeBytes} bytes`;
    return `- ${a.title || a.uri} (${a.mediaType}${size}): ${a.uri}`;
  });
  const content = listed.length === 0 ? m.content : `${m.content}\n\nAttachments:\n${listed.join('\n')}`;
  if (m.role === MessageRole.AGENT) return { role: 'assistant', content };
  if (m.role === MessageRole.TOOL) return { role: 'user', content: `Tool ${m.toolName || 'output'}:\n${content}` };
  return { role: 'user', content };
}

/** The recorded steps of the conversation (the outcome report is not part of it). */
const conversationSteps = (claim: ClaimRunResponse) => claim.steps.filter((s) => !isFeedback(s));

/** The chat so far: instructions, the thread, and the recorded steps replayed in order. */
export function conversation(claim: ClaimRunResponse): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: claim.run!.instructions || DEFAULT_INSTRUCTIONS }];
  messages.push(...claim.messages.map(threadMessage));
  for (const step of conversationSteps(claim)) {
    if (step.kind === StepKind.MODEL_CALL) messages.push(step.result?.message as unknown as ChatMessage);
    else messages.push({ role: 'tool', tool_call_id: String(step.arguments?.tool_call_id ?? ''), content: toolText(step) });
  }
  return messages;
}

/** Tool calls of the last model answer that have no recorded result yet (the holder died among them). */
function pendingCalls(messages: ChatMessage[]): ToolCall[] {
  const last = messages.findLastIndex((m) => m.role === 'assistant');
  const answer = messages[last];
  if (answer?.role !== 'assistant' || !answer.tool_calls) return [];
  const done = new Set(messages.slice(last + 1).map((m) => (m.role === 'tool' ? m.tool_call_id : '')));
  return answer.tool_calls.filter((c) => !done.has(c.id));
}

/** The conclusion the previous holder recorded (a model answer with no tool call) but did not complete with. */
function recordedConclusion(claim: ClaimRunResponse): string | undefined {
  const last = conversationSteps(claim).at(-1);
  if (last?.kind !== StepKind.MODEL_CALL) return undefined;
  const message = last.result?.message as unknown as Extract<ChatMessage, { role: 'assistant' }> | undefined;
  return message && !message.tool_calls?.length ? (message.content ?? '') : undefined;
}

export const isLeaseLost = (err: unknown) => err instanceof ConnectError && reasonOf(err) === REASONS.leaseLost;

const stamp = (t: Date) => ({ seconds: BigInt(Math.floor(t.getTime() / 1000)), nanos: (t.getTime() % 1000) * 1e6 });

class Execution {
  private readonly deps: ExecutionDeps;
  private readonly claim: ClaimRunResponse;
  private readonly lease: { organizationId: string; runId: string; leaseId: string; leaseSeconds: number };
  private readonly signal: AbortSignal;
  private readonly messages: ChatMessage[];
  /** The results of the run's Brain reads (recorded and new): what feedback is reported on. */
  private readonly reads: JsonObject[];

  constructor(deps: ExecutionDeps, claim: ClaimRunResponse, signal: AbortSignal) {
    this.deps = deps;
    this.claim = claim;
    const run = claim.run!;
    this.lease = { organizationId: run.organizationId, runId: run.runId, leaseId: claim.leaseId, leaseSeconds: deps.config.leaseSeconds };
    this.signal = signal;
    this.messages = conversation(claim);
    this.reads = claim.steps.filter((s: Step) => s.kind === StepKind.BRAIN_READ && s.ok).map((s) => (s.result ?? {}) as JsonObject);
  }

  async work(): Promise<void> {
    const concluded = recordedConclusion(this.claim);
    if (concluded !== undefined) return this.finish(RunStatus.SUCCEEDED, concluded, '');
    const run = this.claim.run!;
    let playbook: { tools?: string[]; namespaces?: Array<'episodes' | 'knowledge'> } | undefined;
    if (run.playbookId !== '') {
      const read = await playbookDocument(this.deps.playbooks, run);
      if ('gone' in read) return this.complete(RunStatus.FAILED, '', read.gone);
      playbook = { tools: read.document.tools, namespaces: read.document.namespaces };
    }
    const toolbox = await createToolbox({
      organizationId: run.organizationId,
      runId: run.runId,
      brain: this.deps.brain,
      mcpServers: this.deps.mcpServers,
      gatewayUrl: this.deps.gatewayUrl,
      tickets: this.deps.tickets,
      toolTimeoutMs: this.deps.config.toolTimeoutMs,
      playbook,
      logger: this.deps.logger,
      signal: this.signal,
    });
    try {
      await this.converse(toolbox);
    } finally {
      await toolbox.close();
    }
  }

  private async converse(toolbox: Toolbox): Promise<void> {
    let modelCalls = this.claim.steps.filter((s: Step) => s.kind === StepKind.MODEL_CALL).length;
    for (const call of pendingCalls(this.messages)) await this.tool(toolbox, call);
    while (modelCalls < this.deps.config.maxModelCalls) {
      const startTime = new Date();
      const completion = await this.deps.model.complete(this.messages, toolbox.definitions, this.signal);
      modelCalls += 1;
      await this.report({
        kind: StepKind.MODEL_CALL,
        name: completion.model,
        model: completion.model,
        ok: true,
        arguments: { message_count: this.messages.length },
        result: { message: completion.message as unknown as JsonObject },
        inputTokens: BigInt(completion.inputTokens),
        outputTokens: BigInt(completion.outputTokens),
        startTime: stamp(startTime),
      });
      this.messages.push(completion.message);
      const calls = completion.message.tool_calls ?? [];
      if (calls.length === 0) return this.finish(RunStatus.SUCCEEDED, completion.message.content ?? '', '');
      for (const call of calls) await this.tool(toolbox, call);
    }
    await this.finish(RunStatus.FAILED, '', `no conclusion after ${this.deps.config.maxModelCalls} model calls`);
  }

  private async tool(toolbox: Toolbox, call: ToolCall): Promise<void> {
    const startTime = new Date();
    const step = await toolbox.call(call, this.signal);
    await this.report({ ...step, startTime: stamp(startTime) });
    if (step.kind === StepKind.BRAIN_READ && step.ok) this.reads.push(step.result);
    this.messages.push({ role: 'tool', tool_call_id: call.id, content: toolText(step) });
  }

  /** Completes the run; first, when the run asks for it, reports the outcome on the memories it recalled. */
  private async finish(status: RunStatus, output: string, error: string): Promise<void> {
    if (this.claim.run!.brainFeedback && !this.claim.steps.some(isFeedback)) {
      await reportFeedback({
        brain: this.deps.brain,
        runs: this.deps.runs,
        lease: this.lease,
        memories: memoriesRead(this.reads),
        succeeded: status === RunStatus.SUCCEEDED,
        reporter: 'llm-runner',
        signal: this.signal,
      });
    }
    await this.complete(status, output, error);
  }

  private async report(step: Omit<MessageInitShape<typeof ReportStepRequestSchema>, 'organizationId' | 'runId' | 'leaseId' | '$typeName'>) {
    this.signal.throwIfAborted();
    await this.deps.runs.reportStep({ ...this.lease, ...step });
  }

  async complete(status: RunStatus, output: string, error: string): Promise<void> {
    await this.deps.runs.completeRun({ ...this.lease, status, output: output.slice(0, 100_000), error: error.slice(0, 10_000) });
  }
}

/** Renews the lease at a third of its length; aborts `lost` when the run is no longer ours. */
export function keepLease(
  deps: { runs: ExecutionDeps['runs']; config: { leaseSeconds: number }; logger: Logger },
  claim: ClaimRunResponse,
  lost: AbortController,
): () => void {
  const run = claim.run!;
  const timer = setInterval(
    () => {
      const lease = {
        organizationId: run.organizationId,
        runId: run.runId,
        leaseId: claim.leaseId,
        leaseSeconds: deps.config.leaseSeconds,
      };
      deps.runs.heartbeatRun(lease).catch((err: unknown) => {
        if (isLeaseLost(err) || (err instanceof ConnectError && err.code === Code.NotFound)) lost.abort(err);
        else deps.logger.warn({ err, runId: run.runId }, 'run heartbeat failed; retrying');
      });
    },
    (deps.config.leaseSeconds * 1000) / 3,
  );
  timer.unref();
  return () => clearInterval(timer);
}

/** Works a claimed run to its end, unless the lease is lost or `stopping` aborts (then it is left to expire). */
export async function executeRun(deps: ExecutionDeps, claim: ClaimRunResponse, stopping: AbortSignal): Promise<void> {
  const run = claim.run!;
  const log = deps.logger.child({ runId: run.runId, organizationId: run.organizationId, attempt: run.attempt });
  const lost = new AbortController();
  const signal = AbortSignal.any([stopping, lost.signal]);
  const stopHeartbeat = keepLease(deps, claim, lost);
  const execution = new Execution(deps, claim, signal);
  try {
    log.info({ resumedSteps: claim.steps.length }, 'run claimed');
    await execution.work();
    log.info('run finished');
  } catch (err) {
    if (lost.signal.aborted || isLeaseLost(err)) log.info('run left: this runner no longer holds it (cancelled, timed out or taken over)');
    else if (stopping.aborted) log.info('run left at shutdown: another runner takes it over when the lease expires');
    else if (err instanceof ChatCompletionError) await execution.complete(RunStatus.FAILED, '', err.message).catch(() => undefined);
    else log.warn({ err }, 'run interrupted; another attempt takes it over when the lease expires');
  } finally {
    stopHeartbeat();
  }
}
