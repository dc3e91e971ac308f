// The LLM runner: workers that take runs from the queue (RunsService.ClaimRun, a lease in the
// records store the agents service owns) and work them through the configured model. Every
// replica with LLM_URL set runs one; the lease makes each run held by one of them at a time, and a
// replica that dies or stops leaves its runs to the others when their leases expire.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Executor } from '../../gen/mindgate/agents/v1/runs_pb.js';
import type { Logger } from '../../services/common/log.ts';
import type { ServiceClients } from '../clients.ts';
import type { ConnectionTickets } from '../gateway/connection-test.ts';
import { createChatModel, type ChatModel } from './chat-completions.ts';
import type { RunnerConfig } from './config.ts';
import { executeRun, type ExecutionDeps } from './run-execution.ts';

export interface Runner {
  /** Who this replica claims as (the run's agent_id). */
  readonly agentId: string;
  start(): void;
  /** Stops taking runs and leaves the ones in progress to expire; resolves when the workers ended. */
  stop(): Promise<void>;
}

export interface RunnerOptions {
  clients: Pick<ServiceClients, 'runs' | 'brain' | 'playbooks' | 'mcpServers'>;
  config: RunnerConfig & { url: string };
  /** The gateway (this replica's listener): the model's MCP tools are called through it, as any agent's would. */
  gatewayUrl: string;
  tickets: ConnectionTickets;
  logger: Logger;
  /** The model; by default the configured chat-completions endpoint. */
  model?: ChatModel;
}

export function createRunner(options: RunnerOptions): Runner {
  const { config, logger } = options;
  const agentId = `llm:${os
    .hostname()
    .replace(/[^A-Za-z0-9.-]/g, '-')
    .slice(0, 100)}:${randomUUID().slice(0, 8)}`;
  const deps: ExecutionDeps = {
    runs: options.clients.runs,
    brain: options.clients.brain,
    playbooks: options.clients.playbooks,
    mcpServers: options.clients.mcpServers,
    gatewayUrl: options.gatewayUrl,
    tickets: options.tickets,
    model: options.model ?? createChatModel({ url: config.url, apiKey: config.apiKey, model: config.model, timeoutMs: config.timeoutMs }),
    config,
    logger,
  };
  const stopping = new AbortController();
  let workers: Promise<void>[] = [];

  async function worker(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        const claim = await deps.runs.claimRun({ agentId, leaseSeconds: config.leaseSeconds, executor: Executor.LLM });
        if (claim.run) {
          await executeRun(deps, claim, stopping.signal);
          continue;
        }
      } catch (err) {
        if (!stopping.signal.aborted) logger.warn({ err }, 'runner: the queue did not answer; retrying');
      }
      await sleep(config.pollMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  }

  return {
    agentId,
    start() {
      if (workers.length > 0) return;
      workers = Array.from({ length: config.concurrency }, () => worker());
      logger.info({ agentId, concurrency: config.concurrency, model: config.model }, 'LLM runner started');
    },
    async stop() {
      stopping.abort();
      await Promise.all(workers);
    },
  };
}
