import { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { Logger } from '../common/log.ts';
import type { RpcServiceModule } from '../common/rpc/server.ts';
import type { Stores } from '../common/stores.ts';
import { createBrainContext } from './context.ts';
import { brainRoutes } from './routes.ts';

export function createBrainModule(stores: Stores, logger: Logger): RpcServiceModule {
  const ctx = createBrainContext(stores, logger.child({ service: 'brain' }));
  return { services: [BrainService], routes: brainRoutes(ctx), probe: () => stores.probe() };
}
