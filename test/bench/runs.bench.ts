// Run queue benchmark: RUNS runs queued at once, worked by two replicas (two claimer pools, each
// with its own gRPC connection to the agents service's port, WORKERS workers each), every worker
// looping claim → one step → complete, as an executor does without its model time. It measures
// claim-to-first-step latency (the claim call plus the first ReportStep) and the throughput of
// finished runs, on the embedded records store and on the MongoDB-wire test server, and checks
// that no run was claimed twice.
//
//   ./node_modules/.bin/node test/bench/runs.bench.ts          (RUNS=400 WORKERS=4)
import type { Client } from '@connectrpc/connect';
import { RunsService, RunStatus, StepKind } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { internalClient } from '../support/internal-grpc.ts';
import { mongoWireServerAvailability, startMongoWireServer } from '../support/mongo-server.ts';
import { startTestPlatform } from '../support/platform.ts';
import { percentile, printTable } from './support.ts';

const RUNS = Number(process.env.RUNS ?? 400);
const WORKERS = Number(process.env.WORKERS ?? 4);
const ORG = 'org_bench1';

type Runs = Client<typeof RunsService>;

async function worker(runs: Runs, agentId: string, firstStep: number[], seen: string[]): Promise<void> {
  for (;;) {
    const started = performance.now();
    const claim = await runs.claimRun({ agentId, leaseSeconds: 60 });
    if (!claim.run) return;
    const lease = { organizationId: claim.run.organizationId, runId: claim.run.runId, leaseId: claim.leaseId };
    await runs.reportStep({ ...lease, kind: StepKind.TOOL_CALL, name: 'bench', ok: true });
    firstStep.push(performance.now() - started);
    seen.push(claim.run.runId);
    await runs.completeRun({ ...lease, status: RunStatus.SUCCEEDED, output: 'done' });
  }
}

async function measureStore(name: string, env: Record<string, string>): Promise<Record<string, string | number>> {
  const platform = await startTestPlatform({ LOG_LEVEL: 'warn', INTERNAL_TOKEN: 'a-bench-internal-token-of-32-characters', ...env });
  try {
    const { threads, runs } = platform.ctx.clients;
    const { thread } = await threads.createThread({ organizationId: ORG, title: 'bench', message: 'go', createdBy: 'usr_bench' });
    for (let i = 0; i < RUNS; i += 1) await runs.createRun({ organizationId: ORG, threadId: thread!.threadId, createdBy: 'usr_bench' });
    const replicas = [0, 1].map(() => internalClient(RunsService, platform.grpc.agents!, platform.internalToken));
    const firstStep: number[] = [];
    const seen: string[] = [];
    const started = performance.now();
    await Promise.all(
      replicas.flatMap((r, i) => Array.from({ length: WORKERS }, (_, w) => worker(r, `replica-${i}-${w}`, firstStep, seen))),
    );
    const seconds = (performance.now() - started) / 1000;
    const distinct = new Set(seen).size;
    if (distinct !== RUNS) throw new Error(`${distinct} distinct runs were worked, of ${RUNS}`);
    const sorted = firstStep.sort((a, b) => a - b);
    return {
      store: name,
      runs: RUNS,
      'claimers (2 replicas)': 2 * WORKERS,
      'runs/s': Math.round(RUNS / seconds),
      'claim→first step p50 ms': percentile(sorted, 50).toFixed(1),
      'p99 ms': percentile(sorted, 99).toFixed(1),
      'claimed twice': seen.length - distinct,
    };
  } finally {
    await platform.stop();
  }
}

const rows = [await measureStore('embedded (SQLite)', {})];
if (mongoWireServerAvailability().available) {
  const mongo = await startMongoWireServer();
  try {
    rows.push(await measureStore('MongoDB wire (mongo-java-server)', { MONGODB_URL: mongo.url, MONGODB_DATABASE: `bench_${Date.now()}` }));
  } finally {
    await mongo.stop();
  }
}
printTable('Run queue: claim, one step, complete', rows);
