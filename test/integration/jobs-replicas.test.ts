// Two replicas of the agents service firing the same jobs: a platform in this process and an
// agents service started as its own process (`node services/agents/main.ts`), both on one
// MongoDB-wire server, each with its scheduler polling every 50 ms on the real clock. Jobs firing
// every second for a few seconds: each occurrence is fired once, by one of the two, and starts
// exactly one run.
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionOutcome, MissedPolicy } from '../../gen/mindgate/agents/v1/jobs_pb.js';
import { Executor } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { startAgentsReplicaPair, type AgentsReplicaPair } from '../support/agents-replicas.ts';
import { shouldRunMongoSuite } from '../support/mongo-server.ts';
import type { TestPlatform } from '../support/platform.ts';
import type { ServiceProcess } from '../support/service-process.ts';

const ORG = 'org_jobsreplicas';
const JOBS = 6;

describe.runIf(shouldRunMongoSuite('jobs across replicas'))('scheduled jobs across two replicas', () => {
  let pair: AgentsReplicaPair;
  let first: TestPlatform;
  let second: ServiceProcess;

  beforeAll(async () => {
    pair = await startAgentsReplicaPair('jobs-replicas', { env: { JOBS_POLL_MS: '50' }, processEnv: { LOG_LEVEL: 'debug' } });
    ({ first, second } = pair);
  }, 300_000);

  afterAll(async () => {
    await pair?.stop();
  });

  it('fires each occurrence once, on one replica, with one run', async () => {
    const jobs = first.ctx.clients.jobs;
    const created = await Promise.all(
      Array.from({ length: JOBS }, async (_, i) => {
        const { job } = await jobs.createJob({
          organizationId: ORG,
          name: `every second ${i}`,
          schedule: '* * * * * *',
          enabled: true,
          missedPolicy: MissedPolicy.SKIP,
          target: { kind: { case: 'run', value: { titleTemplate: `tick ${i} {occurrence}`, executor: Executor.EXTERNAL } } },
          createdBy: 'usr_a',
        });
        return job!;
      }),
    );
    await new Promise((r) => setTimeout(r, 4_000));
    await Promise.all(created.map((job) => jobs.pauseJob({ organizationId: ORG, jobId: job.jobId })));
    // A firing that read the job before the pause ends within its poll.
    await new Promise((r) => setTimeout(r, 500));
    let total = 0;
    const runIds = new Set<string>();
    for (const job of created) {
      const { executions } = await jobs.listJobExecutions({ organizationId: ORG, jobId: job.jobId, pageSize: 100 });
      const scheduled = executions.filter((e) => e.outcome !== ExecutionOutcome.SKIPPED);
      const occurrences = scheduled.map((e) => timestampMs(e.occurrenceTime!));
      expect(new Set(occurrences).size).toBe(occurrences.length);
      expect(scheduled.every((e) => e.outcome === ExecutionOutcome.SUCCEEDED && e.runId !== '')).toBe(true);
      for (const e of scheduled) runIds.add(e.runId);
      total += scheduled.length;
    }
    expect(total).toBeGreaterThanOrEqual(JOBS * 2);
    expect(runIds.size).toBe(total);
    const runs = await first.ctx.clients.runs.listRuns({ organizationId: ORG, pageSize: 100 });
    expect(runs.runs.length).toBe(total);
    // Both replicas took part: the separate process fired some occurrences, this one the rest.
    const bySecond = second.logs.filter((l) => l.msg === 'job occurrence fired').length;
    expect(bySecond).toBeGreaterThan(0);
    expect(bySecond).toBeLessThan(total);
  }, 60_000);
});
