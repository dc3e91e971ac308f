// A playbook evaluation is durable work twice over: the evaluation worker and the playbook runner
// both live in edge processes (here real `node edge/main.ts` replicas reaching the platform's
// services over gRPC), each with its lease in the agents service's records store. A replica killed
// (SIGKILL) while a case's run hangs in a tool call leaves both to another replica: its playbook
// runner takes the run over, its evaluation worker takes the evaluation over and is answered that
// same run for the case. Every case is run once and scored once.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import type { JsonObject } from '@bufbuild/protobuf';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EvaluationStatus, type CaseResult } from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { McpAuthKind } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { RunStatus } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { inheritedEnv } from '../support/child-env.ts';
import { startTestPlatform, testEnv, type TestPlatform } from '../support/platform.ts';

const root = path.resolve(import.meta.dirname, '../..');
const token = 'a-shared-internal-token-of-at-least-32-chars';
const ORG = 'org_evalplaybook1';
const CASES = 6;
const question = (i: number) => `What is the setting of service ${i}?`;
let platform: TestPlatform;
let backend: http.Server;
let backendUrl = '';
const replicas: { child: ChildProcess; dataDir: string; exited: Promise<unknown> }[] = [];
/** Every call of the `collect` tool, by its tag; tags in `hangOnce` hang the first time. */
const calls: string[] = [];
const hangOnce = new Set<string>();
const logs: string[] = [];

/** A stateless MCP server (the SDK's) with one tool that records its calls. */
async function startBackend(): Promise<void> {
  backend = http.createServer(async (req, res) => {
    const server = new McpServer({ name: 'ops', version: '1.0.0' });
    server.registerTool('collect', { description: 'Records a call', inputSchema: { tag: z.string() } }, async ({ tag }) => {
      calls.push(tag);
      if (hangOnce.delete(tag)) await new Promise(() => undefined);
      return { content: [{ type: 'text', text: `collected ${tag}` }] };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close());
    await server.connect(transport);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await transport.handleRequest(req, res, chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined);
  });
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
}

/** Starts an edge replica on the platform's services, with the evaluation worker and the playbook runner on. */
async function startReplica(): Promise<ChildProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-evalpb-'));
  const grpc = platform.grpc;
  const child = spawn(process.execPath, ['edge/main.ts'], {
    cwd: root,
    env: {
      ...inheritedEnv(),
      ...testEnv(dataDir, { LOG_LEVEL: 'info' }),
      INTERNAL_TOKEN: token,
      AGENTS_SERVICE_ADDR: grpc.agents!,
      BRAIN_SERVICE_ADDR: grpc.brain!,
      ENTITY_GRAPH_SERVICE_ADDR: grpc['entity-graph']!,
      BILLING_SERVICE_ADDR: grpc.billing!,
      GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true',
      GATEWAY_REGISTRY_POLL_MS: '100',
      RUNNER_LEASE_SECONDS: '5',
      RUNNER_POLL_MS: '100',
      EVALUATION_LEASE_SECONDS: '5',
      EVALUATION_POLL_MS: '100',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  replicas.push({ child, dataDir, exited });
  const waiting = new Set(['playbook runner started', 'evaluation worker started']);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica did not start: ${stderr}`)), 90_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      logs.push(line);
      for (const w of waiting) if (line.includes(w)) waiting.delete(w);
      if (waiting.size === 0) {
        clearTimeout(timer);
        resolve();
      }
    });
    exited.then(() => reject(new Error(`replica exited: ${stderr}`)));
  });
  return child;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting\n${logs.slice(-30).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const evaluation = () => platform.ctx.clients.evaluation;
const getEvaluation = (evaluationId: string) =>
  evaluation()
    .getEvaluation({ organizationId: ORG, evaluationId })
    .then((r) => r.evaluation!);

beforeAll(async () => {
  await startBackend();
  // The platform's own edge neither runs playbooks nor takes evaluations: only the replicas do.
  platform = await startTestPlatform({ INTERNAL_TOKEN: token, PLAYBOOK_RUNNER: 'false', EVALUATION_CONCURRENCY: '0' });
  await platform.ctx.clients.mcpServers.createMcpServer({
    organizationId: ORG,
    server: { name: 'ops-eval', url: backendUrl, mcpPath: 'mcp', enabled: true, auth: { kind: McpAuthKind.NONE } },
    createdBy: 'usr_test',
  });
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
  for (const { child, dataDir, exited } of replicas) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  await platform?.stop();
  await new Promise((resolve) => backend?.close(resolve));
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
    hangOnce.add(question(2));
    const first = await startReplica();
    const { evaluation: queued } = await evaluation().createEvaluation({
      organizationId: ORG,
      datasetId: dataset!.datasetId,
      subject: { kind: { case: 'playbook', value: { playbookId: playbook!.playbookId, inputName: 'question' } } },
      createdBy: 'usr_test',
    });
    const id = queued!.evaluationId;
    const held = await until(
      () => getEvaluation(id),
      (e) => e.casesScored === 2 && calls.includes(question(2)),
    );
    expect(held).toMatchObject({ status: EvaluationStatus.RUNNING, attempt: 1 });
    first.kill('SIGKILL');
    await replicas[0]!.exited;

    await startReplica();
    const done = await until(
      () => getEvaluation(id),
      (e) => e.status === EvaluationStatus.SUCCEEDED,
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
    expect(calls.filter((c) => c === question(2))).toHaveLength(2);
    expect(calls).toHaveLength(CASES + 1);
  }, 240_000);
});
