// The evaluation worker: takes evaluations from the queue (EvaluationService.ClaimEvaluation, a
// lease in the records store the agents service owns), puts each case to the subject (a search of
// the Brain as the evaluation's organization, or a run of the playbook version, playbook-case.ts),
// scores it and records the result before the next (which extends the lease). It lives in the edge beside the LLM runner because the edge holds the clients of both
// services; the data stays the agents service's. A replica that dies leaves its evaluation to
// another when the lease expires, which resumes after the last recorded case.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Code, ConnectError } from '@connectrpc/connect';
import { EvaluationStatus, Evaluator, type Case, type Evaluation } from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { reasonOf, REASONS } from '../../services/common/rpc/reasons.ts';
import type { Logger } from '../../services/common/log.ts';
import type { ServiceClients } from '../clients.ts';
import { searchBrain } from './brain-search.ts';
import type { EvaluationWorkerConfig } from './config.ts';
import { firstRelevantRank, scoreCase, type Outcome } from './evaluators.ts';
import { createJudge, type Judge } from './llm-judge.ts';
import { runPlaybookCase } from './playbook-case.ts';
import { createChatModel } from '../runs/chat-completions.ts';
import type { RunnerConfig } from '../runs/config.ts';

export interface EvaluationWorker {
  readonly agentId: string;
  start(): void;
  /** Stops taking evaluations and leaves the ones in progress to expire. */
  stop(): Promise<void>;
}

export interface EvaluationWorkerOptions {
  clients: Pick<ServiceClients, 'evaluation' | 'brain' | 'runs'>;
  config: EvaluationWorkerConfig;
  logger: Logger;
  /** The LLM runner's model settings: with LLM_URL the judge asks that model; evaluations asking for a judge fail without. */
  llm?: RunnerConfig;
  /** The judge; by default one asking the model of `llm`. */
  judge?: Judge;
}

/** The evaluation cannot be scored here: it is ended as failed, with this message. */
class Unscorable extends Error {}

interface CaseOutcome {
  outcome: Outcome;
  /** Why the subject could not answer the case ('' when it did). */
  error: string;
  /** The run that answered it (a playbook subject). */
  runId: string;
}

/** Failures of the case itself (the Brain refused its query): recorded as the case's error. */
const CASE_FAILURES = new Set([Code.InvalidArgument, Code.FailedPrecondition, Code.ResourceExhausted, Code.OutOfRange]);
/** A case's run refused (its input does not fit the playbook, the case was deleted): the case's error. */
const RUN_REFUSALS = new Set([Code.InvalidArgument, Code.NotFound]);
const isLeaseLost = (err: unknown) => err instanceof ConnectError && reasonOf(err) === REASONS.leaseLost;

export function createEvaluationWorker(options: EvaluationWorkerOptions): EvaluationWorker {
  const { clients, config, logger } = options;
  const llm = options.llm;
  const judge =
    options.judge ??
    (llm?.url ? createJudge(createChatModel({ url: llm.url, apiKey: llm.apiKey, model: llm.model, timeoutMs: llm.timeoutMs })) : undefined);
  const host = os
    .hostname()
    .replace(/[^A-Za-z0-9.-]/g, '-')
    .slice(0, 100);
  const agentId = `eval:${host}:${randomUUID().slice(0, 8)}`;
  const stopping = new AbortController();
  let workers: Promise<void>[] = [];

  async function searchOutcome(evaluation: Evaluation, c: Case): Promise<CaseOutcome> {
    const limit = evaluation.subject?.kind.case === 'brainSearch' ? evaluation.subject.kind.value.limit : 10;
    try {
      return { outcome: await searchBrain(clients.brain, evaluation.organizationId, c, limit), error: '', runId: '' };
    } catch (err) {
      if (!(err instanceof ConnectError) || !CASE_FAILURES.has(err.code)) throw err;
      return { outcome: { found: [], answer: '' }, error: err.rawMessage.slice(0, 2_000), runId: '' };
    }
  }

  async function runOutcome(evaluation: Evaluation, leaseId: string, c: Case): Promise<CaseOutcome> {
    // Asking after the run is what keeps the lease: at least three times a lease, whatever the poll.
    const pollMs = Math.min(config.pollMs, (config.leaseSeconds * 1000) / 3);
    const deps = { evaluation: clients.evaluation, runs: clients.runs, pollMs, signal: stopping.signal };
    try {
      return await runPlaybookCase(deps, { organizationId: evaluation.organizationId, evaluationId: evaluation.evaluationId, leaseId }, c);
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      // Past the plan's runs_per_month no case can run: the evaluation ends, saying why.
      if (err.code === Code.ResourceExhausted) throw new Unscorable(`no run could be queued: ${err.rawMessage}`);
      if (!RUN_REFUSALS.has(err.code)) throw err;
      return { outcome: { found: [], answer: '' }, error: err.rawMessage.slice(0, 2_000), runId: '' };
    }
  }

  async function resultOf(evaluation: Evaluation, leaseId: string, c: Case) {
    const { outcome, error, runId } =
      evaluation.subject?.kind.case === 'playbook' ? await runOutcome(evaluation, leaseId, c) : await searchOutcome(evaluation, c);
    const scores = scoreCase(c, outcome, evaluation.evaluators);
    let judged = '';
    if (evaluation.evaluators.includes(Evaluator.LLM_JUDGE) && c.expectedAnswer.trim() !== '') {
      if (!judge) throw new Unscorable('llm_judge needs a model: set LLM_URL on the replicas');
      const verdict = await judge.judge(c, outcome.answer, stopping.signal);
      scores.push(verdict.score);
      judged = verdict.error;
    }
    const errors = [error, judged].filter((e) => e !== '').join('; ');
    return {
      caseId: c.caseId,
      found: outcome.found,
      firstRelevantRank: firstRelevantRank(c, outcome),
      scores,
      answer: outcome.answer.slice(0, 100_000),
      error: errors,
      runId,
    };
  }

  async function work(evaluation: Evaluation, leaseId: string, first: Case[]): Promise<void> {
    const key = { organizationId: evaluation.organizationId, evaluationId: evaluation.evaluationId, leaseId };
    let cases = first;
    try {
      while (cases.length > 0) {
        if (stopping.signal.aborted) return;
        const result = await resultOf(evaluation, leaseId, cases[0]);
        cases = (await clients.evaluation.recordCaseResults({ ...key, results: [result] })).cases;
      }
    } catch (err) {
      if (!(err instanceof Unscorable)) throw err;
      await clients.evaluation.completeEvaluation({ ...key, status: EvaluationStatus.FAILED, error: err.message });
      return;
    }
    await clients.evaluation.completeEvaluation({ ...key, status: EvaluationStatus.SUCCEEDED });
    logger.info({ evaluationId: evaluation.evaluationId }, 'evaluation finished');
  }

  async function worker(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        const claim = await clients.evaluation.claimEvaluation({ agentId, leaseSeconds: config.leaseSeconds });
        if (claim.evaluation) {
          await work(claim.evaluation, claim.leaseId, claim.cases);
          continue;
        }
      } catch (err) {
        // A lost lease means another worker has it (or it ended); anything else leaves it to expire.
        if (isLeaseLost(err)) logger.info('evaluation: lease lost; leaving it');
        else if (!stopping.signal.aborted) logger.warn({ err }, 'evaluation: a service did not answer; retrying');
      }
      await sleep(config.pollMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  }

  return {
    agentId,
    start() {
      if (workers.length > 0 || config.concurrency === 0) return;
      workers = Array.from({ length: config.concurrency }, () => worker());
      logger.info({ agentId, concurrency: config.concurrency }, 'evaluation worker started');
    },
    async stop() {
      stopping.abort();
      await Promise.all(workers);
    },
  };
}
