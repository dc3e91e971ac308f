import type { ModuleConfig, ServiceName } from './common/config.ts';
import type { Logger } from './common/log.ts';
import type { RpcServiceModule } from './common/rpc/server.ts';
import type { Stores } from './common/stores.ts';
import { createAgentsModule } from './agents/index.ts';
import { createBillingModule } from './billing/index.ts';
import { createBrainModule } from './brain/index.ts';
import { createEntityGraphModule } from './entity-graph/index.ts';

/** Every internal service, by the name used in configuration. */
export const SERVICE_MODULES: Record<ServiceName, (stores: Stores, logger: Logger, config: ModuleConfig) => RpcServiceModule> = {
  brain: createBrainModule,
  'entity-graph': createEntityGraphModule,
  agents: createAgentsModule,
  billing: (stores, logger) => createBillingModule(stores, logger),
};
