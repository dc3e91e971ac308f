// What scheduled jobs start besides a plain run, through the agents service's JobsService on a real
// platform whose clock the test moves (as jobs-scheduler.test.ts does): a playbook run on each
// occurrence (the version published when it fires, or a pinned one, with the job's inputs), and a
// seeding run of the Brain from a web page served here (started once per execution, by its id).
// Targets the job could not start are refused with the field when the job is stored; a playbook
// changed so that the job's runs no longer fit fails its executions (job_execution.failed) and
// backs the job off (job.backed_off), and missed occurrences under `skip` publish
// job_execution.skipped, all delivered to a webhook endpoint.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionOutcome, type JobTargetSchema, MissedPolicy, type Job } from '../../gen/mindgate/agents/v1/jobs_pb.js';
import { Executor, RunStatus } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { SeedingStatus } from '../../gen/mindgate/brain/v1/seeding_pb.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

type TargetInit = MessageInitShape<typeof JobTargetSchema>['kind'];

let clock = Date.parse('2026-05-04T09:10:00Z');
let platform: TestPlatform;
let receiver: WebhookReceiver;
let page: http.Server;
let pageUrl = '';
let org = '';
let playbookId = '';
const jobs = () => platform.ctx.clients.jobs;
const at = (iso: string) => {
  clock = Date.parse(iso);
};

/** For the scheduler and the seeding worker, polling every 50 ms here: a look every 25 ms, for 15 s. */
const soon = (what: string) => ({ what, timeoutMs: 15_000, intervalMs: 25 });

const settled = (job: Job, n: number) =>
  until(
    () => jobs().listJobExecutions({ organizationId: org, jobId: job.jobId }),
    (r) => r.executions.length >= n && r.executions.every((e) => e.outcome !== ExecutionOutcome.PENDING),
    soon(`${n} executions of ${job.name}`),
  );

const document = (extraInput = false): JsonObject => ({
  name: 'Hourly payments check',
  instructions: 'Look at the payments service.',
  inputs: [
    { name: 'service', type: 'string', required: true },
    ...(extraInput ? [{ name: 'region', type: 'string', required: true }] : []),
  ],
  tools: [],
  namespaces: ['episodes'],
  steps: [{ id: 'note', kind: 'brain_write', namespace: 'episodes', key: 'checks/{{ inputs.service }}', content: 'checked' }],
});

async function createJob(name: string, target: TargetInit, missedPolicy = MissedPolicy.SKIP) {
  const { job } = await jobs().createJob({
    organizationId: org,
    name,
    schedule: '0 * * * *',
    enabled: true,
    missedPolicy,
    target: { kind: target },
    createdBy: 'usr_jobs',
  });
  return job!;
}

const playbookTarget = (fields: { version?: number; inputs?: JsonObject; playbookId?: string } = {}): TargetInit => ({
  case: 'playbook',
  value: { playbookId: fields.playbookId ?? playbookId, version: fields.version ?? 0, inputs: fields.inputs ?? { service: 'payments' } },
});

const received = (type: string) =>
  receiver.received.map((w) => JSON.parse(w.body) as { type: string; data: Record<string, unknown> }).filter((b) => b.type === type);

beforeAll(async () => {
  page = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/markdown' });
    res.end('# Payments runbook\n\nWhen card authorisations fail, restart the card-vault pods one at a time.\n');
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/runbooks/payments.md`;
  platform = await startTestPlatform(
    {
      JOBS_POLL_MS: '50',
      JOBS_MISSED_GRACE_SECONDS: '60',
      PLAYBOOK_RUNNER: 'false',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      SEEDING_URL_HOSTS: '127.0.0.1',
      SEEDING_ALLOW_PRIVATE_URLS: 'true',
      SEEDING_POLL_MS: '50',
    },
    { now: () => clock },
  );
  const { organization } = await platform.ctx.clients.organizations.createOrganization({ name: 'Jobs targets', ownerUserId: 'usr_jobs' });
  org = organization!.organizationId;
  receiver = await startWebhookReceiver();
  await platform.ctx.clients.webhooks.createWebhookEndpoint({
    organizationId: org,
    url: receiver.url,
    eventTypes: ['job_execution.*', 'job.*'],
    createdBy: 'usr_jobs',
  });
  const { playbook } = await platform.ctx.clients.playbooks.createPlaybook({
    organizationId: org,
    document: document(),
    publish: true,
    createdBy: 'usr_jobs',
  });
  playbookId = playbook!.playbookId;
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await platform?.stop();
  await new Promise((resolve) => page?.close(resolve));
});

describe('job targets', () => {
  it('refuses targets the job could not start, naming the field', async () => {
    const refusal = async (target: TargetInit) => {
      try {
        await createJob('refused', target);
      } catch (err) {
        expect(err).toBeInstanceOf(ConnectError);
        expect((err as ConnectError).code).toBe(Code.InvalidArgument);
        return (err as ConnectError).rawMessage;
      }
      throw new Error('accepted');
    };
    const { playbook: draft } = await platform.ctx.clients.playbooks.createPlaybook({
      organizationId: org,
      document: { ...document(), name: 'Draft' },
      createdBy: 'usr_jobs',
    });
    expect(await refusal(playbookTarget({ playbookId: 'pbk_nosuchplaybook0' }))).toMatch(/^target\.playbook\.playbook_id: /);
    expect(await refusal(playbookTarget({ playbookId: draft!.playbookId }))).toMatch(/^target\.playbook\.version: .*no published version/);
    expect(await refusal(playbookTarget({ version: 7 }))).toMatch(/^target\.playbook\.version: version 7 does not exist/);
    expect(await refusal(playbookTarget({ inputs: {} }))).toBe('target.playbook.inputs.service: is required');
    expect(await refusal(playbookTarget({ inputs: { service: 3 } }))).toBe('target.playbook.inputs.service: must be of type string');
    expect(await refusal({ case: 'seeding', value: { url: 'https://example.org/runbook' } })).toMatch(
      /^target\.seeding\.url: example\.org is not a host URL sources may fetch from/,
    );
    expect(await refusal({ case: 'seeding', value: { url: 'ftp://127.0.0.1/x' } })).toMatch(/^target\.seeding\.url: /);
    expect(await refusal({ case: 'seeding', value: { url: pageUrl, namespace: 'memories' } })).toMatch(/^target\.seeding\.namespace: /);
  });

  it('starts a playbook run on each occurrence: the published version when it fires, or the pinned one', async () => {
    at('2026-05-04T09:10:00Z');
    const latest = await createJob('payments latest', playbookTarget());
    const pinned = await createJob('payments pinned', playbookTarget({ version: 1, inputs: { service: 'ledger' } }));
    expect(latest.target?.kind).toMatchObject({ case: 'playbook', value: { playbookId, version: 0, inputs: { service: 'payments' } } });
    at('2026-05-04T10:00:01Z');
    const [first] = (await settled(latest, 1)).executions;
    expect(first).toMatchObject({ outcome: ExecutionOutcome.SUCCEEDED });
    expect(first.run).toMatchObject({
      status: RunStatus.QUEUED,
      executor: Executor.PLAYBOOK,
      playbookId,
      playbookVersion: 1,
      inputs: { service: 'payments' },
      createdBy: latest.jobId,
    });
    const { thread } = await platform.ctx.clients.threads.getThread({ organizationId: org, threadId: first.threadId });
    expect(thread!.title).toBe('Hourly payments check 2026-05-04 10:00 +00:00');
    const { messages } = await platform.ctx.clients.threads.listMessages({ organizationId: org, threadId: first.threadId });
    expect(messages[0]!.content).toContain('- service: payments');

    // Version 2 is published: the next occurrence of the unpinned job runs it, the pinned one stays.
    await platform.ctx.clients.playbooks.updatePlaybook({
      organizationId: org,
      playbookId,
      document: { ...document(), description: 'v2' },
      publish: true,
      createdBy: 'usr_jobs',
    });
    at('2026-05-04T11:00:01Z');
    const [second] = (await settled(latest, 2)).executions;
    expect(second.run?.playbookVersion).toBe(2);
    const pinnedRuns = (await settled(pinned, 2)).executions.map((e) => [e.run?.playbookVersion, e.run?.inputs]);
    expect(pinnedRuns).toEqual([
      [1, { service: 'ledger' }],
      [1, { service: 'ledger' }],
    ]);
    await jobs().pauseJob({ organizationId: org, jobId: pinned.jobId });
    await jobs().pauseJob({ organizationId: org, jobId: latest.jobId });
  });

  it('starts a seeding run from the URL on each occurrence, once per execution', async () => {
    at('2026-05-04T11:10:00Z');
    const job = await createJob('payments runbook', {
      case: 'seeding',
      value: { url: pageUrl, namespace: 'knowledge', keyPrefix: 'runbooks/', tags: ['runbook'] },
    });
    expect(job.target?.kind).toMatchObject({ case: 'seeding', value: { url: pageUrl, keyPrefix: 'runbooks/' } });
    at('2026-05-04T12:00:01Z');
    const [execution] = (await settled(job, 1)).executions;
    expect(execution).toMatchObject({ outcome: ExecutionOutcome.SUCCEEDED, runId: '', threadId: '' });
    expect(execution.seedingRunId).toMatch(/^sdr_/);
    const seeding = platform.ctx.clients.seeding;
    const done = await until(
      async () => (await seeding.getSeedingRun({ organizationId: org, runId: execution.seedingRunId })).run!,
      (r) => r.status === SeedingStatus.SUCCEEDED || r.status === SeedingStatus.FAILED,
      soon('the seeding run'),
    );
    expect(done.status, done.error).toBe(SeedingStatus.SUCCEEDED);
    expect(done.progress?.stored).toBeGreaterThan(0);
    // Asked again with the execution's id (a replica taking the firing over), the brain answers the same run.
    const again = await seeding.startSeeding({
      organizationId: org,
      source: { case: 'url', value: pageUrl },
      requestId: execution.executionId,
    });
    expect(again.run!.runId).toBe(execution.seedingRunId);
    const { runs } = await seeding.listSeedingRuns({ organizationId: org });
    expect(runs.filter((r) => r.runId === execution.seedingRunId)).toHaveLength(1);
    expect(runs).toHaveLength(1);
    await jobs().pauseJob({ organizationId: org, jobId: job.jobId });
  });

  it('publishes failed executions, the back-off and skipped occurrences as webhook events', async () => {
    at('2026-05-05T09:10:00Z');
    const failing = await createJob('payments failing', playbookTarget());
    // The published version now needs an input the job does not give: its executions fail.
    await platform.ctx.clients.playbooks.updatePlaybook({
      organizationId: org,
      playbookId,
      document: document(true),
      publish: true,
      createdBy: 'usr_jobs',
    });
    at('2026-05-05T10:00:01Z');
    await settled(failing, 1);
    at('2026-05-05T11:00:01Z');
    const { executions } = await settled(failing, 2);
    expect(executions.map((e) => e.outcome)).toEqual([ExecutionOutcome.FAILED, ExecutionOutcome.FAILED]);
    expect(executions[0].error).toBe('inputs.region: is required');
    const { job } = await jobs().getJob({ organizationId: org, jobId: failing.jobId });
    expect(job!.state).toMatchObject({ consecutiveFailures: 2, backoffSkips: 1 });
    await jobs().pauseJob({ organizationId: org, jobId: failing.jobId });

    const skipping = await createJob('payments skipping', playbookTarget({ version: 1 }), MissedPolicy.SKIP);
    // Nobody fired it for three hours.
    at('2026-05-05T14:30:00Z');
    const skipped = (await settled(skipping, 1)).executions[0];
    expect(skipped).toMatchObject({ outcome: ExecutionOutcome.SKIPPED, occurrences: 3 });
    await jobs().pauseJob({ organizationId: org, jobId: skipping.jobId });

    await until(
      async () =>
        received('job_execution.failed').length >= 2 &&
        received('job.backed_off').length >= 1 &&
        received('job_execution.skipped').length >= 1,
      Boolean,
      soon('the job events'),
    );
    const failed = received('job_execution.failed').filter((b) => b.data.job_id === failing.jobId);
    expect(failed.map((b) => b.data.id).sort()).toEqual(executions.map((e) => e.executionId).sort());
    expect(failed[0].data).toMatchObject({
      job_name: 'payments failing',
      outcome: 'failed',
      trigger: 'schedule',
      error: 'inputs.region: is required',
    });
    const backedOff = received('job.backed_off');
    expect(backedOff).toHaveLength(1);
    expect(backedOff[0].data).toMatchObject({
      id: failing.jobId,
      consecutive_failures: 2,
      backoff_skips: 1,
      last_error: 'inputs.region: is required',
    });
    expect(received('job_execution.skipped')[0].data).toMatchObject({
      id: skipped.executionId,
      job_id: skipping.jobId,
      outcome: 'skipped',
      occurrences: 3,
      run_id: null,
    });
    // They are types of the catalogue, with their schemas.
    const { eventTypes } = await platform.ctx.clients.webhooks.listEventTypes({});
    const types = eventTypes.map((t) => t.type);
    expect(types).toEqual(expect.arrayContaining(['job_execution.failed', 'job_execution.skipped', 'job.backed_off']));
  });
});
