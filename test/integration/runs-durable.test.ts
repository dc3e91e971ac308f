// Runs are durable work: the LLM runner lives in edge processes (here real `node edge/main.ts`
// replicas reaching the agents service and the Brain over gRPC), and the queue with its leases in
// the agents service's records store. A replica killed (SIGKILL) in the middle of a run leaves it
// to another, which takes it over when the lease expires and resumes from the recorded steps
// without doing them again (an MCP tool call whose step is recorded is never made again, only the
// one in flight at the kill); replicas working the queue side by side never run one run twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus, StepKind } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { startChatServer, type ChatRequest, type ChatReply, type ChatServer } from '../support/chat-server.ts';
import { edgeReplicas, platformServicesEnv } from '../support/edge-process.ts';
import { startOpsMcpServer, type OpsMcpServer } from '../support/ops-mcp-server.ts';
import { registerMcpServer } from '../support/mcp-registration.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { until, type UntilOptions } from '../support/until.ts';

const token = 'a-shared-internal-token-of-at-least-32-chars';
const ORG = 'org_durable1';
let platform: TestPlatform;
let model: ChatServer;
let ops: OpsMcpServer;
/** Threads whose first model call after the Brain answered hangs, once (the replica is killed then). */
const hangOnce = new Set<string>();

function script(req: ChatRequest): ChatReply {
  const question = req.messages.find((m) => m.role === 'user')?.content ?? '';
  if (question.startsWith('[mcp]')) return mcpScript(req);
  const tool = req.messages.find((m) => m.role === 'tool');
  if (!tool) return { toolCalls: [{ id: `call_${question.length}`, name: 'brain_recall', arguments: { task: question } }] };
  if (hangOnce.delete(question)) return 'hang';
  return { content: `Answer to "${question}": ${tool.content}` };
}

/** Two MCP tools in one answer (the second hangs the first time), then a conclusion from both. */
function mcpScript(req: ChatRequest): ChatReply {
  const tools = req.messages.filter((m) => m.role === 'tool');
  if (tools.length === 0)
    return {
      toolCalls: [
        { id: 'call_deploys', name: 'ops-durable__list_deploys', arguments: { service: 'checkout' } },
        { id: 'call_query', name: 'ops-durable__slow_query', arguments: { q: 'checkout' } },
      ],
    };
  return { content: tools.map((m) => m.content).join('; ') };
}

/** Edge replicas whose internal services are the test platform's, with the runner on. */
const replicas = edgeReplicas(
  () => ({
    ...platformServicesEnv(platform, token),
    LLM_URL: model.url,
    RUNNER_LEASE_SECONDS: '5',
    RUNNER_POLL_MS: '100',
    GATEWAY_REGISTRY_POLL_MS: '100',
    GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true',
  }),
  { readyWhen: ['LLM runner started'] },
);
const wait = (what: string): UntilOptions => ({ what, timeoutMs: 60_000, context: () => replicas.lastLogLines() });

async function queueRun(question: string) {
  const { thread } = await platform.ctx.clients.threads.createThread({
    organizationId: ORG,
    title: question,
    message: question,
    createdBy: 'usr_test',
  });
  const { run } = await platform.ctx.clients.runs.createRun({ organizationId: ORG, threadId: thread!.threadId, createdBy: 'usr_test' });
  return { threadId: thread!.threadId, runId: run!.runId };
}

const getRun = (runId: string) => platform.ctx.clients.runs.getRun({ organizationId: ORG, runId }).then((r) => r.run!);
const succeeded = (runId: string) =>
  until(
    () => getRun(runId),
    (r) => r.status === RunStatus.SUCCEEDED,
    wait('the run to succeed'),
  );

beforeAll(async () => {
  model = await startChatServer(script);
  ops = await startOpsMcpServer();
  platform = await startTestPlatform({ INTERNAL_TOKEN: token });
  await registerMcpServer(platform, ORG, 'ops-durable', ops.url);
  await platform.ctx.clients.brain.putMemory({
    organizationId: ORG,
    namespace: Namespace.KNOWLEDGE,
    key: 'runbooks/disk-full',
    title: 'Disk full on the database host',
    content: 'When the database disk fills, rotate the WAL archive and raise the volume.',
  });
}, 120_000);

afterAll(async () => {
  await replicas.killAll();
  await platform?.stop();
  await model?.close();
  await ops?.close();
});

describe('durable runs', () => {
  it('survives the kill of the replica running it: another takes it over and resumes without redoing steps', async () => {
    const first = await replicas.start();
    const question = 'The database disk is full';
    hangOnce.add(question);
    const { threadId, runId } = await queueRun(question);
    // The first replica asked the model, recalled from the Brain, and now waits on the model.
    const held = await until(
      () => getRun(runId),
      (r) => r.stepCount === 2 && model.requests.length === 2,
      wait('two steps recorded and the model asked again'),
    );
    expect(held).toMatchObject({ status: RunStatus.RUNNING, attempt: 1 });
    await first.kill();

    await replicas.start();
    const done = await succeeded(runId);
    expect(done.attempt).toBe(2);
    expect(done.agentId).not.toBe(held.agentId);
    expect(done.output).toContain('rotate the WAL archive');
    const { steps } = await platform.ctx.clients.runs.listSteps({ organizationId: ORG, runId });
    expect(steps.map((s) => [s.kind, s.attempt])).toEqual([
      [StepKind.MODEL_CALL, 1],
      [StepKind.BRAIN_READ, 1],
      [StepKind.MODEL_CALL, 2],
    ]);
    // The takeover replayed the recorded conversation to the model instead of starting over.
    expect(model.requests).toHaveLength(3);
    const resumed = model.requests[2]!.messages;
    expect(resumed.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(resumed[3]!.content).toContain('rotate the WAL archive');
    const { messages } = await platform.ctx.clients.threads.listMessages({ organizationId: ORG, threadId });
    expect(messages.map((m) => m.content)).toEqual([question, done.output]);
  }, 180_000);

  it('never runs a run twice while two replicas work the queue', async () => {
    await replicas.start();
    const before = model.requests.length;
    const queued = await Promise.all(Array.from({ length: 8 }, (_, i) => queueRun(`Question number ${i}`)));
    for (const { runId } of queued) {
      const run = await succeeded(runId);
      expect(run.attempt).toBe(1);
      expect(run.stepCount).toBe(3);
    }
    const asked = model.requests.slice(before).map((r) => r.messages.find((m) => m.role === 'user')?.content);
    // Two model calls per run, no more: no run was worked by both replicas.
    for (let i = 0; i < 8; i += 1) expect(asked.filter((q) => q === `Question number ${i}`)).toHaveLength(2);
  }, 180_000);

  it('never calls an MCP tool again for a recorded step: after a kill inside the second call, only that one is made again', async () => {
    // Only one replica works the queue, so the kill lands on the one holding the run.
    await replicas.killAll();
    const first = await replicas.start();
    ops.hangSlowQueries = 1;
    const hanging = ops.hanging();
    const { runId } = await queueRun('[mcp] Why is checkout slow?');
    await hanging;
    // The first call is recorded; the replica waits inside the second.
    const held = await until(
      () => getRun(runId),
      (r) => r.stepCount === 2,
      wait('the first tool call recorded'),
    );
    expect(held.attempt).toBe(1);
    await first.kill();

    await replicas.start();
    const done = await succeeded(runId);
    expect(done.attempt).toBe(2);
    expect(done.output).toContain('deploy 42 of checkout');
    expect(done.output).toContain('p99 of checkout: 2.3 s');
    expect(ops.calls.map((c) => c.tool)).toEqual(['list_deploys', 'slow_query', 'slow_query']);
    const { steps } = await platform.ctx.clients.runs.listSteps({ organizationId: ORG, runId });
    expect(steps.map((s) => [s.kind, s.kind === StepKind.TOOL_CALL ? s.name : '', s.attempt])).toEqual([
      [StepKind.MODEL_CALL, '', 1],
      [StepKind.TOOL_CALL, 'ops-durable/list_deploys', 1],
      [StepKind.TOOL_CALL, 'ops-durable/slow_query', 2],
      [StepKind.MODEL_CALL, '', 2],
    ]);
  }, 180_000);
});
