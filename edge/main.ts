// `npm start`: the whole platform in one process on the embedded stores by default.
import os from 'node:os';
import { usePrivateFileModes } from '../services/common/data-dir.ts';
import { createLogger } from '../services/common/log.ts';
import { logStarted, onShutdown, readConfigOrExit, startOrExit } from '../services/common/process.ts';
import { readEdgeConfig } from './config.ts';
import { disableAllocationSitePretenuring } from './gateway/v8-tuning.ts';
import { startPlatform } from './platform.ts';

usePrivateFileModes();
const config = readConfigOrExit(() => readEdgeConfig(process.env, os.availableParallelism()));
const logger = createLogger({ level: config.logLevel, name: 'mindgate' });
// Process-wide, so decided here once, for every service in this process: the Brain's gRPC and
// MCP services run under the same setting as the gateway (edge/gateway/v8-tuning.ts).
if (!config.gateway.v8Pretenuring) disableAllocationSitePretenuring();
const platform = await startOrExit(() => startPlatform({ config, logger }), logger);
logStarted(logger, 'mindgate', platform.ctx.stores.description);

const labels = { gateway: 'gateway', api: 'REST API', web: 'Web API and site', auth: 'authorization server' } as const;
for (const [name, url] of Object.entries(platform.urls) as [keyof typeof labels, string][]) {
  logger.info({ listener: name, url, publicUrl: config.publicUrls[name] }, `${labels[name]} listening on ${url}`);
}
for (const [name, address] of Object.entries(platform.grpc)) {
  logger.info({ service: name, address }, `${name} gRPC service listening on ${address}`);
}
if (platform.metricsUrl) logger.info({ metrics: platform.metricsUrl }, `metrics on ${platform.metricsUrl}`);
onShutdown(
  () => platform.stop(),
  (msg) => logger.info(msg),
  { graceMs: config.shutdownGraceMs },
);
