import type { ConnectRouter } from '@connectrpc/connect';
import { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { EventOutboxService } from '../../gen/mindgate/events/v1/outbox_pb.js';
import type { ModuleConfig } from '../common/config.ts';
import { outboxRoutes } from '../common/events/outbox-routes.ts';
import type { Logger } from '../common/log.ts';
import type { RpcServiceModule } from '../common/rpc/server.ts';
import type { Stores } from '../common/stores.ts';
import type { ServiceDeps } from '../modules.ts';
import { createEntitlementsCache } from '../billing/entitlements-cache.ts';
import { createBrainContext } from './context.ts';
import { createBrainMetrics } from './metrics.ts';
import { createMemoryLimit, memoriesForCounting } from './memory-limit.ts';
import { brainRoutes } from './routes.ts';
import { startVectorSync } from './vector-sync.ts';
import { startGraphSync } from './graph-sync.ts';
import { SeedingService } from '../../gen/mindgate/brain/v1/seeding_pb.js';
import { createSeeding } from './seeding/index.ts';

export function createBrainModule(
  stores: Stores,
  logger: Logger,
  _config?: ModuleConfig,
  deps?: Pick<ServiceDeps, 'now' | 'billing' | 'entityGraph'>,
): RpcServiceModule {
  const ctx = createBrainContext(stores, logger.child({ service: 'brain' }));
  // The plan's max_memories and entity_graph, asked of the billing service (none for a brain built without it).
  if (deps) {
    const memories = memoriesForCounting(stores.records);
    const entitlements = createEntitlementsCache(deps);
    ctx.memoryLimit = createMemoryLimit({ memories, entitlements, logger: ctx.logger, now: deps.now });
    ctx.graphEntitled = async (organizationId) => (await entitlements.get(organizationId)).entitlements?.entityGraph === true;
  }
  ctx.graph = deps?.entityGraph;
  // Every replica reconciles; claims in the records store keep them off each other's items.
  const metrics = createBrainMetrics(ctx);
  const vectorSync = startVectorSync(ctx, { onPass: metrics.countPass });
  const graphSync = startGraphSync(ctx);
  const seeding = createSeeding(ctx, _config?.seeding);
  return {
    services: [BrainService, EventOutboxService, SeedingService],
    routes: (router: ConnectRouter) => {
      brainRoutes(ctx)(router);
      // The Brain's events, taken by the webhooks relay (edge/webhooks/relay.ts).
      outboxRoutes(router, ctx.events);
      seeding.routes(router);
    },
    probe: () => stores.probe(),
    registerMetrics: metrics.register,
    close: async () => {
      await Promise.all([vectorSync.stop(), graphSync.stop(), seeding.close()]);
    },
  };
}
