// Evaluations are durable work: the evaluation worker lives in edge processes (here real
// `node edge/main.ts` replicas reaching the agents service and the Brain over gRPC), the queue and
// its leases in the agents service's records store. A worker that lost its lease is refused and a
// takeover is handed only the cases without a result; a replica killed (SIGKILL) in the middle of
// an evaluation leaves it to another, which finishes it with every case scored exactly once.
import { ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvaluationStatus, Evaluator, type CaseResult } from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { reasonOf } from '../../services/common/rpc/reasons.ts';
import { edgeReplicas, platformServicesEnv } from '../support/edge-process.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { until, type UntilOptions } from '../support/until.ts';

const token = 'a-shared-internal-token-of-at-least-32-chars';
const ORG = 'org_evaldurable1';
const MEMORIES = 20;
const CASES = 400;
let platform: TestPlatform;

/** Edge replicas whose internal services are the test platform's, with the evaluation worker on. */
const replicas = edgeReplicas(
  () => ({ ...platformServicesEnv(platform, token), EVALUATION_LEASE_SECONDS: '5', EVALUATION_POLL_MS: '100' }),
  { readyWhen: ['evaluation worker started'] },
);
const wait = (what: string, timeoutMs = 120_000): UntilOptions => ({
  what,
  timeoutMs,
  intervalMs: 50,
  context: () => replicas.lastLogLines(),
});

const evaluation = () => platform.ctx.clients.evaluation;
const getEvaluation = (evaluationId: string) =>
  evaluation()
    .getEvaluation({ organizationId: ORG, evaluationId })
    .then((r) => r.evaluation!);

async function datasetOf(name: string, count: number) {
  const { dataset } = await evaluation().createDataset({ organizationId: ORG, name, createdBy: 'usr_test' });
  const cases = Array.from({ length: count }, (_, i) => ({
    input: `What is the setting number ${i % MEMORIES} of service ${i % MEMORIES}?`,
    namespace: 'knowledge',
    expectedMemories: [{ namespace: 'knowledge', key: `settings/service-${i % MEMORIES}` }],
  }));
  for (let i = 0; i < cases.length; i += 200)
    await evaluation().addCases({ organizationId: ORG, datasetId: dataset!.datasetId, cases: cases.slice(i, i + 200) });
  return dataset!.datasetId;
}

async function allResults(evaluationId: string): Promise<CaseResult[]> {
  const out: CaseResult[] = [];
  let pageToken = '';
  do {
    const page = await evaluation().listCaseResults({ organizationId: ORG, evaluationId, pageSize: 1_000, pageToken });
    out.push(...page.results);
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return out;
}

beforeAll(async () => {
  // The platform's own edge takes no evaluation: only the replicas (or the test itself) do.
  platform = await startTestPlatform({ INTERNAL_TOKEN: token, EVALUATION_CONCURRENCY: '0' });
  await platform.ctx.clients.brain.putMemories({
    organizationId: ORG,
    memories: Array.from({ length: MEMORIES }, (_, i) => ({
      namespace: Namespace.KNOWLEDGE,
      key: `settings/service-${i}`,
      title: `Setting number ${i} of service ${i}`,
      content: `Service ${i} runs with setting number ${i} set to ${i * 7}.`,
    })),
  });
}, 120_000);

afterAll(async () => {
  await replicas.killAll();
  await platform?.stop();
});

describe('durable evaluations', () => {
  it('refuses a worker whose lease expired and hands the next one only the cases without a result', async () => {
    const datasetId = await datasetOf('leases', 5);
    const { evaluation: queued } = await evaluation().createEvaluation({
      organizationId: ORG,
      datasetId,
      subject: { kind: { case: 'brainSearch', value: { limit: 5 } } },
      evaluators: [Evaluator.RETRIEVAL],
      createdBy: 'usr_test',
    });
    const first = await evaluation().claimEvaluation({ agentId: 'worker-a', leaseSeconds: 5 });
    expect(first.evaluation?.evaluationId).toBe(queued!.evaluationId);
    const key = { organizationId: ORG, evaluationId: queued!.evaluationId };
    const score = (caseId: string) => ({ caseId, scores: [{ name: 'reciprocal_rank', value: 1, passed: true }], firstRelevantRank: 1 });
    const next = await evaluation().recordCaseResults({
      ...key,
      leaseId: first.leaseId,
      results: first.cases.slice(0, 2).map((c) => score(c.caseId)),
    });
    expect(next.cases.map((c) => c.caseId)).toEqual(first.cases.slice(2).map((c) => c.caseId));
    // worker-a stalls past its lease; worker-b takes over and is given cases 3-5 only.
    const second = await until(
      () => evaluation().claimEvaluation({ agentId: 'worker-b', leaseSeconds: 5 }),
      (c) => c.evaluation !== undefined,
      wait("worker-b's claim", 20_000),
    );
    expect(second.evaluation).toMatchObject({ attempt: 2, casesScored: 2 });
    expect(second.cases.map((c) => c.caseId)).toEqual(first.cases.slice(2).map((c) => c.caseId));
    const late = await evaluation()
      .recordCaseResults({ ...key, leaseId: first.leaseId, results: [score(first.cases[2].caseId)] })
      .catch((err: unknown) => err);
    expect(late instanceof ConnectError && reasonOf(late)).toBe('lease-lost');
    await evaluation().recordCaseResults({ ...key, leaseId: second.leaseId, results: second.cases.map((c) => score(c.caseId)) });
    const done = await evaluation().completeEvaluation({ ...key, leaseId: second.leaseId, status: EvaluationStatus.SUCCEEDED });
    expect(done.evaluation).toMatchObject({ status: EvaluationStatus.SUCCEEDED, casesScored: 5 });
    expect(done.evaluation!.metrics).toEqual([expect.objectContaining({ name: 'mrr', value: 1, cases: 5 })]);
    expect((await allResults(queued!.evaluationId)).map((r) => r.attempt)).toEqual([1, 1, 2, 2, 2]);
  }, 60_000);

  it('survives the kill of the replica scoring it: another finishes it, every case scored once', async () => {
    const datasetId = await datasetOf('durable', CASES);
    const first = await replicas.start();
    const { evaluation: queued } = await evaluation().createEvaluation({
      organizationId: ORG,
      datasetId,
      subject: { kind: { case: 'brainSearch', value: { limit: 10 } } },
      createdBy: 'usr_test',
    });
    const id = queued!.evaluationId;
    const held = await until(
      () => getEvaluation(id),
      (e) => e.casesScored >= 20,
      wait('20 cases scored'),
    );
    await first.kill();
    // A recording the replica sent just before it died may still be landing.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const atKill = (await getEvaluation(id)).casesScored;
    expect(atKill).toBeLessThan(CASES);

    await replicas.start();
    const done = await until(
      () => getEvaluation(id),
      (e) => e.status === EvaluationStatus.SUCCEEDED,
      wait('the evaluation to succeed'),
    );
    expect(done).toMatchObject({ attempt: 2, caseTotal: CASES, casesScored: CASES });
    expect(done.agentId).not.toBe(held.agentId);
    const results = await allResults(id);
    expect(results).toHaveLength(CASES);
    expect(new Set(results.map((r) => r.caseId)).size).toBe(CASES);
    // What the killed replica recorded stayed its own; the takeover scored only the rest.
    expect(results.filter((r) => r.attempt === 1)).toHaveLength(atKill);
    expect(results.filter((r) => r.attempt === 2)).toHaveLength(CASES - atKill);
    expect(results.map((r) => Number(r.seq))).toEqual([...results.map((r) => Number(r.seq))].sort((a, b) => a - b));
    expect(done.metrics.find((m) => m.name === 'recall@10')).toMatchObject({ cases: CASES });
  }, 240_000);
});
