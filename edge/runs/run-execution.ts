// One claimed run, worked through by a model: the conversation is the run's instructions, the
// thread's messages and the steps already recorded (a run taken over after its previous holder
// died resumes where that one stopped, doing again only the step that was in flight), then model
// calls and the tool calls they ask for, each reported as a step, until the model answers without
// a tool call: that answer is the run's output. A heartbeat keeps the lease while the model thinks;
// losing the lease (cancelled, timed out, taken over) aborts the work at once.
import type { JsonObject } from '@bufbuild/protobuf';
import { Code, ConnectError, type Client } from '@connectrpc/connect';
import type { MessageInitShape } from '@bufbuild/protobuf';
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
import { ChatCompletionError, type ChatMessage, type ChatModel, type ToolCall } from './chat-completions.ts';
import type { RunnerConfig } from './config.ts';
import { callTool, TOOLS, toolText } from './tools.ts';

export const DEFAULT_INSTRUCTIONS =
  "You are an investigation agent of the organization. Work out the answer to the thread's question or incident. " +
  'Use the brain_recall tool to learn what the organization already knows before you conclude. Answer in Markdown.';

export interface ExecutionDeps {
  runs: Client<typeof RunsService>;
  brain: Client<typeof BrainService>;
  model: ChatModel;
  config: RunnerConfig;
  logger: Logger;
}

function threadMessage(m: Message): ChatMessage {
  if (m.role === MessageRole.AGENT) return { role: 'assistant', content: m.content };
  if (m.role === MessageRole.TOOL) return { role: 'user', content: `Tool ${m.toolName || 'output'}:\n${m.content}` };
  return { role: 'user', content: m.content };
}

/** The chat so far: instructions, the thread, and the recorded steps replayed in order. */
export function conversation(claim: ClaimRunResponse): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: claim.run!.instructions || DEFAULT_INSTRUCTIONS }];
  messages.push(...claim.messages.map(threadMessage));
  for (const step of claim.steps) {
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

export const isLeaseLost = (err: unknown) => err instanceof ConnectError && reasonOf(err) === REASONS.leaseLost;

class Execution {
  private readonly deps: ExecutionDeps;
  private readonly claim: ClaimRunResponse;
  private readonly lease: { organizationId: string; runId: string; leaseId: string; leaseSeconds: number };
  private readonly signal: AbortSignal;
  private readonly messages: ChatMessage[];

  constructor(deps: ExecutionDeps, claim: ClaimRunResponse, signal: AbortSignal) {
    this.deps = deps;
    this.claim = claim;
    const run = claim.run!;
    this.lease = { organizationId: run.organizationId, runId: run.runId, leaseId: claim.leaseId, leaseSeconds: deps.config.leaseSeconds };
    this.signal = signal;
    this.messages = conversation(claim);
  }

  async work(): Promise<void> {
    let modelCalls = this.claim.steps.filter((s: Step) => s.kind === StepKind.MODEL_CALL).length;
    for (const call of pendingCalls(this.messages)) await this.tool(call);
    while (modelCalls < this.deps.config.maxModelCalls) {
      const startTime = new Date();
      const completion = await this.deps.model.complete(this.messages, TOOLS, this.signal);
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
        startTime: { seconds: BigInt(Math.floor(startTime.getTime() / 1000)), nanos: (startTime.getTime() % 1000) * 1e6 },
      });
      this.messages.push(completion.message);
      const calls = completion.message.tool_calls ?? [];
      if (calls.length === 0) return this.complete(RunStatus.SUCCEEDED, completion.message.content ?? '', '');
      for (const call of calls) await this.tool(call);
    }
    await this.complete(RunStatus.FAILED, '', `no conclusion after ${this.deps.config.maxModelCalls} model calls`);
  }

  private async tool(call: ToolCall): Promise<void> {
    const outcome = await callTool(this.deps.brain, this.lease.organizationId, call.function.name, call.function.arguments);
    await this.report({
      kind: outcome.kind,
      name: call.function.name,
      ok: outcome.ok,
      arguments: { tool_call_id: call.id, arguments: call.function.arguments },
      result: outcome.result,
      error: outcome.error,
    });
    this.messages.push({ role: 'tool', tool_call_id: call.id, content: toolText(outcome) });
  }

  private async report(step: Omit<MessageInitShape<typeof ReportStepRequestSchema>, 'organizationId' | 'runId' | 'leaseId' | '$typeName'>) {
    this.signal.throwIfAborted();
    await this.deps.runs.reportStep({ ...this.lease, ...step });
  }

  async complete(status: RunStatus, output: string, error: string): Promise<void> {
    await this.deps.runs.completeRun({ ...this.lease, status, output, error });
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
