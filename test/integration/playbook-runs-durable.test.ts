// Playbook runs are durable work like the LLM runner's: the built-in runner lives in edge processes
// (real `node edge/main.ts` replicas reaching the agents service and the Brain over gRPC) and calls
// the organization's MCP server through its own gateway. A replica killed (SIGKILL) in the middle
// of a tool call leaves the run to another, which takes it over when the lease expires and goes on
// from the first step not recorded: the steps already recorded are not done again.
import type { JsonObject } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus, StepKind } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { startCollectingMcpServer, type CollectingMcpServer } from '../support/collecting-mcp-server.ts';
import { edgeReplicas, platformServicesEnv } from '../support/edge-process.ts';
import { registerMcpServer } from '../support/mcp-registration.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { until, type UntilOptions } from '../support/until.ts';

const token = 'a-shared-internal-token-of-at-least-32-chars';
const ORG = 'org_pbdurable1';
let platform: TestPlatform;
/** Its `collect` tool records every call by its tag; tags in `hangOnce` hang the first time. */
let backend: CollectingMcpServer;
/** Edge replicas whose internal services are the test platform's, with the playbook runner on. */
const replicas = edgeReplicas(
  () => ({
    ...platformServicesEnv(platform, token),
    GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true',
    GATEWAY_REGISTRY_POLL_MS: '100',
    RUNNER_LEASE_SECONDS: '5',
    RUNNER_POLL_MS: '100',
  }),
  { readyWhen: ['playbook runner started'] },
);
const wait = (what: string): UntilOptions => ({ what, timeoutMs: 60_000, context: () => replicas.lastLogLines() });

const getRun = (runId: string) => platform.ctx.clients.runs.getRun({ organizationId: ORG, runId }).then((r) => r.run!);

beforeAll(async () => {
  backend = await startCollectingMcpServer();
  platform = await startTestPlatform({ INTERNAL_TOKEN: token, PLAYBOOK_RUNNER: 'false' });
  await registerMcpServer(platform, ORG, 'ops-durable', backend.url);
}, 120_000);

afterAll(async () => {
  await replicas.killAll();
  await platform?.stop();
  await backend?.close();
});

describe('durable playbook runs', () => {
  it('survives the kill of the replica running it: another resumes after the recorded steps', async () => {
    const document: JsonObject = {
      name: 'Durable',
      instructions: 'Collect, record, collect again.',
      tools: ['ops-durable/collect'],
      namespaces: ['episodes'],
      steps: [
        { id: 'first', kind: 'tool_call', server: 'ops-durable', tool: 'collect', arguments: { tag: 'first' } },
        {
          id: 'record',
          kind: 'brain_write',
          namespace: 'episodes',
          key: 'durable/first',
          content: '{{ steps.first.result.content[0].text }}',
        },
        { id: 'slow', kind: 'tool_call', server: 'ops-durable', tool: 'collect', arguments: { tag: 'slow' } },
      ],
      output: 'Done: {{ steps.slow.result.content[0].text }}',
    };
    const { playbook } = await platform.ctx.clients.playbooks.createPlaybook({
      organizationId: ORG,
      document,
      publish: true,
      createdBy: 'usr_test',
    });
    backend.hangOnce.add('slow');
    const first = await replicas.start();
    const { run } = await platform.ctx.clients.playbooks.startPlaybookRun({
      organizationId: ORG,
      playbookId: playbook!.playbookId,
      createdBy: 'usr_test',
    });
    const runId = run!.runId;
    // The first replica recorded two steps and is inside the third tool call.
    const held = await until(
      () => getRun(runId),
      (r) => r.stepCount === 2 && backend.calls.includes('slow'),
      wait('two steps recorded and the third tool call made'),
    );
    expect(held).toMatchObject({ status: RunStatus.RUNNING, attempt: 1 });
    await first.kill();

    await replicas.start();
    const done = await until(
      () => getRun(runId),
      (r) => r.status === RunStatus.SUCCEEDED,
      wait('the run to succeed'),
    );
    expect(done.attempt).toBe(2);
    expect(done.agentId).not.toBe(held.agentId);
    expect(done.output).toBe('Done: collected slow');
    const { steps } = await platform.ctx.clients.runs.listSteps({ organizationId: ORG, runId });
    expect(steps.map((s) => [s.kind, s.attempt])).toEqual([
      [StepKind.TOOL_CALL, 1],
      [StepKind.BRAIN_WRITE, 1],
      [StepKind.TOOL_CALL, 2],
    ]);
    // Only the call in flight at the kill was made again.
    expect(backend.calls).toEqual(['first', 'slow', 'slow']);
    const { memories } = await platform.ctx.clients.brain.getMemories({
      organizationId: ORG,
      namespace: Namespace.EPISODES,
      keys: ['durable/first'],
    });
    expect(memories[0]!.content).toBe('collected first');
  }, 180_000);
});
