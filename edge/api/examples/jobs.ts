// Examples of the bodies of the scheduled-job operations, by the title of their schema
// (index.ts merges them into the document's; the schema fuzzer sends the request examples, so
// each must be accepted as it is).
import { ORG, USER } from './common.ts';
const JOB = 'job_Hs8Kq2Lm9Xv4Tn1Pz7Wc';
const THREAD = 'thr_Jb4Nq8Xr2Lm6Tv0Kp3s';
const RUN = 'run_Jb7Wq1Zp5Lx9Mn3Rt6c';

const target = {
  type: 'run',
  title_template: 'Nightly check {occurrence}',
  message: 'Did anything fail overnight?',
  instructions: '',
  executor: 'llm',
  timeout_seconds: 900,
};
const run = {
  id: RUN,
  organization_id: ORG,
  thread_id: THREAD,
  status: 'queued',
  executor: 'llm',
  instructions: '',
  agent_id: '',
  attempt: 0,
  lease_expires_at: null,
  timeout_seconds: 900,
  usage: { input_tokens: 0, output_tokens: 0, tool_calls: 0, duration_ms: 0 },
  model: '',
  output: '',
  error: '',
  step_count: 0,
  created_by: JOB,
  retry_of: null,
  playbook_id: null,
  playbook_version: null,
  inputs: {},
  brain_feedback: false,
  created_at: '2026-03-30T00:30:00.120Z',
  started_at: null,
  finished_at: null,
};
const execution = {
  id: 'exe_Hs8Kq2Lm9Xv4Tn1Pz7Wc_mna1b2c3',
  job_id: JOB,
  trigger: 'schedule',
  outcome: 'succeeded',
  occurrence_at: '2026-03-30T00:30:00.000Z',
  fired_at: '2026-03-30T00:30:00.114Z',
  occurrences: 1,
  error: '',
  thread_id: THREAD,
  run_id: RUN,
  seeding_run_id: null,
  run,
};

export const JOB_EXAMPLES: Record<string, unknown> = {
  Job: {
    id: JOB,
    organization_id: ORG,
    name: 'Nightly check',
    schedule: '30 2 * * *',
    time_zone: 'Europe/Berlin',
    enabled: true,
    missed_policy: 'skip',
    target,
    state: {
      next_fire_at: '2026-03-31T00:30:00.000Z',
      last_execution: { ...execution, run: null },
      consecutive_failures: 0,
      last_error: '',
      backoff_skips: 0,
    },
    created_by: USER,
    created_at: '2026-03-02T09:30:00.000Z',
    updated_at: '2026-03-30T00:30:00.130Z',
  },
  JobExecution: execution,
  CreateJob: { name: 'Nightly check', schedule: '30 2 * * *', time_zone: 'Europe/Berlin', missed_policy: 'skip', target },
  UpdateJob: { schedule: '0 6 * * 1-5', missed_policy: 'run_once' },
};
