// The runners an edge replica starts beside its listeners: the LLM runner where LLM_URL is set,
// and the built-in playbook runner unless PLAYBOOK_RUNNER=false. Both call MCP tools through this
// replica's gateway listener, with the signed tickets of the connection test as their credential.
import type { Logger } from '../../services/common/log.ts';
import type { ServiceClients } from '../clients.ts';
import type { EdgeConfig } from '../config.ts';
import { createConnectionTickets } from '../gateway/connection-test.ts';
import { resolveStateSecrets } from '../gateway/oauth/secret.ts';
import { createPlaybookRunner } from './playbook-runner.ts';
import { createRunner } from './runner.ts';

export interface RunnersOptions {
  clients: ServiceClients;
  config: EdgeConfig;
  logger: Logger;
  now: () => number;
  /** Where the runners reach the gateway: this replica's own gateway listener. */
  gatewayUrl: string;
}

export function startRunners(options: RunnersOptions) {
  const { clients, config, logger } = options;
  const { url: llmUrl } = config.runner;
  const tickets = createConnectionTickets(resolveStateSecrets(config.gateway.stateSecrets, config.storage.dataDir), options.now);
  const gatewayUrl = options.gatewayUrl;
  const llm = llmUrl
    ? createRunner({
        clients,
        config: { ...config.runner, url: llmUrl },
        gatewayUrl,
        tickets,
        logger: logger.child({ component: 'runner' }),
      })
    : undefined;
  const playbooks = config.runner.playbooks
    ? createPlaybookRunner({ clients, config: config.runner, gatewayUrl, tickets, logger: logger.child({ component: 'playbook-runner' }) })
    : undefined;
  llm?.start();
  playbooks?.start();
  return {
    /** Stops taking runs; the ones in progress are left to expire and be taken over. */
    async stop(): Promise<void> {
      await Promise.all([llm?.stop(), playbooks?.stop()]);
    },
  };
}
