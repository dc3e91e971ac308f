// SIGTERM with long-lived streams open: a gRPC health Watch on a service port and an SSE stream
// proxied by the gateway. Every listener and port drains at the same time, so the process exits
// within one SHUTDOWN_GRACE_MS (plus the time to close the stores), not one grace per kind of
// port; the streams are ended at the grace limit; new gRPC calls are refused as soon as the
// drain starts.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createClient, createRouterTransport } from '@connectrpc/connect';
import { afterAll, describe, expect, it } from 'vitest';
import { Health } from '../../gen/grpc/health/v1/health_pb.js';
import { BillingService } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { createLogger } from '../../services/common/log.ts';
import { REASONS, reasonOf } from '../../services/common/rpc/reasons.ts';
import { createRpcRoutes, rpcRouterOptions } from '../../services/common/rpc/server.ts';
import { SERVICE_MODULES } from '../../services/modules.ts';
import { grpc, loadServiceClient } from '../support/grpc-js.ts';
import { startTestPlatform, testEnv } from '../support/platform.ts';
import { inheritedEnv } from '../support/child-env.ts';

const root = path.resolve(import.meta.dirname, '../..');
const GRACE_MS = 6_000;
/** Closing the stores and the embedding threads after the drain; generous on a busy machine. */
const MARGIN_MS = 4_000;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A backend whose every path is an SSE stream that never ends on its own. */
async function startSseBackend() {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    res.write('data: hello\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const HealthClient = loadServiceClient('grpc/health/v1/health.proto', 'grpc.health.v1.Health');

describe('SIGTERM with a health Watch and an SSE stream open', () => {
  it('drains every port together, refuses new gRPC calls at once and exits within the grace', async () => {
    const backend = await startSseBackend();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-shutdown-'));
    dirs.push(dataDir);
    const serversFile = path.join(dataDir, '..', `${path.basename(dataDir)}-servers.yaml`);
    dirs.push(serversFile);
    fs.writeFileSync(serversFile, `servers:\n  - name: events\n    url: ${backend.url}\n`);
    const child = spawn(process.execPath, ['edge/main.ts'], {
      cwd: root,
      env: {
        ...inheritedEnv(),
        ...testEnv(dataDir),
        LOG_LEVEL: 'info',
        SHUTDOWN_GRACE_MS: String(GRACE_MS),
        GATEWAY_SERVERS_FILE: serversFile,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const lines = readline.createInterface({ input: child.stdout! });
    const draining = new Promise<void>((resolve) => lines.on('line', (line) => line.includes('received, draining') && resolve()));
    const { gateway, brain } = await new Promise<{ gateway: string; brain: string }>((resolve, reject) => {
      const found: Record<string, string> = {};
      lines.on('line', (line) => {
        const entry = JSON.parse(line);
        if (entry.listener === 'gateway') found.gateway = entry.url;
        if (entry.service === 'brain' && entry.address) found.brain = entry.address;
        if (found.gateway && found.brain) resolve(found as { gateway: string; brain: string });
      });
      exited.then((code) => reject(new Error(`platform exited with ${code}`)));
    });

    // A health Watch: a stream the service never ends by itself.
    const watcher = new HealthClient(brain, grpc.credentials.createInsecure());
    const watch = (watcher as unknown as { watch(req: unknown): grpc.ClientReadableStream<{ status: string }> }).watch({ service: '' });
    const watchEnded = new Promise<void>((resolve) => {
      watch.on('error', () => resolve());
      watch.on('end', () => resolve());
    });
    await new Promise<void>((resolve) => watch.once('data', () => resolve()));
    // An SSE stream through the gateway's proxy.
    const sse = await fetch(`${gateway}/events/events`);
    expect(sse.headers.get('content-type')).toBe('text/event-stream');
    const reader = sse.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('hello');
    const sseEnded = (async () => {
      try {
        while (!(await reader.read()).done);
      } catch {
        // Cut by the platform at the grace limit: ended all the same.
      }
    })();

    const signalled = performance.now();
    child.kill('SIGTERM');
    await draining;
    // The HTTP listeners are still draining (the SSE stream is open): gRPC refuses new calls now.
    const late = new HealthClient(brain, grpc.credentials.createInsecure());
    const refused = await new Promise<grpc.ServiceError | null>((resolve) =>
      (late as unknown as { check(req: unknown, cb: (err: grpc.ServiceError | null) => void): void }).check({ service: '' }, resolve),
    );
    late.close();
    expect(refused?.code).toBe(grpc.status.UNAVAILABLE);

    expect(await exited).toBe(0);
    const tookMs = performance.now() - signalled;
    await watchEnded;
    await sseEnded;
    watcher.close();
    backend.server.closeAllConnections();
    backend.server.close();
    console.log(`exit ${Math.round(tookMs)} ms after SIGTERM with SHUTDOWN_GRACE_MS=${GRACE_MS}`);
    expect(tookMs).toBeLessThan(GRACE_MS + MARGIN_MS);
  }, 120_000);
});

describe('a draining service', () => {
  it('refuses a new call with UNAVAILABLE and the shutting-down reason', async () => {
    const platform = await startTestPlatform();
    try {
      const module = SERVICE_MODULES.billing(platform.ctx.stores, createLogger({ level: 'silent' }), platform.ctx.config.services.billing, {
        now: Date.now,
        dataDir: platform.dataDir,
        billingConfig: platform.ctx.config.billing,
        billing: () => platform.ctx.clients.billing,
      });
      const options = rpcRouterOptions({
        module,
        internalToken: platform.internalToken,
        logger: createLogger({ level: 'silent' }),
        draining: () => true,
      });
      const transport = createRouterTransport(createRpcRoutes({ module }), { router: options });
      const err = await createClient(BillingService, transport)
        .getEntitlements({ organizationId: 'org-1' }, { headers: { 'x-internal-token': platform.internalToken } })
        .catch((e) => e);
      expect(err.code).toBe(14);
      expect(reasonOf(err)).toBe(REASONS.shuttingDown);
      const health = await createClient(Health, transport)
        .check({ service: '' })
        .catch((e) => e);
      expect(health.code).toBe(14);
    } finally {
      await platform.stop();
    }
  }, 60_000);
});
