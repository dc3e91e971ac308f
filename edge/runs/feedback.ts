// A run's outcome reported to the Brain as feedback on the memories it read, for runs created with
// brain_feedback: the playbook runner's and the LLM runner's just before they complete a run, the
// REST API's completion of an external agent's run (edge/api/run-leases.ts). The report is one
// RecordFeedback (each memory once, at most 50: what the Brain takes in one call), recorded as a
// last brain_write step named brain_feedback, so whoever completes the run after that step (a
// runner taking over, an agent retrying its completion) sees it and does not report again; one
// that dies between the report and its record reports twice.
import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import { StepKind, type ReportStepRequestSchema, type RunsService } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { Outcome, type BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { recordFeedback, type MemoryName } from './brain-steps.ts';

export const FEEDBACK_STEP = 'brain_feedback';
const MAX_MEMORIES = 50;

export const isFeedback = (s: { kind: StepKind; name: string }) => s.kind === StepKind.BRAIN_WRITE && s.name === FEEDBACK_STEP;

/**
 * The memories named by Brain reads' results (`result.memories`, each `{namespace, key}`), in the
 * order first read, each once, at most 50. Anything else in a result is not a memory and is left out.
 */
export function memoriesRead(results: Array<JsonObject | undefined>): MemoryName[] {
  const seen = new Map<string, MemoryName>();
  for (const result of results) {
    const found = result?.memories;
    if (!Array.isArray(found)) continue;
    for (const m of found as Array<{ namespace?: unknown; key?: unknown } | null>) {
      if ((m?.namespace === 'episodes' || m?.namespace === 'knowledge') && typeof m.key === 'string' && m.key !== '')
        seen.set(`${m.namespace}/${m.key}`, { namespace: m.namespace, key: m.key });
    }
  }
  return [...seen.values()].slice(0, MAX_MEMORIES);
}

export interface FeedbackReport {
  brain: Client<typeof BrainService>;
  runs: Client<typeof RunsService>;
  /** The holder's lease on the run: the report's step is recorded under it. */
  lease: { organizationId: string; runId: string; leaseId: string; leaseSeconds?: number };
  memories: MemoryName[];
  succeeded: boolean;
  /** Who reports (the Brain's source client id): playbook-runner, llm-runner, agents-api. */
  reporter: string;
  signal?: AbortSignal;
}

/** Reports the outcome on the memories and records it as the brain_feedback step; nothing when none was read. */
export async function reportFeedback(r: FeedbackReport): Promise<void> {
  if (r.memories.length === 0) return;
  const outcome = r.succeeded ? Outcome.WORKED : Outcome.FAILED;
  const reported = await recordFeedback(r.brain, r.lease.organizationId, r.memories, outcome, {
    note: `run ${r.lease.runId}`,
    clientId: r.reporter,
  });
  r.signal?.throwIfAborted();
  const step: MessageInitShape<typeof ReportStepRequestSchema> = {
    ...r.lease,
    kind: StepKind.BRAIN_WRITE,
    name: FEEDBACK_STEP,
    ok: reported.ok,
    arguments: { outcome: r.succeeded ? 'worked' : 'failed', memories: r.memories.map((m) => `${m.namespace}/${m.key}`) },
    result: reported.result,
    error: reported.error,
  };
  await r.runs.reportStep(step);
}

/**
 * The report of an external agent's run, made by the REST API when the agent completes it: on the
 * memories its reported brain_read steps name (`result.memories`, as `{namespace, key}`), unless a
 * brain_feedback step is recorded already (an earlier completion that failed after it, or the
 * agent's own). The lease is checked (a heartbeat) before anything is reported.
 */
export async function reportExternalFeedback(
  clients: { brain: FeedbackReport['brain']; runs: FeedbackReport['runs'] },
  lease: FeedbackReport['lease'],
  succeeded: boolean,
): Promise<void> {
  const { run } = await clients.runs.getRun({ organizationId: lease.organizationId, runId: lease.runId });
  if (!run?.brainFeedback) return;
  const reads: JsonObject[] = [];
  let pageToken = '';
  do {
    const page = await clients.runs.listSteps({ organizationId: lease.organizationId, runId: lease.runId, pageSize: 100, pageToken });
    for (const step of page.steps) {
      if (isFeedback(step)) return;
      if (step.kind === StepKind.BRAIN_READ && step.ok) reads.push((step.result ?? {}) as JsonObject);
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  const memories = memoriesRead(reads);
  if (memories.length === 0) return;
  await clients.runs.heartbeatRun(lease);
  await reportFeedback({ ...clients, lease, memories, succeeded, reporter: 'agents-api' });
}
