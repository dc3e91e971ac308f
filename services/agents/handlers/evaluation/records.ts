// The evaluation collections the agents service owns: datasets, their cases (numbered by a
// per-dataset counter, so a case keeps its place in the order added), evaluations (the queue
// the evaluation workers claim from, like runs) and case results (one per evaluation and case,
// under a fixed id, so a case is never scored twice).
import { createHash } from 'node:crypto';
import type { EvaluationStatus, Evaluator } from '../../../../gen/mindgate/agents/v1/evaluation_pb.js';
import type { RecordCollection, RecordDoc, RecordStore } from '../../../common/storage/records/interface.ts';
import type { PlaybookRunsContext } from '../playbook-runs.ts';

export interface MemoryKeyRecord {
  namespace: string;
  key: string;
}

export interface DatasetRecord extends RecordDoc {
  organizationId: string;
  name: string;
  description: string;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  version: number;
}

export interface CaseRecord extends RecordDoc {
  organizationId: string;
  datasetId: string;
  seq: number;
  input: string;
  alert: string;
  namespace: string;
  expectedMemories: MemoryKeyRecord[];
  expectedAnswer: string;
  answerPattern: string;
  labels: string[];
  createdAt: number;
}

/** The per-dataset case counter (`_id` = the dataset id). */
export interface CaseCounterRecord extends RecordDoc {
  organizationId: string;
  count: number;
}

export interface MetricRecord {
  name: string;
  value: number;
  cases: number;
}

/** A playbook subject as evaluated: the version resolved when the evaluation was created. */
export interface PlaybookSubjectRecord {
  kind: 'playbook';
  playbookId: string;
  version: number;
  inputName: string;
  alertInputName: string;
  timeoutSeconds: number;
}

export type SubjectRecord = { kind: 'brainSearch'; limit: number } | PlaybookSubjectRecord;

export interface EvaluationRecord extends RecordDoc {
  organizationId: string;
  datasetId: string;
  /** The subject, as its oneof case and its fields. */
  subject: SubjectRecord;
  evaluators: Evaluator[];
  status: EvaluationStatus;
  /** Cases with a seq up to this one are scored (the dataset's last when it was created). */
  lastSeq: number;
  caseTotal: number;
  /** The seq of the last case whose result the holder recorded: work resumes after it. */
  cursorSeq: number;
  metrics: MetricRecord[];
  error: string;
  label: string;
  agentId: string;
  attempt: number;
  leaseId: string;
  /** The lease the holder claimed with; each recording extends it by as much. */
  leaseMs: number;
  leaseExpiresAt?: number;
  /** When a worker may claim it: creation while queued, the lease's end while running, none once finished. */
  dueAt?: number;
  createdBy: string;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  version: number;
}

export interface ScoreRecord {
  name: string;
  value: number;
  passed: boolean;
}

export interface CaseResultRecord extends RecordDoc {
  organizationId: string;
  evaluationId: string;
  caseId: string;
  seq: number;
  input: string;
  found: MemoryKeyRecord[];
  firstRelevantRank: number;
  scores: ScoreRecord[];
  answer: string;
  error: string;
  attempt: number;
  createdAt: number;
  /** The run that answered the case (a playbook subject). */
  runId?: string;
}

export interface EvaluationContext {
  datasets: RecordCollection<DatasetRecord>;
  cases: RecordCollection<CaseRecord>;
  counters: RecordCollection<CaseCounterRecord>;
  evaluations: RecordCollection<EvaluationRecord>;
  results: RecordCollection<CaseResultRecord>;
  /** Playbooks and the runs queue, for playbook subjects (absent: only the Brain search is evaluated). */
  playbooks?: PlaybookRunsContext;
  now: () => number;
}

export function openEvaluationContext(records: RecordStore, now: () => number, playbooks?: PlaybookRunsContext): EvaluationContext {
  return {
    playbooks,
    datasets: records.collection<DatasetRecord>('evaluation_datasets', { indexes: [{ fields: ['organizationId', 'createdAt'] }] }),
    cases: records.collection<CaseRecord>('evaluation_cases', {
      indexes: [{ fields: ['datasetId', 'seq'] }, { fields: ['organizationId'] }],
    }),
    counters: records.collection<CaseCounterRecord>('evaluation_case_counters', { indexes: [{ fields: ['organizationId'] }] }),
    evaluations: records.collection<EvaluationRecord>('evaluations', {
      indexes: [
        { fields: ['dueAt'] },
        { fields: ['organizationId', 'createdAt'] },
        { fields: ['organizationId', 'datasetId', 'createdAt'] },
      ],
    }),
    results: records.collection<CaseResultRecord>('evaluation_results', {
      indexes: [{ fields: ['evaluationId', 'seq'] }, { fields: ['organizationId'] }],
    }),
    now,
  };
}

/** What an organization's deletion purges, results and cases before what they belong to. */
export function ownedCollections(ctx: EvaluationContext): RecordCollection<RecordDoc>[] {
  return [ctx.results, ctx.evaluations, ctx.cases, ctx.counters, ctx.datasets] as RecordCollection<RecordDoc>[];
}

/** A result's id: one per evaluation and case. */
export const resultId = (evaluationId: string, caseId: string) => `${evaluationId}:${caseId}`;

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);
/** The run (and its thread) of a case of a playbook evaluation: one per evaluation and case, whoever starts it. */
export const caseRunId = (evaluationId: string, caseId: string) => `run_e${digest(`${evaluationId}:${caseId}`)}`;
export const caseThreadId = (evaluationId: string, caseId: string) => `thr_e${digest(`${evaluationId}:${caseId}`)}`;
