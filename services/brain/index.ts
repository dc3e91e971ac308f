import { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { Logger } from '../common/log.ts';
import type { RpcServiceModule } from '../common/rpc/server.ts';
import type { Stores } from '../common/stores.ts';
import { createBrainContext } from './context.ts';
import { createBrainMetrics } from './metrics.ts';
import { brainRoutes } from './routes.ts';
import { startVectorSync } from './vector-sync.ts';

export function createBrainModule(stores: Stores, logger: Logger): RpcServiceModule {
  const ctx = createBrainContext(stores, logger.child({ service: 'brain' }));
  // Every replica reconciles; claims in the records store keep them off each other's items.
  const metrics = createBrainMetrics(ctx);
  const vectorSync = startVectorSync(ctx, { onPass: metrics.countPass });
  return {
    services: [BrainService],
    routes: brainRoutes(ctx),
    probe: () => stores.probe(),
    registerMetrics: metrics.register,
    close: () => vectorSync.stop(),
  };
}
