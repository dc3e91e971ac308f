// Examples of the evaluation bodies of the Agents API, by the title of their schema
// (index.ts spreads them into EXAMPLES).
import { AT, ORG, USER } from './common.ts';
const FINISHED = '2026-03-02T09:31:12.000Z';
const DATASET = 'evd_Rk2mQ8xTz4Lp0aVn7Ws1';
const CASE = 'evc_Hq3nV7pLm2Xz9aKt0Rs4';
const memory = { namespace: 'knowledge', key: 'services/checkout/db-pool' };
const scores = [
  { name: 'recall@1', value: 1, passed: true },
  { name: 'recall@5', value: 1, passed: true },
  { name: 'recall@10', value: 1, passed: true },
  { name: 'reciprocal_rank', value: 1, passed: true },
  { name: 'contains', value: 1, passed: true },
];
const newCase = {
  input: 'What is the connection pool size of the checkout database?',
  namespace: 'knowledge',
  expected_memories: [memory],
  expected_answer: 'pool size 50',
  labels: ['facts'],
};

export const EVALUATION_EXAMPLES: Record<string, unknown> = {
  CreateEvaluationDataset: { name: 'Checkout incidents', description: 'Questions on-call asks about checkout.' },
  UpdateEvaluationDataset: { description: 'Questions on-call asked in Q3.' },
  CreateEvaluation: { dataset_id: DATASET, subject: { type: 'brain_search', limit: 10 }, label: 'after re-indexing' },
  EvaluationDataset: {
    id: DATASET,
    organization_id: ORG,
    name: 'Checkout incidents',
    description: 'Questions on-call asks about checkout.',
    case_count: 120,
    created_by: USER,
    created_at: AT,
    updated_at: AT,
  },
  NewEvaluationCase: newCase,
  EvaluationCase: {
    id: CASE,
    dataset_id: DATASET,
    seq: 1,
    alert: '',
    answer_pattern: '',
    ...newCase,
    created_at: AT,
  },
  EvaluationImport: { imported: 119, failed: [{ line: 42, detail: 'not JSON: Unexpected end of JSON input' }] },
  Evaluation: {
    id: 'evr_Tz8qL2mXv5Kp1aNr4Hs0',
    organization_id: ORG,
    dataset_id: DATASET,
    subject: { type: 'brain_search', limit: 10 },
    evaluators: ['exact', 'contains', 'regex', 'retrieval'],
    status: 'succeeded',
    label: 'after re-indexing',
    case_total: 120,
    cases_scored: 120,
    metrics: [
      { name: 'contains_pass_rate', value: 0.9, cases: 40 },
      { name: 'mrr', value: 0.7325, cases: 120 },
      { name: 'recall@1', value: 0.65, cases: 120 },
      { name: 'recall@10', value: 0.9, cases: 120 },
      { name: 'recall@5', value: 0.8333, cases: 120 },
    ],
    error: null,
    attempt: 1,
    created_by: USER,
    created_at: AT,
    started_at: AT,
    finished_at: FINISHED,
  },
  EvaluationResult: {
    case_id: CASE,
    seq: 1,
    input: newCase.input,
    found: [memory, { namespace: 'knowledge', key: 'services/orders/db-pool' }],
    first_relevant_rank: 1,
    scores,
    answer: 'The checkout database runs with pool size 50 since the March incident.',
    error: null,
    attempt: 1,
    created_at: FINISHED,
    run_id: null,
  },
  EvaluationComparison: {
    base_evaluation_id: 'evr_Tz8qL2mXv5Kp1aNr4Hs0',
    head_evaluation_id: 'evr_Wc4nP9sLq1Zx7bMt2Kd6',
    cases_compared: 120,
    metrics: [{ name: 'mrr', base: 0.7325, head: 0.7712, delta: 0.0387 }],
    changed_cases: [
      {
        case_id: CASE,
        input: newCase.input,
        change: 'improved',
        base_rank: 3,
        head_rank: 1,
        base_scores: [{ name: 'reciprocal_rank', value: 0.3333, passed: false }],
        head_scores: [{ name: 'reciprocal_rank', value: 1, passed: true }],
        base_run_id: 'run_e3f1c9a0b7d24e6f8a1c5b9d0e2f4a6c8',
        head_run_id: 'run_e9b2d4f6a8c0e1f3a5b7c9d1e3f5a7b9c',
      },
    ],
  },
};
