// A playbook evaluation is durable work twice over: the evaluation worker and the playbook runner
// both live in edge processes (here real `node edge/main.ts` replicas reaching the platform's
// services over gRPC), each with its lease in the agents service's records store. A replica killed
// (SIGKILL) while a case's run hangs in a tool call leaves both to another replica: its playbook
// runner takes the run over, its evaluation worker takes the evaluation over and is answered that
// same run for the case. Every case is run once and scored once.
import type { JsonObject } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvaluationStatus, type CaseResult } from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { RunStatus } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { startCollectingMcpServer, type CollectingMcpServer } from '../support/collecting-mcp-server.ts';
import { edgeReplicas, platformServicesEnv } from '../support/edge-process.ts';
import { registerMcpServer } from '../support/mcp-registration.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { until, type UntilOptions } from '../support/until.ts';

const token = 'a-shared-internal-token-of-at-least-32-chars';
const ORG = 'org_evalplaybook1';
const CASES = 6;
const question = (i: number) => `What is the setting of service ${i}?`;
let platform: TestPlatform;
/** Its `collect` tool records every call by its tag; tags in `hangOnce` hang the first time. */
let backend: CollectingMcpServer;
/** Edge replicas on the platform's services, with the evaluation worker and the playbook runner on. */
const replicas = edgeReplicas(
  () => ({
    ...platformServicesEnv(platform, token),
    GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true',
    GATEWAY_REGISTRY_POLL_MS: '100',
    RUNNER_LEASE_SECONDS: '5',
    RUNNER_POLL_MS: '100',
    EVALUATION_LEASE_SECONDS: '5',
    EVALUATION_POLL_MS: '100',
  }),
  { readyWhen: ['playbook runner started', 'evaluation worker started'] },
);
const waitLong = (what: string): UntilOptions => ({ what, timeoutMs: 120_000, context: () => replicas.lastLogLines() });

const evaluation = () => platform.ctx.clients.evaluation;
const getEvaluation = (evaluationId: string) =>
  evaluation()
    .getEvaluation({ organizationId: ORG, evaluationId })
    .then((r) => r.evaluation!);

beforeAll(async () => {
  backend = await startCollectingMcpServer();
  // The platform's own edge neither runs playbooks nor takes evaluations: only the replicas do.
  platform = await startTestPlatform({ INTERNAL_TOKEN: token, PLAYBOOK_RUNNER: 'false', EVALUATION_CONCURRENCY: '0' });
  await registerMcpServer(platform, ORG, 'ops-eval', backend.url);
  await platform.ctx.clients.brain.putMemories({
    organizationId: ORG,
    memories: Array.from({ length: CASES }, (_, i) => ({
      namespace: Namespace.KNOWLEDGE,
      key: `settings/service-${i}`,
      title: `Setting of service ${i}`,
      content: `Service ${i} runs with its setting set to ${i * 7 + 1000}.`,
    })),
  });
}, 120_000);

afterAll(async () => {
  await replicas.killAll();
  await platform?.stop();
  await backend?.close();
});

describe('durable playbook evaluations', () => {
  it("survives the kill of the replica working it and its case's run: each case run once, scored once", async () => {
    const document: JsonObject = {
      name: 'Look up a setting',
      instructions: 'Note the question, then answer it from the knowledge namespace.',
      inputs: [{ name: 'question', type: 'string', required: true }],
      tools: ['ops-eval/collect'],
      namespaces: ['knowledge'],
      steps: [
        { id: 'note', kind: 'tool_call', server: 'ops-eval', tool: 'collect', arguments: { tag: '{{ inputs.question }}' } },
        { id: 'lookup', kind: 'brain_read', namespace: 'knowledge', query: '{{ inputs.question }}', limit: 3 },
      ],
      output: '{{ steps.lookup.result.memories[0].content }}',
    };
    const { playbook } = await platform.ctx.clients.playbooks.createPlaybook({
      organizationId: ORG,
      document,
      publish: true,
      createdBy: 'usr_test',
    });
    const { dataset } = await evaluation().createDataset({ organizationId: ORG, name: 'settings', createdBy: 'usr_test' });
    await evaluation().addCases({
      organizationId: ORG,
      datasetId: dataset!.datasetId,
      cases: Array.from({ length: CASES }, (_, i) => ({
        input: question(i),
        expectedMemories: [{ namespace: 'knowledge', key: `settings/service-${i}` }],
        expectedAnswer: `set to ${i * 7 + 1000}`,
      })),
    });
    // The third case's run hangs in its tool call the first time.
    backend.hangOnce.add(question(2));
    const first = await replicas.start();
    const { evaluation: queued } = await evaluation().createEvaluation({
      organizationId: ORG,
      datasetId: dataset!.datasetId,
      subject: { kind: { case: 'playbook', value: { playbookId: playbook!.playbookId, inputName: 'question' } } },
      createdBy: 'usr_test',
    });
    const id = queued!.evaluationId;
    const held = await until(
      () => getEvaluation(id),
      (e) => e.casesScored === 2 && backend.calls.includes(question(2)),
      waitLong('two cases scored and the third case inside its tool call'),
    );
    expect(held).toMatchObject({ status: EvaluationStatus.RUNNING, attempt: 1 });
    await first.kill();

    await replicas.start();
    const done = await until(
      () => getEvaluation(id),
      (e) => e.status === EvaluationStatus.SUCCEEDED,
      waitLong('the evaluation to succeed'),
    );
    expect(done).toMatchObject({ attempt: 2, caseTotal: CASES, casesScored: CASES });
    expect(done.metrics.find((m) => m.name === 'recall@1')).toMatchObject({ value: 1, cases: CASES });
    expect(done.metrics.find((m) => m.name === 'contains_pass_rate')).toMatchObject({ value: 1, cases: CASES });

    const { results } = await evaluation().listCaseResults({ organizationId: ORG, evaluationId: id, pageSize: 100 });
    expect(results.map((r: CaseResult) => r.attempt)).toEqual([1, 1, 2, 2, 2, 2]);
    const { runs } = await platform.ctx.clients.runs.listRuns({ organizationId: ORG, pageSize: 100 });
    // One run per case, the one each result names; the hung one was taken over, not made again.
    expect(runs).toHaveLength(CASES);
    expect(new Set(runs.map((r) => r.runId))).toEqual(new Set(results.map((r) => r.runId)));
    expect(runs.every((r) => r.status === RunStatus.SUCCEEDED)).toBe(true);
    expect(runs.find((r) => r.runId === results[2].runId)).toMatchObject({ attempt: 2 });
    // Only the tool call in flight at the kill was made again.
    expect(backend.calls.filter((c) => c === question(2))).toHaveLength(2);
    expect(backend.calls).toHaveLength(CASES + 1);
  }, 240_000);
});
