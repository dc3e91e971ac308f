// Entry point shared by the services when each runs as its own process.
import os from 'node:os';
import { readServiceConfig, SERVICE_PORTS, type ServiceConfig, type ServiceName } from './config.ts';
import { resolveInternalToken } from './internal-token.ts';
import { usePrivateFileModes } from './data-dir.ts';
import { createLogger } from './log.ts';
import { startMetricsListener, type MetricsListener } from './metrics/listener.ts';
import { createMetrics } from './metrics/registry.ts';
import { logStarted, onShutdown, readConfigOrExit, startOrExit } from './process.ts';
import { startRpcServer } from './rpc/server.ts';
import { openRecordStores, openStores } from './stores.ts';
import { RECORD_SERVICE_MODULES, SERVICE_MODULES, type ServiceDeps } from '../modules.ts';
import { createBillingClient } from '../billing/client.ts';
import { readBillingConfig, type BillingConfig } from '../billing/config.ts';
import { createEntityGraphClient } from '../entity-graph/client.ts';
import { createSeedingClient } from '../brain/seeding/client.ts';
import type { Logger } from './log.ts';
import type { RpcServiceModule } from './rpc/server.ts';
import type { RecordStores } from './stores.ts';

/**
 * What the module needs beyond its stores: billing at BILLING_SERVICE_ADDR and the entity graph at
 * ENTITY_GRAPH_SERVICE_ADDR, or their code in this process over the same stores; the brain's
 * seeding at BRAIN_SERVICE_ADDR (the agents service's seeding targets), or none.
 */
function serviceDeps(
  stores: RecordStores,
  logger: Logger,
  config: ServiceConfig,
  billingConfig: BillingConfig,
  internalToken: string,
): ServiceDeps {
  let billing: ReturnType<typeof createBillingClient> | undefined;
  let graph: ReturnType<typeof createEntityGraphClient> | undefined;
  const deps: ServiceDeps = {
    now: Date.now,
    dataDir: config.storage.dataDir,
    billingConfig,
    billing: () =>
      (billing ??= createBillingClient({
        address: config.billingAddress,
        module: () => RECORD_SERVICE_MODULES.billing(stores, logger, config, deps),
        internalToken,
        logger,
      })),
    entityGraph: () =>
      (graph ??= createEntityGraphClient({
        address: config.entityGraphAddress,
        module: () => RECORD_SERVICE_MODULES['entity-graph'](stores, logger, config, deps),
        internalToken,
        logger,
      })),
  };
  // The brain keeps vectors, so its code never runs inside another service's process: reached over gRPC, or not at all.
  const brainAddress = config.brainAddress;
  if (brainAddress) {
    let seeding: ReturnType<typeof createSeedingClient> | undefined;
    deps.seeding = () => (seeding ??= createSeedingClient({ address: brainAddress, internalToken }));
  }
  return deps;
}

interface OpenedService {
  stores: RecordStores;
  /** The service's module over those stores. */
  create(deps: ServiceDeps): RpcServiceModule;
}

/** The brain keeps vectors; every other service opens its records store alone (no embeddings model). */
async function openService(name: ServiceName, config: ServiceConfig, logger: Logger): Promise<OpenedService> {
  if (name === 'brain') {
    const stores = await openStores(config.storage, { logger });
    return { stores, create: (deps) => SERVICE_MODULES.brain(stores, logger, config, deps) };
  }
  const stores = await openRecordStores(config.storage, { logger });
  return { stores, create: (deps) => RECORD_SERVICE_MODULES[name](stores, logger, config, deps) };
}

export async function runService(name: ServiceName): Promise<void> {
  usePrivateFileModes();
  const config = readConfigOrExit(() => readServiceConfig(process.env, name, os.availableParallelism()));
  const billingConfig = readConfigOrExit(() => readBillingConfig(process.env));
  const logger = createLogger({ level: config.logLevel, name });
  const metrics = createMetrics();
  const { stores, server, metricsListener } = await startOrExit(async () => {
    const { stores, create } = await openService(name, config, logger);
    let metricsListener: MetricsListener | undefined;
    try {
      if (config.metrics) metricsListener = await startMetricsListener({ ...config.metrics, registry: metrics.registry, logger });
      const internalToken = resolveInternalToken(config.internalToken, config.storage.dataDir);
      const server = await startRpcServer({
        module: create(serviceDeps(stores, logger, config, billingConfig, internalToken)),
        host: config.host,
        port: config.port,
        settings: { host: 'GRPC_HOST', port: SERVICE_PORTS[name].variable },
        handshakeTimeoutMs: config.handshakeTimeoutMs,
        idleTimeoutMs: config.idleTimeoutMs,
        internalToken,
        logger,
        metrics,
      });
      return { stores, server, metricsListener };
    } catch (err) {
      await metricsListener?.close();
      await stores.close();
      throw err;
    }
  }, logger);
  logStarted(logger, name, stores.description);
  logger.info({ address: server.address }, `${name} gRPC listening on ${server.address}`);
  if (metricsListener) logger.info({ metrics: metricsListener.url }, `${name} metrics on ${metricsListener.url}`);
  onShutdown(
    async () => {
      await server.close(config.shutdownGraceMs);
      await metricsListener?.close();
      await stores.close();
    },
    (msg) => logger.info(msg),
    { graceMs: config.shutdownGraceMs },
  );
}
