// How long a change to the gateway's registry takes to reach a second replica: two edges sharing a
// MongoDB-wire server (mongo-java-server, scripts/install-test-tools.sh), one in this process, one
// in its own process (`node edge/main.ts`). Each round registers a server through the first
// replica's agents service and times until the second replica's gateway serves it, then removes
// it and times until the second answers 404. Run once per poll interval:
//   ./node_modules/.bin/node test/bench/gateway-registry.bench.ts [--polls=1000,250] [--changes=30]
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { McpAuthKind } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { readEdgeConfig } from '../../edge/config.ts';
import { startPlatform } from '../../edge/platform.ts';
import { createLogger } from '../../services/common/log.ts';
import { startEdgeProcess } from '../support/edge-process.ts';
import { startMongoWireServer } from '../support/mongo-server.ts';
import { testEnv } from '../support/platform.ts';

const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? 'true'] as const;
  }),
);
const POLLS = (args.get('polls') ?? '1000,250').split(',').map(Number);
const CHANGES = Number(args.get('changes') ?? 30);

const backend = http.createServer((_req, res) => res.end('ok'));
await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
const backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
const mongo = await startMongoWireServer();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-registry-bench-'));
const kek = path.join(dir, 'kek');
fs.writeFileSync(kek, crypto.randomBytes(32).toString('base64url'), { mode: 0o600 });

const percentile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

async function timeUntil(url: string, status: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const res = await fetch(url);
    await res.arrayBuffer();
    if (res.status === status) return performance.now() - started;
    await new Promise((r) => setTimeout(r, 2));
  }
}

console.log(
  `registry propagation: ${os.cpus().length} cores, Node ${process.version}, ${mongo.description}, ${CHANGES} changes per interval, load average ${os.loadavg()[0].toFixed(2)}`,
);
for (const poll of POLLS) {
  const shared = {
    MONGODB_URL: mongo.url,
    MONGODB_DATABASE: `registry_bench_${poll}_${crypto.randomBytes(3).toString('hex')}`,
    KEY_ENCRYPTION_KEY_FILE: kek,
    INTERNAL_TOKEN: crypto.randomBytes(24).toString('base64url'),
    GATEWAY_STATE_SECRET: crypto.randomBytes(24).toString('base64url'),
    GATEWAY_REGISTRY_POLL_MS: String(poll),
  };
  const dataDir = fs.mkdtempSync(path.join(dir, 'first-'));
  const config = readEdgeConfig(testEnv(dataDir, { ...shared, LOG_LEVEL: 'silent' }), os.availableParallelism());
  const first = await startPlatform({ config, logger: createLogger({ level: 'silent' }) });
  // At info: its listeners' start lines say where they listen.
  const second = await startEdgeProcess(shared);
  const added: number[] = [];
  const removed: number[] = [];
  for (let i = 0; i < CHANGES; i++) {
    const name = `bench-${poll}-${i}`;
    const { server } = await first.ctx.clients.mcpServers.createMcpServer({
      organizationId: 'org_bench',
      server: { name, url: backendUrl, shared: true, enabled: true, auth: { kind: McpAuthKind.NONE } },
    });
    added.push(await timeUntil(`${second.urls.gateway}/${name}/x`, 200));
    await first.ctx.clients.mcpServers.deleteMcpServer({ organizationId: 'org_bench', serverId: server!.serverId });
    removed.push(await timeUntil(`${second.urls.gateway}/${name}/x`, 404));
    // Changes at random moments of the poll cycle, not in step with it.
    await new Promise((r) => setTimeout(r, Math.random() * poll));
  }
  for (const [what, xs] of [
    ['added', added],
    ['removed', removed],
  ] as const) {
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(
      `GATEWAY_REGISTRY_POLL_MS=${String(poll).padEnd(5)} ${what.padEnd(8)} mean ${mean.toFixed(0).padStart(5)} ms  p50 ${percentile(xs, 0.5).toFixed(0).padStart(5)} ms  p90 ${percentile(xs, 0.9).toFixed(0).padStart(5)} ms  max ${Math.max(
        ...xs,
      )
        .toFixed(0)
        .padStart(5)} ms`,
    );
  }
  await second.stop();
  await first.stop(0);
}
await mongo.stop();
backend.close();
fs.rmSync(dir, { recursive: true, force: true });
