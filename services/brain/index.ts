import { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { Logger } from '../common/log.ts';
import type { RpcServiceModule } from '../common/rpc/server.ts';
import type { Stores } from '../common/stores.ts';
import { createBrainContext } from './context.ts';
import { createBrainMetrics } from './metrics.ts';
import { brainRoutes } from './routes.ts';
import { startVectorSync } from './vector-sync.ts';
import { startGraphSync } from './graph-sync.ts';
import type { ServiceDeps } from '../modules.ts';
import type { ModuleConfig } from '../common/config.ts';

export function createBrainModule(stores: Stores, logger: Logger, _config?: ModuleConfig, deps?: ServiceDeps): RpcServiceModule {
  const ctx = createBrainContext(stores, logger.child({ service: 'brain' }));
  ctx.graph = deps?.entityGraph;
  // Every replica reconciles; claims in the records store keep them off each other's items.
  const metrics = createBrainMetrics(ctx);
  const vectorSync = startVectorSync(ctx, { onPass: metrics.countPass });
  const graphSync = startGraphSync(ctx);
  return {
    services: [BrainService],
    routes: brainRoutes(ctx),
    probe: () => stores.probe(),
    registerMetrics: metrics.register,
    close: async () => {
      await Promise.all([vectorSync.stop(), graphSync.stop()]);
    },
  };
}
