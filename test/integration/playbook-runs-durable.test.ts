// Playbook runs are durable work like the LLM runner's: the built-in runner lives in edge processes
// (real `node edge/main.ts` replicas reaching the agents service and the Brain over gRPC) and calls
// the organization's MCP server through its own gateway. A replica killed (SIGKILL) in the middle
// of a tool call leaves the run to another, which takes it over when the lease expires and goes on
// from the first step not recorded: the steps already recorded are not done again.
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
import { McpAuthKind } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { RunStatus, StepKind } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { inheritedEnv } from '../support/child-env.ts';
import { startTestPlatform, testEnv, type TestPlatform } from '../support/platform.ts';

const root = path.resolve(import.meta.dirname, '../..');
const token = 'a-shared-internal-token-of-at-least-32-chars';
const ORG = 'org_pbdurable1';
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

/** Starts an edge replica whose internal services are the test platform's, with the playbook runner on. */
async function startReplica(): Promise<ChildProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-pbrunner-'));
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
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  replicas.push({ child, dataDir, exited });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica did not start: ${stderr}`)), 90_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      logs.push(line);
      if (line.includes('playbook runner started')) {
        clearTimeout(timer);
        resolve();
      }
    });
    exited.then(() => reject(new Error(`replica exited: ${stderr}`)));
  });
  return child;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting: ${JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? Number(v) : v))}\n${logs.slice(-30).join('\n')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const getRun = (runId: string) => platform.ctx.clients.runs.getRun({ organizationId: ORG, runId }).then((r) => r.run!);

beforeAll(async () => {
  await startBackend();
  platform = await startTestPlatform({ INTERNAL_TOKEN: token, PLAYBOOK_RUNNER: 'false' });
  await platform.ctx.clients.mcpServers.createMcpServer({
    organizationId: ORG,
    server: { name: 'ops-durable', url: backendUrl, mcpPath: 'mcp', enabled: true, auth: { kind: McpAuthKind.NONE } },
    createdBy: 'usr_test',
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
    hangOnce.add('slow');
    const first = await startReplica();
    const { run } = await platform.ctx.clients.playbooks.startPlaybookRun({
      organizationId: ORG,
      playbookId: playbook!.playbookId,
      createdBy: 'usr_test',
    });
    const runId = run!.runId;
    // The first replica recorded two steps and is inside the third tool call.
    const held = await until(
      () => getRun(runId),
      (r) => r.stepCount === 2 && calls.includes('slow'),
    );
    expect(held).toMatchObject({ status: RunStatus.RUNNING, attempt: 1 });
    first.kill('SIGKILL');
    await replicas[0]!.exited;

    await startReplica();
    const done = await until(
      () => getRun(runId),
      (r) => r.status === RunStatus.SUCCEEDED,
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
    expect(calls).toEqual(['first', 'slow', 'slow']);
    const { memories } = await platform.ctx.clients.brain.getMemories({
      organizationId: ORG,
      namespace: Namespace.EPISODES,
      keys: ['durable/first'],
    });
    expect(memories[0]!.content).toBe('collected first');
  }, 180_000);
});
