// External agents' claims across two replicas of the agents service: a platform in this process
// and an agents service started as its own process (`node services/agents/main.ts`), both on one
// MongoDB-wire server, each reached over its own gRPC port. Claimers on both race for the same
// organization's queue at once and hold what they get: every run goes to exactly one of them; a
// lease taken on one replica and left to expire is taken over on the other, whose claim the first
// holder can no longer use (lease-lost).
import { ConnectError, type Client } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor, RunsService, RunStatus, StepKind, type ClaimRunResponse } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { reasonOf } from '../../services/common/rpc/reasons.ts';
import { internalClient } from '../support/internal-grpc.ts';
import { startAgentsReplicaPair, type AgentsReplicaPair } from '../support/agents-replicas.ts';
import { shouldRunMongoSuite } from '../support/mongo-server.ts';
import type { TestPlatform } from '../support/platform.ts';

const ORG = 'org_runsreplicas';
const OTHER_ORG = 'org_runsreplicas2';
const RUNS = 24;
const CLAIMERS_PER_REPLICA = 6;

type Runs = Client<typeof RunsService>;

describe.runIf(shouldRunMongoSuite('run claims across replicas'))('external run claims across two agents-service replicas', () => {
  let pair: AgentsReplicaPair;
  let first: TestPlatform;
  let replicas: Runs[];

  async function queueExternal(organizationId: string, title: string) {
    const { thread } = await first.ctx.clients.threads.createThread({ organizationId, title, message: title, createdBy: 'usr_a' });
    const { run } = await first.ctx.clients.runs.createRun({
      organizationId,
      threadId: thread!.threadId,
      executor: Executor.EXTERNAL,
      createdBy: 'usr_a',
    });
    return run!.runId;
  }

  /** Claims until the replica says the queue is empty, holding every run it gets. */
  async function claimAll(runs: Runs, agentId: string): Promise<ClaimRunResponse[]> {
    const held: ClaimRunResponse[] = [];
    for (;;) {
      const claim = await runs.claimRun({ agentId, leaseSeconds: 120, executor: Executor.EXTERNAL, organizationId: ORG });
      if (!claim.run) return held;
      held.push(claim);
    }
  }

  beforeAll(async () => {
    pair = await startAgentsReplicaPair('runs-replicas');
    first = pair.first;
    replicas = [first.grpc.agents!, pair.second.address].map((address) => internalClient(RunsService, address, pair.store.token));
  }, 300_000);

  afterAll(async () => {
    await pair?.stop();
  });

  it("gives each queued run to exactly one claimer, whichever replica it asks, and only its organization's", async () => {
    const queued = await Promise.all(Array.from({ length: RUNS }, (_, i) => queueExternal(ORG, `disk ${i}`)));
    const foreign = await queueExternal(OTHER_ORG, 'not theirs');
    const claimers = replicas.flatMap((runs, r) =>
      Array.from({ length: CLAIMERS_PER_REPLICA }, (_, i) => claimAll(runs, `agent-${r}-${i}`).then((held) => ({ replica: r, held }))),
    );
    const results = await Promise.all(claimers);
    const claimed = results.flatMap(({ held }) => held.map((c) => c.run!.runId));
    expect(new Set(claimed).size).toBe(claimed.length);
    expect([...claimed].sort()).toEqual([...queued].sort());
    expect(claimed).not.toContain(foreign);
    // Both replicas handed out runs.
    for (const r of [0, 1]) expect(results.filter((x) => x.replica === r).flatMap((x) => x.held).length).toBeGreaterThan(0);

    // Each holder works its run through the replica it claimed on; every run ends once, at attempt 1.
    await Promise.all(
      results.flatMap(({ replica, held }) =>
        held.map(async (c) => {
          const lease = { organizationId: ORG, runId: c.run!.runId, leaseId: c.leaseId };
          await replicas[replica]!.reportStep({ ...lease, kind: StepKind.TOOL_CALL, name: 'ssh/df', ok: true });
          await replicas[replica]!.completeRun({ ...lease, status: RunStatus.SUCCEEDED, output: `done by ${c.run!.agentId}` });
        }),
      ),
    );
    const { runs } = await first.ctx.clients.runs.listRuns({ organizationId: ORG, pageSize: 100 });
    expect(runs).toHaveLength(RUNS);
    expect(runs.every((r) => r.status === RunStatus.SUCCEEDED && r.attempt === 1 && r.stepCount === 1)).toBe(true);
    const other = await first.ctx.clients.runs.getRun({ organizationId: OTHER_ORG, runId: foreign });
    expect(other.run!.status).toBe(RunStatus.QUEUED);
  }, 120_000);

  it('takes over on one replica a lease that expired on the other, and refuses the first holder', async () => {
    const runId = await queueExternal(ORG, 'takeover');
    const firstClaim = await replicas[0]!.claimRun({ agentId: 'dies', leaseSeconds: 5, executor: Executor.EXTERNAL, organizationId: ORG });
    expect(firstClaim.run!.runId).toBe(runId);
    const lease = { organizationId: ORG, runId, leaseId: firstClaim.leaseId, leaseSeconds: 5 };
    await replicas[0]!.reportStep({ ...lease, kind: StepKind.TOOL_CALL, name: 'before-death', ok: true });
    expect((await replicas[1]!.claimRun({ agentId: 'early', executor: Executor.EXTERNAL, organizationId: ORG })).run).toBeUndefined();
    let taken: ClaimRunResponse | undefined;
    // The lease ends 5 s after the last step; the other replica's claims find the run then.
    for (let i = 0; i < 200 && !taken?.run; i += 1) {
      taken = await replicas[1]!.claimRun({ agentId: 'survivor', leaseSeconds: 60, executor: Executor.EXTERNAL, organizationId: ORG });
      if (!taken.run) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(taken!.run).toMatchObject({ runId, attempt: 2, agentId: 'survivor' });
    expect(taken!.steps.map((s) => [s.name, s.attempt])).toEqual([['before-death', 1]]);
    const refused = await replicas[0]!.reportStep({ ...lease, kind: StepKind.TOOL_CALL, name: 'too-late', ok: true }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(ConnectError);
    expect(reasonOf(refused as ConnectError)).toBe('lease-lost');
    const done = await replicas[1]!.completeRun({ organizationId: ORG, runId, leaseId: taken!.leaseId, status: RunStatus.SUCCEEDED });
    expect(done.run).toMatchObject({ status: RunStatus.SUCCEEDED, stepCount: 1, attempt: 2 });
  }, 120_000);
});
