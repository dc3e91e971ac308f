// The runners an edge replica starts beside its listeners: the LLM runner where LLM_URL is set,
// and the built-in playbook runner unless PLAYBOOK_RUNNER=false.
import type { Logger } from '../../services/common/log.ts';
import type { ServiceClients } from '../clients.ts';
import type { EdgeConfig } from '../config.ts';
import { createConnectionTickets } from '../gateway/connection-test.ts';
import { resolveStateSecrets } from '../gateway/oauth/secret.ts';
import { createPlaybookRunner } from './playbook-runner.ts';
import { createRunner } from './runner.ts';

export function startRunners(options: { clients: ServiceClients; config: EdgeConfig; logger: Logger; now: () => number }) {
  const { clients, config, logger } = options;
  const { url: llmUrl } = config.runner;
  const llm = llmUrl
    ? createRunner({ clients, config: { ...config.runner, url: llmUrl }, logger: logger.child({ component: 'runner' }) })
    : undefined;
  const playbooks = config.runner.playbooks
    ? createPlaybookRunner({
        clients,
        config: config.runner,
        gatewayUrl: config.publicUrls.gateway,
        tickets: createConnectionTickets(resolveStateSecrets(config.gateway.stateSecrets, config.storage.dataDir), options.now),
        logger: logger.child({ component: 'playbook-runner' }),
      })
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
