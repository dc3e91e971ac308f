// One claimed playbook run, worked through with no model: the steps of the playbook version the
// run is bound to, in order, each recorded as one run step (a step whose condition does not hold
// as a `condition` step, skipped). What the run knows, the scope of templates and conditions, is
// its inputs and the recorded steps' results by step id; a run taken over after its holder died
// rebuilds it from the recorded steps and goes on from the first step not recorded, so only the
// step in flight at the moment of death is done again.
import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
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
import type { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { Logger } from '../../services/common/log.ts';
import { evaluateCondition, fillTemplates } from '../../services/common/playbooks/expressions.ts';
import type { PlaybookDocument, PlaybookStep } from '../../services/common/playbooks/validate.ts';
import type { ConnectionTickets } from '../gateway/connection-test.ts';
import { brainRead, brainWrite, type BrainRead, type BrainWrite } from './brain-steps.ts';
import { isFeedback, memoriesRead, reportFeedback } from './feedback.ts';
import { createGatewayTools, type GatewayTools, type ToolCallOutcome } from './gateway-tools.ts';
import { playbookDocument } from './playbook-document.ts';
import { isLeaseLost, keepLease } from './run-execution.ts';

export interface PlaybookExecutionDeps {
  runs: Client<typeof RunsService>;
  playbooks: Client<typeof PlaybooksService>;
  brain: Client<typeof BrainService>;
  mcpServers: Client<typeof McpServersService>;
  tickets: ConnectionTickets;
  gatewayUrl: string;
  config: { leaseSeconds: number; toolTimeoutMs: number };
  logger: Logger;
}

type StepReport = Omit<MessageInitShape<typeof ReportStepRequestSchema>, 'organizationId' | 'runId' | 'leaseId' | '$typeName'>;
interface Scope {
  inputs: JsonObject;
  steps: Record<string, { ok: boolean; skipped: boolean; result: JsonObject; error: string }>;
}

const KIND = { tool_call: StepKind.TOOL_CALL, brain_read: StepKind.BRAIN_READ, brain_write: StepKind.BRAIN_WRITE } as const;

/** The scope after the recorded steps, each under the id of the playbook step it recorded. */
function scopeOf(claim: ClaimRunResponse, recorded: Step[], doc: PlaybookDocument): Scope {
  const scope: Scope = { inputs: (claim.run!.inputs ?? {}) as JsonObject, steps: {} };
  for (const step of recorded) {
    const id = doc.steps?.[step.index]?.id;
    if (id)
      scope.steps[id] = {
        ok: step.ok,
        skipped: step.kind === StepKind.CONDITION,
        result: (step.result ?? {}) as JsonObject,
        error: step.error,
      };
  }
  return scope;
}

function summary(doc: PlaybookDocument, scope: Scope): string {
  if (doc.output !== undefined) return String(fillTemplates(doc.output, scope));
  const lines = (doc.steps ?? []).map((s) => {
    const done = scope.steps[s.id];
    return `- ${s.id} (${s.kind}): ${done?.skipped ? 'skipped' : done?.ok ? 'done' : `failed: ${done?.error ?? ''}`}`;
  });
  return [`Playbook **${doc.name}** finished its steps.`, '', ...lines].join('\n');
}

class PlaybookExecution {
  private readonly lease: { organizationId: string; runId: string; leaseId: string; leaseSeconds: number };
  private readonly tools: GatewayTools;
  private readonly deps: PlaybookExecutionDeps;
  private readonly claim: ClaimRunResponse;
  private readonly signal: AbortSignal;
  private feedbackDone = false;

  constructor(deps: PlaybookExecutionDeps, claim: ClaimRunResponse, signal: AbortSignal) {
    this.deps = deps;
    this.claim = claim;
    this.signal = signal;
    const run = claim.run!;
    this.lease = { organizationId: run.organizationId, runId: run.runId, leaseId: claim.leaseId, leaseSeconds: deps.config.leaseSeconds };
    this.tools = createGatewayTools({
      organizationId: run.organizationId,
      gatewayUrl: deps.gatewayUrl,
      tickets: deps.tickets,
      mcpServers: deps.mcpServers,
      timeoutMs: deps.config.toolTimeoutMs,
    });
  }

  async work(): Promise<void> {
    const run = this.claim.run!;
    const doc = await this.document();
    if (!doc) return;
    const recorded = this.claim.steps.filter((s) => !isFeedback(s));
    this.feedbackDone = recorded.length < this.claim.steps.length;
    const scope = scopeOf(this.claim, recorded, doc);
    const steps = doc.steps ?? [];
    try {
      for (const [i, done] of recorded.entries()) {
        // The previous holder recorded a failure that ends the run, then died before completing it.
        if (!done.ok && !steps[i]?.continue_on_error)
          return this.finish(doc, scope, RunStatus.FAILED, '', `step ${steps[i]?.id} failed: ${done.error}`);
      }
      for (let i = recorded.length; i < steps.length; i += 1) {
        const outcome = await this.step(doc, steps[i], scope, run.runId);
        if (!outcome.ok && !steps[i].continue_on_error)
          return this.finish(doc, scope, RunStatus.FAILED, '', `step ${steps[i].id} failed: ${outcome.error}`);
      }
    } finally {
      await this.tools.close();
    }
    await this.finish(doc, scope, RunStatus.SUCCEEDED, summary(doc, scope), '');
  }

  /**
   * Completes the run; first, when the run asks for it, reports its outcome to the Brain as
   * feedback on the memories its steps read, recorded as a step so a takeover does not report it again.
   */
  private async finish(doc: PlaybookDocument, scope: Scope, status: RunStatus, output: string, error: string): Promise<void> {
    if (this.claim.run!.brainFeedback && !this.feedbackDone) {
      const reads = (doc.steps ?? []).filter((s) => s.kind === 'brain_read').map((s) => scope.steps[s.id]?.result);
      await reportFeedback({
        brain: this.deps.brain,
        runs: this.deps.runs,
        lease: this.lease,
        memories: memoriesRead(reads),
        succeeded: status === RunStatus.SUCCEEDED,
        reporter: 'playbook-runner',
        signal: this.signal,
      });
    }
    await this.complete(status, output, error);
  }

  /** The document of the run's version; a version that is gone fails the run. */
  private async document(): Promise<PlaybookDocument | undefined> {
    const read = await playbookDocument(this.deps.playbooks, this.claim.run!);
    if ('gone' in read) await this.complete(RunStatus.FAILED, '', read.gone);
    return 'document' in read ? read.document : undefined;
  }

  private async step(doc: PlaybookDocument, step: PlaybookStep, scope: Scope, runId: string): Promise<ToolCallOutcome> {
    if (step.when && !evaluateCondition(step.when, scope)) {
      scope.steps[step.id] = { ok: true, skipped: true, result: { skipped: true }, error: '' };
      await this.report({
        kind: StepKind.CONDITION,
        name: step.id,
        ok: true,
        arguments: { step_id: step.id, when: step.when as never },
        result: { skipped: true },
      });
      return { ok: true, result: {}, error: '' };
    }
    const startTime = new Date();
    const filled = fillTemplates(step, scope) as PlaybookStep;
    const organizationId = this.lease.organizationId;
    let outcome: ToolCallOutcome;
    let name: string;
    let args: JsonObject;
    if (filled.kind === 'tool_call') {
      name = `${filled.server}/${filled.tool}`;
      args = (filled.arguments ?? {}) as JsonObject;
      outcome = await this.tools.call(filled.server!, filled.tool!, args, this.signal);
    } else if (filled.kind === 'brain_read') {
      name = 'brain_search';
      args = { namespace: filled.namespace!, query: String(filled.query), limit: filled.limit ?? 10 };
      outcome = await brainRead(this.deps.brain, organizationId, filled as BrainRead);
    } else {
      name = 'brain_write';
      args = {
        namespace: filled.namespace!,
        key: String(filled.key),
        title: String(filled.title ?? ''),
        tags: (filled.tags ?? []) as never,
      };
      outcome = await brainWrite(
        this.deps.brain,
        organizationId,
        { ...(filled as BrainWrite), key: String(filled.key), content: String(filled.content) },
        { clientId: 'playbook-runner', clientName: `playbook ${doc.name} (${runId})` },
      );
    }
    scope.steps[step.id] = { ok: outcome.ok, skipped: false, result: outcome.result, error: outcome.error };
    await this.report({
      kind: KIND[step.kind],
      name,
      ok: outcome.ok,
      arguments: { step_id: step.id, ...args },
      result: outcome.result,
      error: outcome.error,
      startTime: { seconds: BigInt(Math.floor(startTime.getTime() / 1000)), nanos: (startTime.getTime() % 1000) * 1e6 },
    });
    return outcome;
  }

  private async report(step: StepReport) {
    this.signal.throwIfAborted();
    await this.deps.runs.reportStep({ ...this.lease, ...step });
  }

  async complete(status: RunStatus, output: string, error: string): Promise<void> {
    await this.deps.runs.completeRun({ ...this.lease, status, output: output.slice(0, 100_000), error: error.slice(0, 10_000) });
  }
}

/** Works a claimed playbook run to its end, unless the lease is lost or `stopping` aborts (then it is left to expire). */
export async function executePlaybookRun(deps: PlaybookExecutionDeps, claim: ClaimRunResponse, stopping: AbortSignal): Promise<void> {
  const run = claim.run!;
  const log = deps.logger.child({ runId: run.runId, organizationId: run.organizationId, attempt: run.attempt, playbookId: run.playbookId });
  const lost = new AbortController();
  const stopHeartbeat = keepLease(deps, claim, lost);
  try {
    log.info({ resumedSteps: claim.steps.length }, 'playbook run claimed');
    await new PlaybookExecution(deps, claim, AbortSignal.any([stopping, lost.signal])).work();
    log.info('playbook run finished');
  } catch (err) {
    if (lost.signal.aborted || isLeaseLost(err)) log.info('run left: this runner no longer holds it (cancelled, timed out or taken over)');
    else if (stopping.aborted) log.info('run left at shutdown: another runner takes it over when the lease expires');
    else log.warn({ err }, 'run interrupted; another attempt takes it over when the lease expires');
  } finally {
    stopHeartbeat();
  }
}
