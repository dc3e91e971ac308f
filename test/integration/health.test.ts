// Liveness and readiness told apart on every listener and gRPC port: `/livez` never depends on a
// store, `/readyz` (and the health service's readiness names) follow the stores and the services
// a process needs, going false when one stops answering and true again when it is back.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_NAMES } from '../../services/common/config.ts';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts';
import { grpc, loadServiceClient, unary } from '../support/grpc-js.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { sample } from '../support/prometheus.ts';
import { reservePorts } from '../support/ports.ts';

const root = path.resolve(import.meta.dirname, '../..');
const HealthClient = loadServiceClient('grpc/health/v1/health.proto', 'grpc.health.v1.Health');
const SURFACES = ['gateway', 'api', 'web', 'auth'] as const;
const TYPE_NAMES = {
  brain: 'mindgate.brain.v1.BrainService',
  'entity-graph': 'mindgate.entitygraph.v1.EntityGraphService',
  agents: 'mindgate.agents.v1.AgentsService',
  billing: 'mindgate.billing.v1.BillingService',
} as const;

interface ReadyBody {
  status: 'ready' | 'not_ready';
  listener: string;
  not_ready?: string[];
  checks: { name: string; ok: boolean; ms: number; reason?: string }[];
}

async function probe(url: string): Promise<{ status: number; body: ReadyBody }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as ReadyBody };
}

/** grpc.health.v1 Check over the network port, with grpc-js. */
async function grpcHealth(address: string, service: string): Promise<string> {
  const client = new HealthClient(address, grpc.credentials.createInsecure());
  try {
    return (await unary<{ status: string }>(client, 'check', { service })).status;
  } finally {
    client.close();
  }
}

async function until(condition: () => Promise<boolean>, what: string, limitMs = 60_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('probes on the embedded platform', () => {
  let platform: TestPlatform;
  const logs: string[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform({ METRICS_PORT: '0', READINESS_TIMEOUT_MS: '500' }, { logs });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
  });

  it('answers /livez and /readyz on every listener, each naming what it needs', async () => {
    const needs: Record<(typeof SURFACES)[number], string[]> = {
      gateway: ['records', 'brain', 'billing'],
      api: ['records', 'agents', 'billing'],
      web: ['records'],
      auth: ['records', 'agents'],
    };
    for (const surface of SURFACES) {
      const live = await fetch(`${platform.urls[surface]}/livez`);
      expect(live.status, surface).toBe(200);
      expect(live.headers.get('cache-control')).toBe('no-store');
      expect(await live.json()).toEqual({ status: 'ok', listener: surface });
      const ready = await probe(`${platform.urls[surface]}/readyz`);
      expect(ready.status, surface).toBe(200);
      expect(ready.body.status).toBe('ready');
      expect(ready.body.checks.map((c) => c.name)).toEqual(needs[surface]);
      expect(ready.body.checks.every((c) => c.ok && c.ms >= 0)).toBe(true);
    }
    // HEAD works as GET; /health keeps its documented body.
    expect((await fetch(`${platform.urls.api}/readyz`, { method: 'HEAD' })).status).toBe(200);
    expect(await (await fetch(`${platform.urls.gateway}/health`)).json()).toEqual({ status: 'ok', service: 'gateway', version: '0.3.0' });
    // Probes come every few seconds: their access lines are debug, other requests' info.
    const access = logs.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request');
    expect(access.filter((e) => e.path === '/livez' || e.path === '/readyz').every((e) => e.level === 20)).toBe(true);
    expect(access.find((e) => e.path === '/health')?.level).toBe(30);
  });

  it('tells liveness from readiness on every gRPC port by service name', async () => {
    for (const name of SERVICE_NAMES) {
      const address = platform.grpc[name]!;
      for (const service of ['', 'liveness', 'readiness', TYPE_NAMES[name]]) {
        expect(await grpcHealth(address, service), `${name} "${service}"`).toBe('SERVING');
      }
      await expect(grpcHealth(address, 'nope.Service')).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    }
  });

  it('exports requests per listener, calls per method and code, process and vector-sync figures', async () => {
    await fetch(`${platform.urls.web}/livez`);
    await fetch(`${platform.urls.web}/no-such-page`);
    await grpcHealth(platform.grpc.billing!, 'readiness');
    const res = await fetch(platform.metricsUrl!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(sample(text, 'mindgate_http_request_duration_seconds_count', { listener: 'web', method: 'GET', status: '200' })).toBeGreaterThan(
      0,
    );
    expect(sample(text, 'mindgate_http_request_duration_seconds_count', { listener: 'web', method: 'GET', status: '404' })).toBeGreaterThan(
      0,
    );
    const checks = { grpc_service: 'grpc.health.v1.Health', grpc_method: 'Check', grpc_code: 'OK' };
    expect(sample(text, 'grpc_server_handled_total', checks)).toBeGreaterThan(0);
    expect(sample(text, 'grpc_server_handling_seconds_count', { grpc_service: 'grpc.health.v1.Health' })).toBeGreaterThan(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'mindgate_brain_vector_sync_pending')).toBe(0);
    expect(sample(text, 'mindgate_brain_vector_sync_overdue')).toBe(0);
    // Only /metrics is served there.
    expect((await fetch(platform.metricsUrl!.replace('/metrics', '/'))).status).toBe(404);
    expect(platform.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  });

  it('a Brain whose vector store is gone is not ready, the gateway with it, while liveness holds', async () => {
    await platform.ctx.stores.vectors.close();
    await until(async () => (await grpcHealth(platform.grpc.brain!, 'readiness')) === 'NOT_SERVING', 'brain not ready');
    expect(await grpcHealth(platform.grpc.brain!, TYPE_NAMES.brain)).toBe('NOT_SERVING');
    expect(await grpcHealth(platform.grpc.brain!, '')).toBe('SERVING');
    expect(await grpcHealth(platform.grpc.brain!, 'liveness')).toBe('SERVING');
    // The other services keep no vectors.
    expect(await grpcHealth(platform.grpc.agents!, 'readiness')).toBe('SERVING');
    const gateway = await probe(`${platform.urls.gateway}/readyz`);
    expect(gateway.status).toBe(503);
    expect(gateway.body).toMatchObject({ status: 'not_ready', listener: 'gateway', not_ready: ['brain'] });
    expect(gateway.body.checks.find((c) => c.name === 'brain')).toMatchObject({ ok: false, reason: 'NOT_SERVING' });
    // The listeners that do not call the Brain stay ready.
    for (const surface of ['api', 'web', 'auth'] as const)
      expect((await probe(`${platform.urls[surface]}/readyz`)).status, surface).toBe(200);
    expect((await probe(`${platform.urls.gateway}/readyz?exclude=brain`)).status).toBe(200);
    expect((await fetch(`${platform.urls.gateway}/livez`)).status).toBe(200);
  });
});

describe.runIf(shouldRunMongoSuite('health: MongoDB cut and restored'))('records on MongoDB, cut and restored', () => {
  let mongo: MongoWireServer;
  let proxy: FaultProxy;
  let platform: TestPlatform;

  beforeAll(async () => {
    mongo = await startMongoWireServer();
    const target = new URL(mongo.url.replace('mongodb://', 'http://'));
    proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port) });
    platform = await startTestPlatform({
      MONGODB_URL: `mongodb://${proxy.address}/?directConnection=true`,
      MONGODB_DATABASE: `health_${Date.now()}`,
      READINESS_TIMEOUT_MS: '500',
    });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    await proxy?.close();
    await mongo?.stop();
  });

  const allReady = async (want: boolean) => {
    for (const surface of SURFACES) {
      if ((await probe(`${platform.urls[surface]}/readyz`)).status !== (want ? 200 : 503)) return false;
    }
    for (const name of SERVICE_NAMES) {
      if ((await grpcHealth(platform.grpc[name]!, 'readiness')) !== (want ? 'SERVING' : 'NOT_SERVING')) return false;
    }
    return true;
  };

  it('readiness goes false on every listener and port while liveness holds, and comes back by itself', async () => {
    expect(await allReady(true)).toBe(true);
    proxy.cut();
    await until(() => allReady(false), 'not ready everywhere');
    const web = await probe(`${platform.urls.web}/readyz`);
    expect(web.body.checks).toEqual([expect.objectContaining({ name: 'records', ok: false })]);
    for (const surface of SURFACES) expect((await fetch(`${platform.urls[surface]}/livez`)).status).toBe(200);
    for (const name of SERVICE_NAMES) {
      expect(await grpcHealth(platform.grpc[name]!, '')).toBe('SERVING');
      expect(await grpcHealth(platform.grpc[name]!, 'liveness')).toBe('SERVING');
    }
    proxy.restore();
    await until(() => allReady(true), 'ready again everywhere', 90_000);
  }, 180_000);
});

interface BrainProcess {
  child: ChildProcess;
  address: string;
  metricsUrl: string;
}

async function startBrainProcess(dataDir: string, port: number, token: string): Promise<BrainProcess> {
  const child = spawn(process.execPath, ['services/brain/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      DATA_DIR: dataDir,
      BRAIN_GRPC_PORT: String(port),
      METRICS_PORT: '0',
      INTERNAL_TOKEN: token,
      EMBEDDINGS_THREADS: '1',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const seen: { address?: string; metrics?: string } = {};
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('brain did not start')), 90_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line);
      if (entry.address) seen.address = entry.address;
      if (entry.metrics) seen.metrics = entry.metrics;
      if (seen.address && seen.metrics) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`brain exited with ${code}`)));
  });
  return { child, address: seen.address!, metricsUrl: seen.metrics! };
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('the edge with the Brain in its own process', () => {
  const token = 'a-shared-internal-token-of-at-least-32-chars';
  const brainDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-health-brain-'));
  let brain: BrainProcess;
  let platform: TestPlatform;

  beforeAll(async () => {
    brain = await startBrainProcess(brainDir, (await reservePorts(1))[0], token);
    platform = await startTestPlatform({ BRAIN_SERVICE_ADDR: brain.address, INTERNAL_TOKEN: token, READINESS_TIMEOUT_MS: '500' });
  }, 180_000);

  afterAll(async () => {
    await platform?.stop();
    if (brain) await kill(brain.child);
    fs.rmSync(brainDir, { recursive: true, force: true });
  });

  it('the service process answers the liveness and readiness names and serves its metrics', async () => {
    expect(await grpcHealth(brain.address, 'liveness')).toBe('SERVING');
    expect(await grpcHealth(brain.address, 'readiness')).toBe('SERVING');
    expect((await probe(`${platform.urls.gateway}/readyz`)).status).toBe(200);
    const text = await (await fetch(brain.metricsUrl)).text();
    expect(sample(text, 'grpc_server_handled_total', { grpc_service: 'grpc.health.v1.Health', grpc_code: 'OK' })).toBeGreaterThan(0);
    expect(sample(text, 'mindgate_brain_vector_sync_pending')).toBe(0);
    expect(sample(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('the gateway is not ready while the Brain is down, and ready again once it is back', async () => {
    const port = Number(brain.address.split(':').at(-1));
    await kill(brain.child);
    await until(async () => (await probe(`${platform.urls.gateway}/readyz`)).status === 503, 'gateway not ready');
    const gateway = await probe(`${platform.urls.gateway}/readyz`);
    expect(gateway.body.not_ready).toEqual(['brain']);
    // The other listeners do not call the Brain; the edge process stays alive.
    expect((await probe(`${platform.urls.api}/readyz`)).status).toBe(200);
    expect((await fetch(`${platform.urls.gateway}/livez`)).status).toBe(200);
    brain = await startBrainProcess(brainDir, port, token);
    await until(async () => (await probe(`${platform.urls.gateway}/readyz`)).status === 200, 'gateway ready again');
  }, 180_000);
});

describe('a metrics port in use', () => {
  it('stops the start with one line naming the setting, and exit code 2', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as net.AddressInfo;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-metrics-port-'));
    try {
      const child = spawn(process.execPath, ['services/billing/main.ts'], {
        cwd: root,
        env: { PATH: process.env.PATH, DATA_DIR: dataDir, BILLING_GRPC_PORT: '0', METRICS_PORT: String(port), EMBEDDINGS_THREADS: '1' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (chunk) => (stderr += chunk));
      const code = await new Promise((resolve) => child.once('exit', resolve));
      expect(code).toBe(2);
      expect(stderr.trim()).toBe(`start refused: METRICS_PORT: port ${port} on 127.0.0.1 is already in use (by another process)`);
    } finally {
      holder.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
