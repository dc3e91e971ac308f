// The evaluation worker: takes evaluations from the queue (EvaluationService.ClaimEvaluation, a
// lease in the records store the agents service owns), searches each case in the Brain as the
// evaluation's organization, scores it and records the result before the next (which extends the
// lease). It lives in the edge beside the LLM runner because the edge holds the clients of both
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
import { createChatModel } from '../runs/chat-completions.ts';
import type { RunnerConfig } from '../runs/config.ts';

export interface EvaluationWorker {
  readonly agentId: string;
  start(): void;
  /** Stops taking evaluations and leaves the ones in progress to expire. */
  stop(): Promise<void>;
}

export interface EvaluationWorkerOptions {
  clients: Pick<ServiceClients, 'evaluation' | 'brain'>;
  config: EvaluationWorkerConfig;
  logger: Logger;
  /** The LLM runner's model settings: with LLM_URL the judge asks that model; evaluations asking for a judge fail without. */
  llm?: RunnerConfig;
  /** The judge; by default one asking the model of `llm`. */
  judge?: Judge;
}

/** The evaluation cannot be scored here: it is ended as failed, with this message. */
class Unscorable extends Error {}

/** Failures of the case itself (the Brain refused its query): recorded as the case's error. */
const CASE_FAILURES = new Set([Code.InvalidArgument, Code.FailedPrecondition, Code.ResourceExhausted, Code.OutOfRange]);
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

  async function outcomeOf(evaluation: Evaluation, c: Case): Promise<{ outcome: Outcome; error: string }> {
    const limit = evaluation.subject?.kind.case === 'brainSearch' ? evaluation.subject.kind.value.limit : 10;
    try {
      return { outcome: await searchBrain(clients.brain, evaluation.organizationId, c, limit), error: '' };
    } catch (err) {
      if (!(err instanceof ConnectError) || !CASE_FAILURES.has(err.code)) throw err;
      return { outcome: { found: [], answer: '' }, error: err.rawMessage.slice(0, 2_000) };
    }
  }

  async function resultOf(evaluation: Evaluation, c: Case) {
    const { outcome, error } = await outcomeOf(evaluation, c);
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
    };
  }

  async function work(evaluation: Evaluation, leaseId: string, first: Case[]): Promise<void> {
    const key = { organizationId: evaluation.organizationId, evaluationId: evaluation.evaluationId, leaseId };
    let cases = first;
    try {
      while (cases.length > 0) {
        if (stopping.signal.aborted) return;
        const result = await resultOf(evaluation, cases[0]);
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
