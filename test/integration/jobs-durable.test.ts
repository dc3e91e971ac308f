// A replica killed in the middle of firing a job's occurrence: an agents service started as its own
// process (`node services/agents/main.ts`) on a MongoDB-wire server, reaching it through a proxy
// that stops the process at a chosen write (test/support/freezing-proxy.ts), is killed with
// SIGKILL there; the platform in this process, on the same database, takes the occurrence over
// once the dead holder's lease has ended (its clock moved past it) and finishes it. The occurrence
// fires once and its run is queued once: whether the process died before it queued the run, or
// after queueing it but before recording it on the execution.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionOutcome, MissedPolicy } from '../../gen/mindgate/agents/v1/jobs_pb.js';
import { Executor } from '../../gen/mindgate/agents/v1/runs_pb.js';
import type { ServiceClients } from '../../edge/clients.ts';
import { scheduledExecutionId, type ExecutionRecord } from '../../services/agents/jobs/records.ts';
import { EXECUTION_LEASE_MS } from '../../services/agents/jobs/target.ts';
import { startWriteKillHarness, type WriteKillHarness } from '../support/agents-replicas.ts';
import { shouldRunMongoSuite } from '../support/mongo-server.ts';
import type { TestPlatform } from '../support/platform.ts';
import { until } from '../support/until.ts';

const ORG = 'org_jobsdurable';

describe.runIf(shouldRunMongoSuite('jobs killed mid-firing'))('a replica killed mid-firing', () => {
  let harness: WriteKillHarness;
  let platform: TestPlatform;
  /** The platform's clock lags an hour behind the dying replica's, so only that one fires, until it is moved past the lease. */
  let offset = -3_600_000;

  beforeAll(async () => {
    harness = await startWriteKillHarness('jobs-durable', {
      env: { JOBS_POLL_MS: '50' },
      platformOptions: { now: () => Date.now() + offset },
    });
    platform = harness.platform;
  }, 300_000);

  afterAll(async () => {
    await harness?.stop();
  });

  /** A job firing once a day at a second a few seconds from now (UTC), created through the replica that will fire it. */
  async function dailyJobSoon(remote: ServiceClients, name: string) {
    const at = new Date(Math.ceil((Date.now() + 4_000) / 1000) * 1000);
    const schedule = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
    const { job } = await remote.jobs.createJob({
      organizationId: ORG,
      name,
      schedule,
      enabled: true,
      missedPolicy: MissedPolicy.SKIP,
      target: { kind: { case: 'run', value: { titleTemplate: `${name} {occurrence}`, executor: Executor.EXTERNAL } } },
      createdBy: 'usr_durable',
    });
    return { job: job!, at: at.getTime() };
  }

  async function killedAt(command: 'insert' | 'update', collection: string, nth: number, name: string) {
    offset = -3_600_000;
    const { job, at } = await harness.killedAt({ command, collection, nth }, (remote) => dailyJobSoon(remote, name));
    const executions = platform.ctx.stores.records.collection<ExecutionRecord>('job_executions');
    const left = await executions.get(scheduledExecutionId(job.jobId, at));
    return { job, at, left: left! };
  }

  /** The platform, its clock past the dead holder's lease, takes the occurrence over and finishes it. */
  async function takenOver(jobId: string, at: number) {
    offset = EXECUTION_LEASE_MS + 5_000;
    const id = scheduledExecutionId(jobId, at);
    const executions = platform.ctx.stores.records.collection<ExecutionRecord>('job_executions');
    return until(
      () => executions.get(id),
      (e) => e?.outcome === ExecutionOutcome.SUCCEEDED,
      { what: 'the takeover', timeoutMs: 60_000, intervalMs: 50 },
    );
  }

  const runsOf = async (threadId: string) =>
    (await platform.ctx.clients.runs.listRuns({ organizationId: ORG, threadId, pageSize: 100 })).runs.map((r) => r.runId);

  it('queues the run once when the replica died before queueing it', async () => {
    const { job, at, left } = await killedAt('insert', 'runs', 1, 'before the run');
    // It died with the thread made and recorded, and no run.
    expect(left).toMatchObject({ outcome: ExecutionOutcome.PENDING, runId: '' });
    expect(left.threadId).toMatch(/^thr_/);
    expect(await runsOf(left.threadId)).toEqual([]);

    const done = (await takenOver(job.jobId, at))!;
    expect(done.threadId).toBe(left.threadId);
    expect(await runsOf(done.threadId)).toEqual([done.runId]);
    const { executions } = await platform.ctx.clients.jobs.listJobExecutions({ organizationId: ORG, jobId: job.jobId });
    expect(executions.filter((e) => e.occurrenceTime && Number(e.occurrenceTime.seconds) * 1000 === at)).toHaveLength(1);
    await platform.ctx.clients.jobs.pauseJob({ organizationId: ORG, jobId: job.jobId });
  }, 240_000);

  it('adopts the run it queued when the replica died before recording it', async () => {
    // The second write of the execution records the run (the first recorded the thread).
    const { job, at, left } = await killedAt('update', 'job_executions', 2, 'after the run');
    expect(left).toMatchObject({ outcome: ExecutionOutcome.PENDING, runId: '' });
    const queued = await runsOf(left.threadId);
    expect(queued).toHaveLength(1);

    const done = (await takenOver(job.jobId, at))!;
    expect(done.runId).toBe(queued[0]);
    expect(await runsOf(done.threadId)).toEqual(queued);
    const { job: after } = await platform.ctx.clients.jobs.getJob({ organizationId: ORG, jobId: job.jobId });
    expect(after!.state).toMatchObject({ consecutiveFailures: 0, lastExecution: { executionId: done._id, runId: queued[0] } });
    await platform.ctx.clients.jobs.pauseJob({ organizationId: ORG, jobId: job.jobId });
  }, 240_000);
});
