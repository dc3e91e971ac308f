// What each process of the Helm chart uses, measured: the four services and the edge as separate
// processes (as the chart runs them), records on the MongoDB-wire test server when it is installed
// (else embedded SQLite), vectors in the embedded store (no Qdrant server can run here), the
// offline embedding model with EMBEDDINGS_THREADS threads (the chart's default, 2). After an idle
// look, a mixed load runs for LOAD_SECONDS from this process: Brain writes and searches over gRPC
// (what the edge sends it for MCP tools), billing entitlements over gRPC, the Web API's blog search
// (the edge embeds the query) and /readyz on the edge. Every second each process's resident memory
// (VmRSS, and the peak VmHWM) and CPU time (utime + stime) are read from /proc.
//
//   ./node_modules/.bin/node test/bench/resources.bench.ts   (LOAD_SECONDS=30 CONCURRENCY=8 EMBEDDINGS_THREADS=2)
//
// The figures behind the chart's requests and limits (docs/operations.md, Resources).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { BillingService } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { BrainService, Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { mongoWireServerAvailability, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { reservePorts } from '../support/ports.ts';
import { printTable, syntheticMemory } from './support.ts';

const LOAD_SECONDS = Number(process.env.LOAD_SECONDS ?? 30);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const THREADS = process.env.EMBEDDINGS_THREADS ?? '2';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const token = 'a-bench-internal-token-of-at-least-32-characters';
const CLOCK_TICK = 100; // USER_HZ on Linux

interface Proc {
  name: string;
  child: ChildProcess;
  dir: string;
}

function start(
  name: string,
  script: string,
  env: Record<string, string>,
  ready: (entry: Record<string, unknown>) => boolean,
): Promise<Proc> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mindgate-resources-${name}-`));
  const child = spawn(process.execPath, [script], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      DATA_DIR: dir,
      INTERNAL_TOKEN: token,
      EMBEDDINGS_THREADS: THREADS,
      LOG_LEVEL: 'info',
      ACCESS_LOG: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (ready(JSON.parse(line))) resolve({ name, child, dir });
    });
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
}

function sampleProc(pid: number): { rss: number; hwm: number; cpu: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) / 1024;
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rss: kib('VmRSS'), hwm: kib('VmHWM'), cpu: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICK };
}

async function until(done: () => boolean, work: () => Promise<unknown>): Promise<number> {
  let n = 0;
  while (!done()) {
    await work().catch(() => undefined);
    n++;
  }
  return n;
}

async function main(): Promise<void> {
  let mongo: MongoWireServer | undefined;
  const records: Record<string, string> = {};
  if (mongoWireServerAvailability().available) {
    mongo = await startMongoWireServer();
    Object.assign(records, { MONGODB_URL: mongo.url, MONGODB_DATABASE: 'resources' });
  }
  const [brainPort, graphPort, agentsPort, billingPort, gateway, api, web, auth] = await reservePorts(8);
  const procs: Proc[] = [];
  const address = (e: Record<string, unknown>) => typeof e.address === 'string';
  procs.push(await start('brain', 'services/brain/main.ts', { ...records, BRAIN_GRPC_PORT: String(brainPort) }, address));
  procs.push(
    await start('entity-graph', 'services/entity-graph/main.ts', { ...records, ENTITY_GRAPH_GRPC_PORT: String(graphPort) }, address),
  );
  procs.push(await start('agents', 'services/agents/main.ts', { ...records, AGENTS_GRPC_PORT: String(agentsPort) }, address));
  procs.push(await start('billing', 'services/billing/main.ts', { ...records, BILLING_GRPC_PORT: String(billingPort) }, address));
  let listeners = 0;
  procs.push(
    await start(
      'edge',
      'edge/main.ts',
      {
        ...records,
        GATEWAY_PORT: String(gateway),
        API_PORT: String(api),
        WEB_PORT: String(web),
        AUTH_PORT: String(auth),
        BRAIN_SERVICE_ADDR: `127.0.0.1:${brainPort}`,
        ENTITY_GRAPH_SERVICE_ADDR: `127.0.0.1:${graphPort}`,
        AGENTS_SERVICE_ADDR: `127.0.0.1:${agentsPort}`,
        BILLING_SERVICE_ADDR: `127.0.0.1:${billingPort}`,
      },
      (e) => typeof e.listener === 'string' && typeof e.url === 'string' && ++listeners === 4,
    ),
  );
  try {
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const idle = new Map(procs.map((p) => [p.name, sampleProc(p.child.pid!)]));

    const interceptors = [
      (next: Parameters<import('@connectrpc/connect').Interceptor>[0]) => (req: Parameters<typeof next>[0]) => {
        req.header.set('x-internal-token', token);
        return next(req);
      },
    ];
    const brain = createClient(BrainService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${brainPort}`, interceptors }));
    const billing = createClient(BillingService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${billingPort}`, interceptors }));
    const peaks = new Map<string, number>();
    const before = new Map(procs.map((p) => [p.name, sampleProc(p.child.pid!).cpu]));
    const last = new Map(before);
    const sampler = setInterval(() => {
      for (const p of procs) {
        const now = sampleProc(p.child.pid!).cpu;
        peaks.set(p.name, Math.max(peaks.get(p.name) ?? 0, now - last.get(p.name)!));
        last.set(p.name, now);
      }
    }, 1_000);
    const end = Date.now() + LOAD_SECONDS * 1_000;
    const done = () => Date.now() > end;
    let written = 0;
    const counts = await Promise.all([
      ...Array.from({ length: CONCURRENCY }, () =>
        until(done, async () => {
          const m = syntheticMemory(written++);
          await brain.putMemory({ organizationId: 'org-bench', namespace: Namespace.KNOWLEDGE, ...m });
          await brain.searchMemories({ organizationId: 'org-bench', namespace: Namespace.KNOWLEDGE, query: m.title, limit: 5 });
        }),
      ),
      until(done, () => billing.getEntitlements({ organizationId: 'org-bench' })),
      until(done, () => fetch(`http://127.0.0.1:${web}/api/v1/blog/search?q=deploy+pipeline`).then((r) => r.arrayBuffer())),
      until(done, () => fetch(`http://127.0.0.1:${gateway}/readyz`).then((r) => r.arrayBuffer())),
    ]);
    clearInterval(sampler);
    const after = new Map(procs.map((p) => [p.name, sampleProc(p.child.pid!)]));
    console.log(
      `\n${LOAD_SECONDS} s of load, records on ${mongo ? 'the MongoDB-wire server' : 'embedded SQLite'}, ${THREADS} embedding threads: ` +
        `${counts.slice(0, CONCURRENCY).reduce((a, b) => a + b, 0)} Brain write+search pairs, ${counts[CONCURRENCY]} entitlements, ` +
        `${counts[CONCURRENCY + 1]} blog searches, ${counts[CONCURRENCY + 2]} /readyz`,
    );
    printTable(
      'per process (MiB of resident memory; CPU in cores)',
      procs.map((p) => ({
        process: p.name,
        'rss idle': Math.round(idle.get(p.name)!.rss),
        'rss after load': Math.round(after.get(p.name)!.rss),
        'rss peak': Math.round(after.get(p.name)!.hwm),
        'cpu avg': (after.get(p.name)!.cpu - before.get(p.name)!) / LOAD_SECONDS,
        'cpu peak 1 s': peaks.get(p.name) ?? 0,
      })),
    );
  } finally {
    for (const p of procs) {
      p.child.kill('SIGKILL');
      fs.rmSync(p.dir, { recursive: true, force: true });
    }
    await mongo?.stop();
  }
}

await main();
