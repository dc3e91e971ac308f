import { AgentsService } from '../../gen/mindgate/agents/v1/agents_pb.js';
import type { Logger } from '../common/log.ts';
import type { RpcServiceModule } from '../common/rpc/server.ts';
import type { Stores } from '../common/stores.ts';
import { listAgents, recordActivity, registerAgent, type AgentRecord, type AgentsContext } from './handlers/agents.ts';

export function createAgentsModule(stores: Stores, _logger: Logger, now: () => number = Date.now): RpcServiceModule {
  const ctx: AgentsContext = {
    agents: stores.records.collection<AgentRecord>('agents', { indexes: [{ fields: ['organizationId', 'createdAt'] }] }),
    now,
  };
  return {
    services: [AgentsService],
    routes: (router) => {
      router.service(AgentsService, {
        registerAgent: (req) => registerAgent(ctx, req),
        listAgents: (req) => listAgents(ctx, req),
        recordActivity: (req) => recordActivity(ctx, req),
      });
    },
    probe: async () => {
      await stores.records.ping();
      return true;
    },
  };
}
