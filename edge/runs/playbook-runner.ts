// The built-in playbook runner: workers that take the runs of playbook versions with structured
// steps from the queue (RunsService.ClaimRun with the playbook executor, a lease in the records
// store) and work their steps with no model. Every replica runs one unless PLAYBOOK_RUNNER=false;
// the lease makes each run held by one of them at a time, and a replica that dies or stops leaves
// its runs to the others when their leases expire. Runs of playbooks without steps are never
// claimed here: they wait for the LLM runner or an external agent.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Executor } from '../../gen/mindgate/agents/v1/runs_pb.js';
import type { Logger } from '../../services/common/log.ts';
import type { ServiceClients } from '../clients.ts';
import type { ConnectionTickets } from '../gateway/connection-test.ts';
import type { RunnerConfig } from './config.ts';
import { executePlaybookRun, type PlaybookExecutionDeps } from './playbook-execution.ts';
import type { Runner } from './runner.ts';

export interface PlaybookRunnerOptions {
  clients: Pick<ServiceClients, 'runs' | 'brain' | 'playbooks' | 'mcpServers'>;
  config: RunnerConfig;
  /** The gateway (this replica's listener): tool calls go through it, as any agent's would. */
  gatewayUrl: string;
  tickets: ConnectionTickets;
  logger: Logger;
}

export function createPlaybookRunner(options: PlaybookRunnerOptions): Runner {
  const { config, logger } = options;
  const agentId = `playbook:${os
    .hostname()
    .replace(/[^A-Za-z0-9.-]/g, '-')
    .slice(0, 100)}:${randomUUID().slice(0, 8)}`;
  const deps: PlaybookExecutionDeps = {
    ...options.clients,
    tickets: options.tickets,
    gatewayUrl: options.gatewayUrl,
    config: { leaseSeconds: config.leaseSeconds, toolTimeoutMs: config.toolTimeoutMs },
    logger,
  };
  const stopping = new AbortController();
  let workers: Promise<void>[] = [];

  async function worker(): Promise<void> {
    while (!stopping.signal.aborted) {
      try {
        const claim = await deps.runs.claimRun({ agentId, leaseSeconds: config.leaseSeconds, executor: Executor.PLAYBOOK });
        if (claim.run) {
          await executePlaybookRun(deps, claim, stopping.signal);
          continue;
        }
      } catch (err) {
        if (!stopping.signal.aborted) logger.warn({ err }, 'playbook runner: the queue did not answer; retrying');
      }
      await sleep(config.pollMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  }

  return {
    agentId,
    start() {
      if (workers.length > 0) return;
      workers = Array.from({ length: config.playbookConcurrency }, () => worker());
      logger.info({ agentId, concurrency: config.playbookConcurrency }, 'playbook runner started');
    },
    async stop() {
      stopping.abort();
      await Promise.all(workers);
    },
  };
}
