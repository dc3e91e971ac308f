// One case of a playbook evaluation: its run, started by the agents service under an id derived
// from the evaluation and the case (EvaluationService.StartCaseRun), is worked by whichever runner
// claims it from the runs queue (the built-in playbook runner for a version with steps, the LLM
// runner otherwise), with that runner's own lease and takeover. The worker only waits: it asks for
// the run again every poll (which keeps the evaluation's lease), and once the run has ended reads
// what it produced. A worker that dies while waiting leaves the run to go on; the next holder of
// the evaluation is answered the same run.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@connectrpc/connect';
import type { Case, EvaluationService } from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { RunStatus, StepKind, type Run, type RunsService } from '../../gen/mindgate/agents/v1/runs_pb.js';
import type { Outcome } from './evaluators.ts';

export interface PlaybookCaseDeps {
  evaluation: Client<typeof EvaluationService>;
  runs: Client<typeof RunsService>;
  pollMs: number;
  signal: AbortSignal;
}

export interface EvaluationLease {
  organizationId: string;
  evaluationId: string;
  leaseId: string;
}

const ENDED: Record<number, string> = {
  [RunStatus.SUCCEEDED]: 'succeeded',
  [RunStatus.FAILED]: 'failed',
  [RunStatus.CANCELLED]: 'was cancelled',
  [RunStatus.TIMED_OUT]: 'timed out',
};
/** What RecordCaseResults keeps of the memories found. */
const MAX_FOUND = 50;

/**
 * The memories the run's Brain reads found, in the order read, each once: the steps of kind
 * BRAIN_READ whose result lists `memories` of `{namespace, key}` (the playbook runner's
 * brain_read, the LLM runner's recall).
 */
async function memoriesRead(runs: Client<typeof RunsService>, organizationId: string, runId: string): Promise<Outcome['found']> {
  const found = new Map<string, { namespace: string; key: string }>();
  let pageToken = '';
  do {
    const page = await runs.listSteps({ organizationId, runId, pageSize: 100, pageToken });
    for (const step of page.steps) {
      const memories = step.kind === StepKind.BRAIN_READ && step.ok ? step.result?.memories : undefined;
      if (!Array.isArray(memories)) continue;
      for (const m of memories as Array<{ namespace?: unknown; key?: unknown }>) {
        if (typeof m?.namespace === 'string' && typeof m.key === 'string' && !found.has(`${m.namespace}/${m.key}`))
          found.set(`${m.namespace}/${m.key}`, { namespace: m.namespace, key: m.key });
      }
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== '' && found.size < MAX_FOUND);
  return [...found.values()].slice(0, MAX_FOUND);
}

/** Waits for the case's run to end; its output is the answer, its Brain reads the memories found. */
export async function runPlaybookCase(
  deps: PlaybookCaseDeps,
  lease: EvaluationLease,
  c: Case,
): Promise<{ outcome: Outcome; error: string; runId: string }> {
  const current = async (): Promise<Run> => (await deps.evaluation.startCaseRun({ ...lease, caseId: c.caseId })).run!;
  let run = await current();
  while (ENDED[run.status] === undefined) {
    await sleep(deps.pollMs, undefined, { signal: deps.signal });
    run = await current();
  }
  const found = await memoriesRead(deps.runs, lease.organizationId, run.runId);
  const error = run.status === RunStatus.SUCCEEDED ? '' : `the run ${ENDED[run.status]}${run.error ? `: ${run.error}` : ''}`;
  return { outcome: { found, answer: run.output }, error: error.slice(0, 2_000), runId: run.runId };
}
