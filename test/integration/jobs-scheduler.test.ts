// Scheduled jobs through the agents service's JobsService (the in-process Connect clients of a real
// platform, whose clock the test moves instead of waiting for real minutes): occurrences in a
// time zone across a daylight-saving change, the run each one starts (thread title from the
// template), missed occurrences under skip and run_once, pause and resume, trigger now, and the
// back-off of a job whose executions fail (the plan's run limit refuses its runs), and the takeover
// of an occurrence whose holder died mid-firing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionOutcome, ExecutionTrigger, MissedPolicy, type Job } from '../../gen/mindgate/agents/v1/jobs_pb.js';
import { Executor, RunStatus } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { DEFAULT_PLANS_FILE } from '../../services/billing/catalogue.ts';
import { scheduledExecutionId, type ExecutionRecord } from '../../services/agents/jobs/records.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

const ORG = 'org_jobs1';
const plansFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-plans-')), 'plans.yaml');
fs.writeFileSync(plansFile, fs.readFileSync(DEFAULT_PLANS_FILE, 'utf8').replace('runs_per_month: 100', 'runs_per_month: 3'));

let clock = Date.parse('2026-03-28T12:00:00Z');
let platform: TestPlatform;
const jobs = () => platform.ctx.clients.jobs;
const at = (iso: string) => {
  clock = Date.parse(iso);
};
const iso = (t: { seconds: bigint; nanos: number } | undefined) => (t ? new Date(timestampMs(t as never)).toISOString() : undefined);

async function until<T>(work: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await work();
    if (done(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
}

const executions = (job: Job, organizationId = ORG) => jobs().listJobExecutions({ organizationId, jobId: job.jobId });
const executionsUntil = (job: Job, n: number, organizationId = ORG) =>
  until(
    () => executions(job, organizationId),
    (r) => r.executions.length >= n && r.executions.every((e) => e.outcome !== ExecutionOutcome.PENDING),
  );

async function createJob(fields: {
  name?: string;
  schedule: string;
  timeZone?: string;
  missedPolicy?: MissedPolicy;
  organizationId?: string;
}) {
  const { job } = await jobs().createJob({
    organizationId: fields.organizationId ?? ORG,
    name: fields.name ?? 'Nightly check',
    schedule: fields.schedule,
    timeZone: fields.timeZone ?? '',
    enabled: true,
    missedPolicy: fields.missedPolicy ?? MissedPolicy.SKIP,
    target: {
      kind: {
        case: 'run',
        value: { titleTemplate: 'Nightly check {occurrence}', message: 'Look at last night.', executor: Executor.EXTERNAL },
      },
    },
    createdBy: 'usr_a',
  });
  return job!;
}

beforeAll(async () => {
  platform = await startTestPlatform(
    { JOBS_POLL_MS: '50', JOBS_MISSED_GRACE_SECONDS: '60', BILLING_PLANS_FILE: plansFile, TRIAL_DAYS: '0' },
    { now: () => clock },
  );
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

describe('scheduled jobs', () => {
  it('fires a daily 02:30 Europe/Berlin job at 03:00 local on the spring-forward day, once, and starts its run', async () => {
    at('2026-03-28T12:00:00Z');
    const job = await createJob({ schedule: '30 2 * * *', timeZone: 'Europe/Berlin', organizationId: 'org_jobsdst' });
    // 02:30 does not exist on 2026-03-29 in Berlin (clocks go from 02:00 to 03:00 CEST).
    expect(iso(job.state?.nextFireTime)).toBe('2026-03-29T01:00:00.000Z');
    at('2026-03-29T01:00:01Z');
    const fired = await executionsUntil(job, 1, 'org_jobsdst');
    expect(fired.executions).toHaveLength(1);
    const [e] = fired.executions;
    expect(e).toMatchObject({ outcome: ExecutionOutcome.SUCCEEDED, trigger: ExecutionTrigger.SCHEDULE, occurrences: 1 });
    expect(iso(e.occurrenceTime)).toBe('2026-03-29T01:00:00.000Z');
    expect(e.run).toMatchObject({ runId: e.runId, threadId: e.threadId, status: RunStatus.QUEUED, executor: Executor.EXTERNAL });
    const { thread } = await platform.ctx.clients.threads.getThread({ organizationId: 'org_jobsdst', threadId: e.threadId });
    expect(thread?.title).toBe('Nightly check 2026-03-29 03:00 +02:00');
    const after = (await jobs().getJob({ organizationId: 'org_jobsdst', jobId: job.jobId })).job!;
    // The next day is summer time: 02:30 CEST is 00:30 UTC.
    expect(iso(after.state?.nextFireTime)).toBe('2026-03-30T00:30:00.000Z');
    expect(after.state?.lastExecution?.executionId).toBe(e.executionId);
    // Later passes at the same time fire nothing more.
    await new Promise((r) => setTimeout(r, 300));
    expect((await executions(job, 'org_jobsdst')).executions).toHaveLength(1);
  }, 30_000);

  it('records missed occurrences as one skipped execution under skip, and fires once for them under run_once', async () => {
    at('2026-04-01T00:30:00Z');
    const skip = await createJob({ schedule: '0 * * * *', organizationId: 'org_jobsmiss' });
    const once = await createJob({ schedule: '0 * * * *', organizationId: 'org_jobsmiss', missedPolicy: MissedPolicy.RUN_ONCE });
    // Nobody ran from before 01:00 to 05:10: 01:00 ... 05:00 were missed.
    at('2026-04-01T05:10:00Z');
    const skipped = (await executionsUntil(skip, 1, 'org_jobsmiss')).executions;
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ outcome: ExecutionOutcome.SKIPPED, occurrences: 5, runId: '' });
    expect(skipped[0].error).toContain('missed 5 occurrence(s) from 2026-04-01T01:00:00.000Z');
    const caught = (await executionsUntil(once, 1, 'org_jobsmiss')).executions;
    expect(caught).toHaveLength(1);
    expect(caught[0]).toMatchObject({ outcome: ExecutionOutcome.SUCCEEDED, occurrences: 5 });
    expect(iso(caught[0].occurrenceTime)).toBe('2026-04-01T05:00:00.000Z');
    for (const job of [skip, once]) {
      const after = (await jobs().getJob({ organizationId: 'org_jobsmiss', jobId: job.jobId })).job!;
      expect(iso(after.state?.nextFireTime)).toBe('2026-04-01T06:00:00.000Z');
    }
  }, 30_000);

  it('fires nothing while paused, resumes from the next occurrence, and is triggered now even while paused', async () => {
    at('2026-04-02T00:00:30Z');
    const job = await createJob({ schedule: '* * * * *', organizationId: 'org_jobspause' });
    const paused = (await jobs().pauseJob({ organizationId: 'org_jobspause', jobId: job.jobId })).job!;
    expect(paused.enabled).toBe(false);
    expect(paused.state?.nextFireTime).toBeUndefined();
    at('2026-04-02T00:05:00Z');
    await new Promise((r) => setTimeout(r, 300));
    expect((await executions(job, 'org_jobspause')).executions).toHaveLength(0);
    const { execution } = await jobs().triggerJob({ organizationId: 'org_jobspause', jobId: job.jobId });
    expect(execution).toMatchObject({ trigger: ExecutionTrigger.MANUAL, outcome: ExecutionOutcome.SUCCEEDED });
    expect(execution?.run).toMatchObject({ status: RunStatus.QUEUED, threadId: execution?.threadId });
    expect(iso(execution?.occurrenceTime)).toBe('2026-04-02T00:05:00.000Z');
    const resumed = (await jobs().resumeJob({ organizationId: 'org_jobspause', jobId: job.jobId })).job!;
    expect(resumed.enabled).toBe(true);
    expect(iso(resumed.state?.nextFireTime)).toBe('2026-04-02T00:06:00.000Z');
    at('2026-04-02T00:06:01Z');
    const fired = (await executionsUntil(job, 2, 'org_jobspause')).executions;
    expect(fired.map((e) => e.trigger)).toEqual([ExecutionTrigger.SCHEDULE, ExecutionTrigger.MANUAL]);
  }, 30_000);

  it('fails executions the plan refuses, with why, and backs off exponentially until it succeeds', async () => {
    const org = 'org_jobsback';
    at('2026-04-03T00:30:00Z');
    const job = await createJob({ schedule: '0 * * * *', organizationId: org });
    // The plan allows 3 runs a month: three manual firings use them up.
    for (let i = 0; i < 3; i++) {
      expect((await jobs().triggerJob({ organizationId: org, jobId: job.jobId })).execution?.outcome).toBe(ExecutionOutcome.SUCCEEDED);
    }
    const state = async () => (await jobs().getJob({ organizationId: org, jobId: job.jobId })).job!.state!;
    const expected: [string, number, number, string][] = [
      ['2026-04-03T01:00:01Z', 1, 0, '2026-04-03T02:00:00.000Z'],
      ['2026-04-03T02:00:01Z', 2, 1, '2026-04-03T04:00:00.000Z'],
      ['2026-04-03T04:00:01Z', 3, 3, '2026-04-03T08:00:00.000Z'],
      ['2026-04-03T08:00:01Z', 4, 7, '2026-04-03T16:00:00.000Z'],
    ];
    for (const [now, failures, skips, next] of expected) {
      at(now);
      const s = await until(state, (st) => st.consecutiveFailures === failures);
      expect([s.consecutiveFailures, s.backoffSkips, iso(s.nextFireTime)]).toEqual([failures, skips, next]);
      expect(s.lastError).toContain('allows 3 runs a month');
      expect(s.lastExecution?.outcome).toBe(ExecutionOutcome.FAILED);
    }
    const list = (await executions(job, org)).executions;
    expect(list.filter((e) => e.outcome === ExecutionOutcome.FAILED)).toHaveLength(4);
    // No thread was left behind by the refused firings: only the three runs' threads exist.
    const threads = (await platform.ctx.clients.threads.listThreads({ organizationId: org })).threads;
    expect(threads).toHaveLength(3);
    // Resuming after a pause clears the failures.
    await jobs().pauseJob({ organizationId: org, jobId: job.jobId });
    expect((await jobs().resumeJob({ organizationId: org, jobId: job.jobId })).job?.state).toMatchObject({
      consecutiveFailures: 0,
      backoffSkips: 0,
    });
  }, 60_000);

  it('takes over an occurrence whose holder died after queueing its run, and adopts that run', async () => {
    const org = 'org_jobscrash';
    at('2026-04-04T00:30:00Z');
    const job = await createJob({ schedule: '0 * * * *', organizationId: org });
    const occurrence = Date.parse('2026-04-04T01:00:00Z');
    // What a replica killed mid-firing leaves: its execution pending under a lease, the thread
    // made and the run queued, but the run not yet recorded on the execution.
    const { thread } = await platform.ctx.clients.threads.createThread({ organizationId: org, title: 'made', createdBy: job.jobId });
    const { run } = await platform.ctx.clients.runs.createRun({ organizationId: org, threadId: thread!.threadId, createdBy: job.jobId });
    const held = platform.ctx.stores.records.collection<ExecutionRecord>('job_executions');
    await held.put({
      _id: scheduledExecutionId(job.jobId, occurrence),
      jobId: job.jobId,
      organizationId: org,
      occurrenceAt: occurrence,
      firedAt: occurrence,
      trigger: ExecutionTrigger.SCHEDULE,
      outcome: ExecutionOutcome.PENDING,
      error: '',
      occurrences: 1,
      threadId: thread!.threadId,
      runId: '',
      leaseUntil: occurrence + 30_000,
      version: 2,
    });
    // While its lease lasts, no other replica touches it.
    at('2026-04-04T01:00:10Z');
    await new Promise((r) => setTimeout(r, 300));
    expect((await executions(job, org)).executions[0].outcome).toBe(ExecutionOutcome.PENDING);
    at('2026-04-04T01:00:40Z');
    const [taken] = (await executionsUntil(job, 1, org)).executions;
    expect(taken).toMatchObject({ outcome: ExecutionOutcome.SUCCEEDED, threadId: thread!.threadId, runId: run!.runId });
    expect((await platform.ctx.clients.runs.listRuns({ organizationId: org })).runs).toHaveLength(1);
    const after = (await jobs().getJob({ organizationId: org, jobId: job.jobId })).job!;
    expect(iso(after.state?.nextFireTime)).toBe('2026-04-04T02:00:00.000Z');
  }, 30_000);

  it('fires once on the fall-back day, at the first 02:30', async () => {
    at('2026-10-24T12:00:00Z');
    const job = await createJob({ schedule: '30 2 * * *', timeZone: 'Europe/Berlin', organizationId: 'org_jobsfall' });
    expect(iso(job.state?.nextFireTime)).toBe('2026-10-25T00:30:00.000Z');
    at('2026-10-25T00:30:02Z');
    await executionsUntil(job, 1, 'org_jobsfall');
    const after = (await jobs().getJob({ organizationId: 'org_jobsfall', jobId: job.jobId })).job!;
    // Not again at the second 02:30 (01:30 UTC, winter time): the next is the 26th, 02:30 CET.
    expect(iso(after.state?.nextFireTime)).toBe('2026-10-26T01:30:00.000Z');
  }, 30_000);

  it("goes with its organization's data: jobs and executions are purged", async () => {
    const org = 'org_jobspurge';
    const job = await createJob({ schedule: '0 * * * *', organizationId: org });
    await jobs().triggerJob({ organizationId: org, jobId: job.jobId });
    for (;;) {
      const purged = await platform.ctx.clients.organizations.purgeOrganizationData({ organizationId: org });
      if (purged.done) break;
    }
    const gone = await jobs()
      .getJob({ organizationId: org, jobId: job.jobId })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((gone as ConnectError).code).toBe(Code.NotFound);
    expect(await platform.ctx.stores.records.collection('job_executions').count({ organizationId: org })).toBe(0);
  });

  it('refuses an invalid cron expression or time zone naming the field', async () => {
    const refused = async (schedule: string, timeZone: string) => {
      const err = await createJob({ schedule, timeZone }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      return (err as ConnectError).rawMessage;
    };
    expect(await refused('61 * * * *', 'UTC')).toMatch(/^schedule: /);
    expect(await refused('0 0 0 * * * *', 'UTC')).toMatch(/^schedule: /);
    expect(await refused('0 9 * * *', 'Europe/Atlantis')).toMatch(/^time_zone: /);
    // Seconds as a sixth field are taken.
    expect((await createJob({ schedule: '15 0 9 * * *', organizationId: 'org_jobssec' })).schedule).toBe('15 0 9 * * *');
  });
});
