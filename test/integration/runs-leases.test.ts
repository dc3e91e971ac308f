// The run queue's leases through the agents service's RunsService (the in-process Connect clients
// of a real platform, no runner configured, so the test is the only executor): concurrent claimers
// never share a run; a holder whose lease expired and was taken over, or whose run was cancelled,
// is refused (lease-lost) and its step is not recorded; a run past its timeout is ended instead of
// claimed; another organization sees none of it. On the embedded store and on the MongoDB wire.
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor, RunStatus, StepKind } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { reasonOf } from '../../services/common/rpc/reasons.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

const ORG = 'org_leases1';
let platform: TestPlatform;
const runs = () => platform.ctx.clients.runs;

async function queueRun(timeoutSeconds = 0, executor = Executor.LLM, organizationId = ORG) {
  const { thread } = await platform.ctx.clients.threads.createThread({
    organizationId,
    title: 'Q',
    message: 'What broke?',
    createdBy: 'usr_a',
  });
  const { run } = await runs().createRun({ organizationId, threadId: thread!.threadId, timeoutSeconds, createdBy: 'usr_a', executor });
  return run!;
}

/** Claims until the queue is empty (the other tests' runs too). */
async function drain(agentId: string) {
  for (;;) {
    const claim = await runs().claimRun({ agentId, leaseSeconds: 3_600 });
    if (!claim.run) return;
  }
}

async function refusal(work: Promise<unknown>): Promise<ConnectError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

describe('run leases on the embedded store', () => {
  beforeAll(async () => {
    platform = await startTestPlatform();
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
  });
  leaseCases();
});

describe.runIf(shouldRunMongoSuite('run leases on MongoDB'))('run leases on the MongoDB-wire server', () => {
  let mongo: MongoWireServer | undefined;
  beforeAll(async () => {
    mongo = await startMongoWireServer();
    platform = await startTestPlatform({ MONGODB_URL: mongo.url, MONGODB_DATABASE: `runs_${Date.now()}` });
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    await mongo?.stop();
  });
  leaseCases();
});

function leaseCases(): void {
  it('gives each queued run to exactly one of many concurrent claimers', async () => {
    await drain('sweeper');
    const queued = await Promise.all(Array.from({ length: 12 }, () => queueRun()));
    const claims = await Promise.all(Array.from({ length: 24 }, (_, i) => runs().claimRun({ agentId: `claimer-${i}`, leaseSeconds: 60 })));
    const claimed = claims.filter((c) => c.run).map((c) => c.run!.runId);
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.sort()).toEqual(queued.map((r) => r.runId).sort());
    expect(claims.filter((c) => c.run).every((c) => c.run!.attempt === 1 && c.messages[0]?.content === 'What broke?')).toBe(true);
  });

  it('takes over an expired lease with the recorded steps, and refuses the old holder', async () => {
    await drain('sweeper');
    const run = await queueRun();
    const first = await runs().claimRun({ agentId: 'first', leaseSeconds: 5 });
    expect(first.run!.runId).toBe(run.runId);
    const lease = { organizationId: ORG, runId: run.runId };
    const step = { kind: StepKind.MODEL_CALL, name: 'm', ok: true, inputTokens: 7n, model: 'm' };
    await runs().reportStep({ ...lease, leaseId: first.leaseId, leaseSeconds: 5, ...step });
    expect((await runs().claimRun({ agentId: 'second', leaseSeconds: 60 })).run).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 5_200));
    const second = await runs().claimRun({ agentId: 'second', leaseSeconds: 60 });
    expect(second.run).toMatchObject({ runId: run.runId, attempt: 2, agentId: 'second', stepCount: 1 });
    expect(second.steps.map((s) => [s.index, s.attempt, Number(s.inputTokens)])).toEqual([[0, 1, 7]]);
    const late = await refusal(
      runs().reportStep({ ...lease, leaseId: first.leaseId, kind: StepKind.BRAIN_READ, name: 'brain_recall', ok: true }),
    );
    expect([late.code, reasonOf(late)]).toEqual([Code.FailedPrecondition, 'lease-lost']);
    expect(reasonOf(await refusal(runs().heartbeatRun({ ...lease, leaseId: first.leaseId })))).toBe('lease-lost');
    await runs().reportStep({ ...lease, leaseId: second.leaseId, kind: StepKind.BRAIN_READ, name: 'brain_recall', ok: true });
    const done = await runs().completeRun({ ...lease, leaseId: second.leaseId, status: RunStatus.SUCCEEDED, output: 'It was the disk.' });
    expect(done.run).toMatchObject({ status: RunStatus.SUCCEEDED, stepCount: 2, output: 'It was the disk.' });
    expect(Number(done.run!.usage!.inputTokens)).toBe(7);
    const steps = (await runs().listSteps(lease)).steps;
    expect(steps.map((s) => [s.index, s.attempt])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(reasonOf(await refusal(runs().completeRun({ ...lease, leaseId: second.leaseId, status: RunStatus.FAILED })))).toBe('lease-lost');
  }, 30_000);

  it('refuses the holder of a cancelled run, and never claims it again', async () => {
    await drain('sweeper');
    const run = await queueRun();
    const claim = await runs().claimRun({ agentId: 'holder', leaseSeconds: 60 });
    const cancelled = await runs().cancelRun({ organizationId: ORG, runId: run.runId, reason: 'enough' });
    expect(cancelled.run).toMatchObject({ status: RunStatus.CANCELLED, error: 'cancelled: enough' });
    expect(cancelled.run!.leaseExpireTime).toBeUndefined();
    const refused = await refusal(
      runs().reportStep({ organizationId: ORG, runId: run.runId, leaseId: claim.leaseId, kind: StepKind.MODEL_CALL, name: 'm', ok: true }),
    );
    expect(reasonOf(refused)).toBe('lease-lost');
    expect((await runs().listSteps({ organizationId: ORG, runId: run.runId })).steps).toEqual([]);
    expect((await runs().claimRun({ agentId: 'holder' })).run).toBeUndefined();
    expect(reasonOf(await refusal(runs().cancelRun({ organizationId: ORG, runId: run.runId })))).toBe('run-finished');
  });

  it("keeps each executor's queue apart: the LLM runner's across organizations, an external agent's within its own", async () => {
    await drain('sweeper');
    const external = await queueRun(0, Executor.EXTERNAL);
    const foreign = await queueRun(0, Executor.EXTERNAL, 'org_leases2');
    expect((await runs().claimRun({ agentId: 'llm' })).run).toBeUndefined();
    const mine = await runs().claimRun({ agentId: 'bot', executor: Executor.EXTERNAL, organizationId: ORG });
    expect(mine.run).toMatchObject({ runId: external.runId, executor: Executor.EXTERNAL });
    expect((await runs().claimRun({ agentId: 'bot', executor: Executor.EXTERNAL, organizationId: ORG })).run).toBeUndefined();
    const theirs = await runs().claimRun({ agentId: 'bot', executor: Executor.EXTERNAL, organizationId: 'org_leases2' });
    expect(theirs.run!.runId).toBe(foreign.runId);
    expect((await refusal(runs().claimRun({ agentId: 'bot', executor: Executor.EXTERNAL }))).rawMessage).toMatch(/^organization_id:/);
    expect((await refusal(runs().claimRun({ agentId: 'llm', organizationId: ORG }))).rawMessage).toMatch(/^organization_id:/);
  });

  it('ends a run past its timeout instead of handing it out', async () => {
    await drain('sweeper');
    const run = await queueRun(1);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await runs().claimRun({ agentId: 'late' })).run).toBeUndefined();
    const { run: ended } = await runs().getRun({ organizationId: ORG, runId: run.runId });
    expect(ended).toMatchObject({ status: RunStatus.TIMED_OUT, error: 'timed out after 1 s' });
  });

  it("keeps another organization's runs and threads out of reach, and refuses malformed input", async () => {
    const run = await queueRun();
    const foreign = await refusal(runs().getRun({ organizationId: 'org_other', runId: run.runId }));
    expect(foreign.code).toBe(Code.NotFound);
    expect((await refusal(runs().cancelRun({ organizationId: 'org_other', runId: run.runId }))).code).toBe(Code.NotFound);
    expect((await refusal(platform.ctx.clients.threads.getThread({ organizationId: 'org_other', threadId: run.threadId }))).code).toBe(
      Code.NotFound,
    );
    expect((await runs().listRuns({ organizationId: 'org_other' })).runs).toEqual([]);
    expect((await refusal(runs().claimRun({ agentId: 'has spaces' }))).rawMessage).toMatch(/^agent_id:/);
    expect((await refusal(runs().claimRun({ agentId: 'a', leaseSeconds: 2 }))).rawMessage).toMatch(/^lease_seconds:/);
    expect((await refusal(runs().createRun({ organizationId: ORG, threadId: run.threadId, timeoutSeconds: 90_000 }))).code).toBe(
      Code.InvalidArgument,
    );
  });
}
