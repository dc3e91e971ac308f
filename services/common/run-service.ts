// Entry point shared by the services when each runs as its own process.
import os from 'node:os';
import { readServiceConfig, type ServiceName } from './config.ts';
import { resolveInternalToken } from './internal-token.ts';
import { createLogger } from './log.ts';
import { onShutdown, readConfigOrExit } from './process.ts';
import { startRpcServer } from './rpc/server.ts';
import { VectorFileLockedError } from './storage/vectors/process-lock.ts';
import { openStores } from './stores.ts';
import { SERVICE_MODULES } from '../modules.ts';

export async function runService(name: ServiceName): Promise<void> {
  const config = readConfigOrExit(() => readServiceConfig(process.env, name, os.availableParallelism()));
  const logger = createLogger({ level: config.logLevel, name });
  const internalToken = resolveInternalToken(config.internalToken, config.storage.dataDir);
  const stores = await openStores(config.storage).catch((error: unknown) => {
    // A second process on the same embedded vector file: one line naming the holder, exit 2.
    if (!(error instanceof VectorFileLockedError)) throw error;
    process.stderr.write(`${name}: ${error.message}\n`);
    process.exit(2);
  });
  const server = await startRpcServer({
    module: SERVICE_MODULES[name](stores, logger),
    host: config.host,
    port: config.port,
    internalToken,
    logger,
  });
  logger.info({ address: server.address }, `${name} gRPC listening on ${server.address}`);
  onShutdown(async () => {
    await server.close(config.shutdownGraceMs);
    await stores.close();
  }, (msg) => logger.info(msg));
}
