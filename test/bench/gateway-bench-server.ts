// The gateway of the benchmark, alone in its own process so that its CPU time can be measured:
// the real gateway surface and listener (routing, credentials, path checks, one pino access
// line per request at info), in front of the benchmark backend, as `bench` and, with a tool
// policy (whose MCP messages the gateway parses), as `bench-policy` and `bench-policy-sse`. Log lines go to /dev/null:
// `turn` (default, what the platform's logger does) writes each event-loop turn's lines in one
// write(2); `sync` writes each line with its own write(2), as pino's default destination does;
// `buffered` batches them in 4 KiB asynchronous writes on libuv's thread pool; `off` is
// ACCESS_LOG=false.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { readEdgeConfig } from '../../edge/config.ts';
import type { AppContext } from '../../edge/context.ts';
import { createGatewaySurface } from '../../edge/gateway/index.ts';
import { startListener } from '../../edge/http/listener.ts';
import { disableAllocationSitePretenuring } from '../../edge/gateway/v8-tuning.ts';
import { createLogger, createTurnBatchedDestination } from '../../services/common/log.ts';
import { createRecordStore } from '../../services/common/storage/records/index.ts';
import { createClient, createRouterTransport } from '@connectrpc/connect';
import { GatewayRegistryService } from '../../gen/mindgate/agents/v1/gateway_registry_pb.js';
import { gatewayModule } from '../../services/agents/gateway-module.ts';
import { createKeyEncryption } from '../../services/common/key-encryption.ts';

const backend = process.argv[2];
const logMode = process.argv[3] || 'turn';
const pretenuring = process.argv[4] === 'pretenuring';
// GATEWAY_BACKEND_CLIENT: builtin (default) or undici.
const backendClient = process.argv[5] || 'builtin';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-gateway-bench-'));
const serversFile = path.join(dataDir, 'servers.yaml');
fs.writeFileSync(
  serversFile,
  `default_server: bench
servers:
  - name: bench
    url: ${backend}
    oauth: { issuer: "http://127.0.0.1:9", client_id: bench, client_secret: bench-secret, scopes: [openid] }
  - name: bench-policy
    url: ${backend}
    oauth: { issuer: "http://127.0.0.1:9", client_id: bench, client_secret: bench-secret, scopes: [openid] }
    tool_policy: { deny: ["admin_*", delete_everything] }
  - name: bench-policy-sse
    url: ${backend}
    mcp_path: sse
    oauth: { issuer: "http://127.0.0.1:9", client_id: bench, client_secret: bench-secret, scopes: [openid] }
    tool_policy: { deny: ["admin_*", delete_everything] }
`,
);
const config = readEdgeConfig(
  {
    DATA_DIR: dataDir,
    GATEWAY_SERVERS_FILE: serversFile,
    GATEWAY_STATE_SECRET: 'bench-state-secret-0123456789abcdef0123',
    GATEWAY_KEYS: 'bench-operator-key-0123456789',
    LOG_LEVEL: 'info',
    ACCESS_LOG: logMode === 'off' ? 'false' : 'true',
    GATEWAY_V8_PRETENURING: String(pretenuring),
    GATEWAY_BACKEND_CLIENT: backendClient,
  },
  os.availableParallelism(),
);
const logger = createLogger(
  { level: 'info' },
  logMode === 'sync'
    ? pino.destination({ dest: '/dev/null', sync: true })
    : logMode === 'buffered'
      ? pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 })
      : createTurnBatchedDestination(fs.openSync('/dev/null', 'w')),
);
// This file is the process entry point here, as edge/main.ts is in production.
if (!config.gateway.v8Pretenuring) disableAllocationSitePretenuring();
const records = await createRecordStore(config.storage);
// The registry the gateway polls, served by the agents service's own code over an in-memory transport.
const gateway = gatewayModule(records, Date.now);
const gatewayRegistry = createClient(
  GatewayRegistryService,
  createRouterTransport((router) => gateway.routes(router)),
);
const ctx = {
  config,
  logger,
  clients: { gatewayRegistry },
  stores: { records },
  keyEncryption: createKeyEncryption(['bench-key-encryption-key-0123456789abcdef']),
  now: Date.now,
} as unknown as AppContext;
const listener = await startListener(createGatewaySurface(ctx), {
  host: '127.0.0.1',
  port: 0,
  logger,
  accessLogLevel: config.accessLog ? 'info' : 'debug',
});
process.stdout.write(`${JSON.stringify({ port: listener.port })}\n`);
process.on('message', (m) => {
  if (m === 'cpu') process.send!(process.cpuUsage());
});
const stop = async () => {
  await listener.close(0);
  await records.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.on('disconnect', () => void stop());
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
