import type { Client } from '@connectrpc/connect';
import type { EntityGraphService } from '../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { ModuleConfig, ServiceName } from './common/config.ts';
import type { Logger } from './common/log.ts';
import type { RpcServiceModule } from './common/rpc/server.ts';
import type { Stores } from './common/stores.ts';
import { createAgentsModule } from './agents/index.ts';
import { createBillingModule } from './billing/index.ts';
import { createBrainModule } from './brain/index.ts';
import { createEntityGraphModule } from './entity-graph/index.ts';
import { createExtractor } from './entity-graph/extractor/index.ts';

/** What a service module may need beyond its stores. */
export interface ServiceDeps {
  /**
   * The entity-graph service, which the brain tells of memory writes. Resolved on first use: in
   * one process it is built after the modules.
   */
  entityGraph?: () => Client<typeof EntityGraphService>;
}

/** Every internal service, by the name used in configuration. */
export const SERVICE_MODULES: Record<
  ServiceName,
  (stores: Stores, logger: Logger, config: ModuleConfig, deps?: ServiceDeps) => RpcServiceModule
> = {
  brain: createBrainModule,
  'entity-graph': (stores, logger, config) =>
    createEntityGraphModule(stores, logger, { extractor: createExtractor(config.entityGraph, logger) }),
  agents: (stores, logger, config) => createAgentsModule(stores, logger, config),
  billing: (stores, logger) => createBillingModule(stores, logger),
};
