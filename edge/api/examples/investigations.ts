// Examples of the bodies of investigations: threads, their messages and the memories they
// produced, runs, their steps and the external executors' leases, by the title of their schema
// (index.ts merges every area's).
import { AT, LATER, ORG, USER } from './common.ts';

const THREAD = 'thr_Qm8x2LkP0aZr7Tn4Vw1s';
const RUN = 'run_Zt3pK9qW1xLm7Ns0Ve2a';
const LEASE = '3b0f2c4e-8a1d-4f6b-9c2e-7d5a1b3c9e0f';
const thread = {
  id: THREAD,
  organization_id: ORG,
  title: 'Checkout latency above 2 s since 09:40',
  status: 'open',
  created_by: USER,
  message_count: 2,
  created_at: AT,
  updated_at: AT,
};
const threadMessage = {
  id: 'msg_b2VwQ1x9LmT0aRk4Zs7n',
  thread_id: THREAD,
  role: 'user',
  content: 'p99 of /checkout doubled after the 09:35 deploy. What changed?',
  author: USER,
  run_id: null,
  attachments: [
    { uri: 's3://ops-logs/deploys/2026-11-25/checkout-42.log', media_type: 'text/plain', title: 'Deploy 42 log', size_bytes: 48213 },
  ],
  created_at: AT,
};
const run = {
  id: RUN,
  organization_id: ORG,
  thread_id: THREAD,
  status: 'succeeded',
  executor: 'llm',
  instructions: '',
  agent_id: 'llm:edge-0:1f2e3d4c',
  attempt: 1,
  lease_expires_at: null,
  timeout_seconds: 3600,
  usage: { input_tokens: 1840, output_tokens: 312, tool_calls: 1, duration_ms: 6210 },
  model: 'gpt-4o-mini',
  output: 'The 09:35 deploy lowered the payment client timeout; roll back its config.',
  error: '',
  step_count: 3,
  created_by: USER,
  retry_of: null,
  playbook_id: null,
  playbook_version: null,
  inputs: {},
  brain_feedback: false,
  created_at: AT,
  started_at: AT,
  finished_at: AT,
};
const runStep = {
  index: 1,
  kind: 'brain_read',
  name: 'brain_recall',
  ok: true,
  arguments: { tool_call_id: 'call_1', arguments: { task: 'checkout latency after a deploy' } },
  result: {
    context: '…',
    memories: [{ namespace: 'knowledge', key: 'runbooks/checkout-latency', title: 'Checkout latency after deploys' }],
  },
  error: '',
  input_tokens: 0,
  output_tokens: 0,
  attempt: 1,
  started_at: AT,
  finished_at: AT,
};

export const INVESTIGATION_EXAMPLES: Record<string, unknown> = {
  Thread: thread,
  ThreadMessage: threadMessage,
  CreateThread: { title: 'Checkout latency above 2 s since 09:40', message: 'What changed around 09:35?' },
  UpdateThread: { status: 'resolved' },
  PostThreadMessage: {
    content: 'The deploy at 09:35 changed the payment client timeout; its log is attached.',
    attachments: [threadMessage.attachments[0]],
  },
  ThreadMemory: {
    thread_id: THREAD,
    namespace: 'episodes',
    key: 'incidents/checkout-latency-2026-11-25',
    version: 1,
    run_id: RUN,
    step_index: 3,
    created_at: AT,
  },
  Run: run,
  RunStep: runStep,
  CreateRun: { executor: 'llm', instructions: 'Find the cause and propose a fix.', timeout_seconds: 900, brain_feedback: true },
  CancelRun: { reason: 'resolved by hand' },
  ClaimRun: { agent_id: 'oncall-bot@host-7', lease_seconds: 120 },
  ClaimedRun: {
    run: {
      ...run,
      status: 'running',
      executor: 'external',
      agent_id: 'oncall-bot@host-7',
      lease_expires_at: LATER,
      output: '',
      step_count: 0,
      finished_at: null,
    },
    lease_id: LEASE,
    steps: [],
    messages: [threadMessage],
  },
  RunHeartbeat: { lease_id: LEASE, lease_seconds: 120 },
  ReportRunStep: { lease_id: LEASE, kind: 'tool_call', name: 'grafana/query', ok: true, arguments: { q: 'p99' }, result: { value: 2.3 } },
  CompleteRun: { lease_id: LEASE, status: 'succeeded', output: 'The 09:35 deploy lowered the timeout.' },
};
