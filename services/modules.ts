import type { Client } from '@connectrpc/connect';
import type { BillingService } from '../gen/mindgate/billing/v1/billing_pb.js';
import type { BillingConfig } from './billing/config.ts';
import type { EntityGraphService } from '../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { SeedingService } from '../gen/mindgate/brain/v1/seeding_pb.js';
import type { ModuleConfig, ServiceName } from './common/config.ts';
import type { Logger } from './common/log.ts';
import type { RpcServiceModule } from './common/rpc/server.ts';
import type { RecordStores, Stores } from './common/stores.ts';
import { createAgentsModule } from './agents/index.ts';
import { createBillingModule } from './billing/index.ts';
import { createBrainModule } from './brain/index.ts';
import { createEntityGraphModule } from './entity-graph/index.ts';
import { createExtractor } from './entity-graph/extractor/index.ts';

/** What a service module may need beyond its stores and settings. */
export interface ServiceDeps {
  /** The process's clock (tests move it). */
  now: () => number;
  /** Where generated secrets are kept. */
  dataDir: string;
  billingConfig: BillingConfig;
  /**
   * The billing service, for services that enforce a plan's entitlements (the brain's memories,
   * the agents service's members). Resolved on first use: in one process it is built after the modules.
   */
  billing: () => Client<typeof BillingService>;
  /** The entity-graph service, which the brain tells of memory writes; resolved on first use too. Absent: no graph. */
  entityGraph?: () => Client<typeof EntityGraphService>;
  /** The brain's SeedingService, which scheduled jobs' seeding targets start runs of; absent: they are refused. */
  seeding?: () => Client<typeof SeedingService>;
}

type ModuleFactory<S> = (stores: S, logger: Logger, config: ModuleConfig, deps: ServiceDeps) => RpcServiceModule;

/** The services that keep records only: as their own process they open no vectors and no model. */
export const RECORD_SERVICE_MODULES: Record<Exclude<ServiceName, 'brain'>, ModuleFactory<RecordStores>> = {
  'entity-graph': (stores, logger, config) =>
    createEntityGraphModule(stores, logger, { extractor: createExtractor(config.entityGraph, logger) }),
  agents: createAgentsModule,
  billing: createBillingModule,
};

/** Every internal service, by the name used in configuration. */
export const SERVICE_MODULES: Record<ServiceName, ModuleFactory<Stores>> = {
  brain: createBrainModule,
  ...RECORD_SERVICE_MODULES,
};
