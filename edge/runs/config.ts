// Settings of the LLM runner (EdgeConfig.runner): the model provider, reached over HTTP with the
// OpenAI chat-completions wire protocol, and how this replica takes runs from the queue.
import { readBool, readInt, readString, readUrl, type Env } from '../../services/common/config.ts';

export interface RunnerConfig {
  /** OpenAI-compatible base URL or chat-completions endpoint; the runner is off without it. */
  url?: string;
  /** Sent as `Authorization: Bearer …`; never logged. */
  apiKey?: string;
  model: string;
  /** Runs this replica works on at once. */
  concurrency: number;
  /** A run's lease; the runner renews it at a third of it. */
  leaseSeconds: number;
  /** How often an idle worker asks the queue for a run. */
  pollMs: number;
  /** Model calls a run may make before it fails for want of a conclusion. */
  maxModelCalls: number;
  /** One model call's time limit. */
  timeoutMs: number;
  /** Whether this replica runs the built-in playbook runner (runs of playbooks with steps). */
  playbooks: boolean;
  /** Playbook runs this replica works on at once. */
  playbookConcurrency: number;
  /** One MCP tool call's time limit in a playbook run. */
  toolTimeoutMs: number;
  /** How often a run's event stream (SSE) reads the run again. */
  eventsPollMs: number;
}

export function readRunnerConfig(env: Env): RunnerConfig {
  return {
    url: readUrl(env, 'LLM_URL'),
    apiKey: readString(env, 'LLM_API_KEY'),
    model: readString(env, 'LLM_MODEL', 'gpt-4o-mini'),
    concurrency: readInt(env, 'RUNNER_CONCURRENCY', 2, { min: 1, max: 64 }),
    leaseSeconds: readInt(env, 'RUNNER_LEASE_SECONDS', 60, { min: 5, max: 3_600 }),
    pollMs: readInt(env, 'RUNNER_POLL_MS', 1_000, { min: 10, max: 60_000 }),
    maxModelCalls: readInt(env, 'RUNNER_MAX_MODEL_CALLS', 20, { min: 1, max: 200 }),
    timeoutMs: readInt(env, 'LLM_TIMEOUT_MS', 120_000, { min: 100, max: 600_000 }),
    playbooks: readBool(env, 'PLAYBOOK_RUNNER', true),
    playbookConcurrency: readInt(env, 'PLAYBOOK_RUNNER_CONCURRENCY', 2, { min: 1, max: 64 }),
    toolTimeoutMs: readInt(env, 'PLAYBOOK_TOOL_TIMEOUT_MS', 60_000, { min: 100, max: 600_000 }),
    eventsPollMs: readInt(env, 'RUN_EVENTS_POLL_MS', 500, { min: 10, max: 60_000 }),
  };
}
