// Settings of the evaluation worker (EdgeConfig.evaluation): how this replica takes evaluations
// from the queue the agents service keeps.
import { readInt, type Env } from '../../services/common/config.ts';

export interface EvaluationWorkerConfig {
  /** Evaluations this replica works on at once; 0 leaves them to other replicas. */
  concurrency: number;
  /** An evaluation's lease; every recorded case extends it. */
  leaseSeconds: number;
  /** How often an idle worker asks the queue for an evaluation. */
  pollMs: number;
}

export function readEvaluationConfig(env: Env): EvaluationWorkerConfig {
  return {
    concurrency: readInt(env, 'EVALUATION_CONCURRENCY', 1, { min: 0, max: 16 }),
    leaseSeconds: readInt(env, 'EVALUATION_LEASE_SECONDS', 60, { min: 5, max: 3_600 }),
    pollMs: readInt(env, 'EVALUATION_POLL_MS', 1_000, { min: 10, max: 60_000 }),
  };
}
