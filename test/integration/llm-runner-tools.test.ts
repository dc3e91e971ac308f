// The LLM runner's tools over the real REST API, against a scripted model speaking the
// chat-completions wire protocol: the organization's MCP servers (a real MCP SDK server registered
// under three names) offered as function tools through the gateway, under the servers' tool
// policies, named without collisions; a call of one recorded as a tool_call step; what the model
// learned written to the Brain with brain_remember and listed among the memories the thread
// produced; a playbook's declared tools and namespaces; the outcome reported to the Brain on the
// memories recalled (LLM runs) or named by brain_read steps (external runs), when asked for.
// Attachments on thread messages by reference, read back and given to the model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { startChatServer, type ChatReply, type ChatRequest, type ChatServer } from '../support/chat-server.ts';
import { joinAs, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import { startOpsMcpServer, type OpsMcpServer } from '../support/ops-mcp-server.ts';
import type { TestPlatform } from '../support/platform.ts';
import { isRunFinished, restClient, type Json } from '../support/rest.ts';
import { until } from '../support/until.ts';

let platform: TestPlatform;
let model: ChatServer;
let ops: OpsMcpServer;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
let viewer: TestMember;
/** The thread of the run that wrote to the Brain. */
let opsThreadId = '';
const call = restClient(() => api);
const path = (p: string) => `/organizations/${org}${p}`;
const t = () => owner.access_token;

const toolMessages = (req: ChatRequest) => req.messages.filter((m) => m.role === 'tool');

/** The model, by the first user message's tag: each flow calls tools in turn, then concludes. */
function script(req: ChatRequest): ChatReply {
  const first = req.messages.find((m) => m.role === 'user')?.content ?? '';
  const done = toolMessages(req);
  const ask = (name: string, args: unknown) => ({ toolCalls: [{ id: `call_${done.length}`, name, arguments: args }] });
  if (first.startsWith('[list]')) return { content: 'Listed.' };
  if (first.startsWith('[ops]')) {
    if (done.length === 0) return ask('ops-llm__list_deploys', { service: 'checkout' });
    if (done.length === 1)
      return ask('brain_remember', {
        namespace: 'episodes',
        key: 'incidents/checkout-deploy-42',
        title: 'Checkout latency after deploy 42',
        content: `Checkout latency rose because ${done[0].content}.`,
      });
    return { content: `Concluded: ${done[0].content}` };
  }
  if (first.startsWith('[denied]')) {
    if (done.length === 0) return ask('ops-llm__restart_service', { service: 'checkout' });
    return { content: `Could not restart: ${done[0].content}` };
  }
  if (first.startsWith('[recall]')) {
    if (done.length === 0) return ask('brain_recall', { task: 'checkout latency after a deploy' });
    return { content: 'Rolled back the payment client config.' };
  }
  return { content: 'Nothing to do.' };
}

const readRun = (id: string) => async () => (await call(path(`/runs/${id}`), { token: t() })).json;

/** Opens a thread with its first message and runs it (an LLM run unless said); the finished run. */
async function runThread(message: string, body: Json = {}): Promise<Json> {
  const thread = (await call(path('/threads'), { token: t(), body: { title: message.slice(0, 60), message } })).json;
  const created = await call(path(`/threads/${thread.id}/runs`), { token: t(), body });
  expect(created.status).toBe(201);
  return until(readRun(created.json.id), isRunFinished);
}

const stepsOf = async (runId: string) => (await call(path(`/runs/${runId}/steps`), { token: t() })).json.steps as Json[];
const requestFor = (tag: string) => model.requests.find((r) => r.messages.find((m) => m.role === 'user')?.content?.startsWith(tag))!;
const offered = (req: ChatRequest) => (req.tools ?? []).map((x) => x.function.name);

/** Waits until the gateway serves the server (its registry poll has seen it): 404 until then. */
async function untilGatewayServes(name: string): Promise<void> {
  await until(
    async () => ({ status: (await fetch(`${platform.ctx.config.publicUrls.gateway}/${name}/mcp`, { method: 'POST' })).status }),
    (r) => r.status !== 404,
  );
}

const stats = async (key: string) =>
  (await platform.ctx.clients.brain.getMemories({ organizationId: org, namespace: Namespace.KNOWLEDGE, keys: [key] })).memories[0]!.stats!;

beforeAll(async () => {
  model = await startChatServer(script);
  ops = await startOpsMcpServer();
  platform = await startOAuthTestPlatform({
    LLM_URL: model.url,
    LLM_MODEL: 'scripted-tools',
    RUNNER_POLL_MS: '50',
    RUNNER_LEASE_SECONDS: '5',
    GATEWAY_REGISTRY_POLL_MS: '100',
    GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true',
  });
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  viewer = await joinAs(platform, org, 'viewer');
  const servers = [
    { name: 'ops-llm', url: ops.url, tool_policy: { deny: ['restart_service'] } },
    // Two names that come out the same as function names (`.` is not allowed there).
    { name: 'ops.x', url: ops.url, tool_policy: { allow: ['list_deploys'] } },
    { name: 'ops_x', url: ops.url, tool_policy: { allow: ['list_deploys'] } },
  ];
  for (const body of servers) expect((await call(path('/mcp-servers'), { token: t(), body })).status).toBe(201);
  // Another organization's server: never offered to this one's runs.
  const theirs = await call(`/organizations/${other.organizationId}/mcp-servers`, {
    token: other.access_token,
    body: { name: 'ops-theirs', url: ops.url },
  });
  expect(theirs.status).toBe(201);
  for (const { name } of servers) await untilGatewayServes(name);
  await platform.ctx.clients.brain.putMemory({
    organizationId: org,
    namespace: Namespace.KNOWLEDGE,
    key: 'runbooks/checkout-latency',
    title: 'Checkout latency after deploys',
    content: 'When checkout latency rises after a deploy, roll back the payment client config.',
  });
}, 240_000);

afterAll(async () => {
  await platform?.stop();
  await model?.close();
  await ops?.close();
});

describe("the organization's MCP servers as the model's tools", () => {
  it('offers the tools each server lists through the gateway, under its policy, with names that never collide', async () => {
    const run = await runThread('[list] Which tools are there?');
    expect(run.status).toBe('succeeded');
    const names = offered(requestFor('[list]'));
    expect(names).toEqual([
      'brain_recall',
      'brain_remember',
      'ops-llm__list_deploys',
      'ops-llm__slow_query',
      'ops_x__list_deploys',
      'ops_x__list_deploys_2',
    ]);
    const tools = requestFor('[list]').tools!;
    expect(tools.find((x) => x.function.name === 'ops_x__list_deploys')!.function.description).toMatch(/^ops\.x: /);
    expect(tools.find((x) => x.function.name === 'ops_x__list_deploys_2')!.function.description).toMatch(/^ops_x: /);
    expect(tools.find((x) => x.function.name === 'ops-llm__list_deploys')!.function.parameters).toMatchObject({
      type: 'object',
      properties: { service: { type: 'string' } },
    });
  });

  it('records the MCP call as a tool_call step, then the Brain write, and the memory is findable and listed on the thread', async () => {
    const before = ops.calls.length;
    const run = await runThread('[ops] Why is checkout slow since 09:35?');
    expect(run).toMatchObject({ status: 'succeeded', step_count: 5, usage: { tool_calls: 2 } });
    expect(run.output).toContain('deploy 42 of checkout at 09:35');
    expect(ops.calls.slice(before)).toEqual([{ tool: 'list_deploys', args: { service: 'checkout' } }]);
    const steps = await stepsOf(run.id);
    expect(steps.map((s) => [s.kind, s.name, s.ok])).toEqual([
      ['model_call', 'scripted-tools', true],
      ['tool_call', 'ops-llm/list_deploys', true],
      ['model_call', 'scripted-tools', true],
      ['brain_write', 'brain_remember', true],
      ['model_call', 'scripted-tools', true],
    ]);
    expect(steps[1].arguments).toEqual({
      tool_call_id: 'call_0',
      arguments: { service: 'checkout' },
      server: 'ops-llm',
      tool: 'list_deploys',
    });
    expect(steps[1].result.content[0].text).toContain('deploy 42 of checkout');
    expect(steps[3].result).toMatchObject({ namespace: 'episodes', key: 'incidents/checkout-deploy-42', version: 1, outcome: 'created' });
    // The model read the tool's text back, not its JSON.
    const second = model.requests.find((r) => r.messages.some((m) => m.role === 'tool' && m.tool_call_id === 'call_0'))!;
    expect(second.messages.find((m) => m.role === 'tool')!.content).toBe(
      'deploy 42 of checkout at 09:35 lowered the payment client timeout to 2 s',
    );

    const found = await platform.ctx.clients.brain.searchMemories({
      organizationId: org,
      namespace: Namespace.EPISODES,
      query: 'checkout latency deploy 42 payment client timeout',
      limit: 5,
    });
    expect(found.results[0]?.memory).toMatchObject({ key: 'incidents/checkout-deploy-42' });
    expect(found.results[0]?.memory?.content).toContain('lowered the payment client timeout');

    const memories = await call(path(`/threads/${run.thread_id}/memories`), { token: viewer.access_token });
    expect(memories.status).toBe(200);
    opsThreadId = run.thread_id;
    expect(memories.json.memories).toEqual([
      {
        thread_id: run.thread_id,
        namespace: 'episodes',
        key: 'incidents/checkout-deploy-42',
        version: 1,
        run_id: run.id,
        step_index: 3,
        created_at: expect.any(String),
      },
    ]);
  });

  it("answers a call of a tool the server's policy denies with an error the model reads; the backend never sees it", async () => {
    const before = ops.calls.length;
    const run = await runThread('[denied] Restart checkout');
    expect(run.status).toBe('succeeded');
    expect(offered(requestFor('[denied]'))).not.toContain('ops-llm__restart_service');
    const steps = await stepsOf(run.id);
    expect(steps[1]).toMatchObject({ kind: 'tool_call', name: 'ops-llm__restart_service', ok: false });
    expect(steps[1].error).toMatch(/^there is no tool "ops-llm__restart_service"; the tools are: brain_recall, brain_remember, /);
    expect(run.output).toContain('Could not restart: Error: there is no tool');
    expect(ops.calls.slice(before)).toEqual([]);
  });

  it("offers a playbook run only the playbook's declared tools and namespaces", async () => {
    const created = await call(path('/playbooks'), {
      token: t(),
      body: {
        document: { name: 'Scoped', instructions: 'Look at deploys.', tools: ['ops-llm/list_*'], namespaces: ['episodes'] },
        publish: true,
      },
    });
    expect(created.status).toBe(201);
    const started = await call(path(`/playbooks/${created.json.id}/runs`), { token: t(), body: { title: '[scoped] deploys' } });
    expect(started.json.executor).toBe('llm');
    const run = await until(readRun(started.json.id), isRunFinished);
    expect(run.status).toBe('succeeded');
    const asked = model.requests.find((r) => r.messages[0]?.content === 'Look at deploys.')!;
    expect(offered(asked)).toEqual(['brain_recall', 'brain_remember', 'ops-llm__list_deploys']);
    const remember = asked.tools!.find((x) => x.function.name === 'brain_remember')!;
    expect((remember.function.parameters as Json).properties.namespace.enum).toEqual(['episodes']);
  });
});

describe('the Brain feedback of LLM and external runs', () => {
  it('reports the outcome of an LLM run on the memories the model recalled, once, when the run asks for it', async () => {
    const start = await stats('runbooks/checkout-latency');
    const quiet = await runThread('[recall] checkout is slow again');
    expect(quiet).toMatchObject({ status: 'succeeded', step_count: 3, brain_feedback: false });
    expect((await stats('runbooks/checkout-latency')).worked).toBe(start.worked);

    const asked = await runThread('[recall] checkout is slow once more', { brain_feedback: true });
    expect(asked).toMatchObject({ status: 'succeeded', step_count: 4, brain_feedback: true });
    const steps = await stepsOf(asked.id);
    const recalled = steps[1].result.memories.map((m: Json) => `${m.namespace}/${m.key}`);
    expect(recalled).toContain('knowledge/runbooks/checkout-latency');
    expect(steps.at(-1)).toMatchObject({
      kind: 'brain_write',
      name: 'brain_feedback',
      ok: true,
      arguments: { outcome: 'worked', memories: recalled },
      result: { recorded: recalled.length, missing: [] },
    });
    expect((await stats('runbooks/checkout-latency')).worked).toBe(start.worked + 1);
    // The feedback step is not a Brain write of the thread.
    expect((await call(path(`/threads/${asked.thread_id}/memories`), { token: t() })).json.memories).toEqual([]);
  });

  it("reports an external run's outcome on the memories its brain_read steps named, once, and lists its Brain writes", async () => {
    const key = (await call(path('/api-keys'), { token: t(), body: { name: 'feedback-bot', scopes: ['write'] } })).json.secret;
    const thread = (await call(path('/threads'), { token: t(), body: { title: 'External', message: 'checkout slow' } })).json;
    const created = (await call(path(`/threads/${thread.id}/runs`), { token: t(), body: { executor: 'external', brain_feedback: true } }))
      .json;
    expect(created.brain_feedback).toBe(true);
    const start = await stats('runbooks/checkout-latency');
    const claimed = await call(path('/runs/claim'), { apiKey: key, body: { agent_id: 'feedback-bot', lease_seconds: 60 } });
    expect(claimed.json.run.id).toBe(created.id);
    const lease = claimed.json.lease_id;
    const report = (body: Json) => call(path(`/runs/${created.id}/steps`), { apiKey: key, body: { lease_id: lease, ok: true, ...body } });
    const read = await report({
      kind: 'brain_read',
      name: 'recall_context',
      result: {
        memories: [
          { namespace: 'knowledge', key: 'runbooks/checkout-latency' },
          { namespace: 'knowledge', key: 'runbooks/never-written' },
          { namespace: 'nowhere', key: 'x' },
        ],
      },
    });
    expect(read.status).toBe(201);
    const write = await report({
      kind: 'brain_write',
      name: 'manage_memories',
      result: { namespace: 'knowledge', key: 'runbooks/checkout-rollback', version: 3 },
    });
    expect(write.status).toBe(201);
    const wrongLease = await call(path(`/runs/${created.id}/complete`), {
      apiKey: key,
      body: { lease_id: '3b0f2c4e-8a1d-4f6b-9c2e-7d5a1b3c9e0f', status: 'succeeded' },
    });
    expect(wrongLease.status).toBe(409);
    expect((await stats('runbooks/checkout-latency')).worked).toBe(start.worked);
    const done = await call(path(`/runs/${created.id}/complete`), {
      apiKey: key,
      body: { lease_id: lease, status: 'succeeded', output: 'Rolled back.' },
    });
    expect(done.json).toMatchObject({ status: 'succeeded', step_count: 3 });
    const steps = await stepsOf(created.id);
    expect(steps[2]).toMatchObject({
      kind: 'brain_write',
      name: 'brain_feedback',
      arguments: { outcome: 'worked', memories: ['knowledge/runbooks/checkout-latency', 'knowledge/runbooks/never-written'] },
      result: { recorded: 1, missing: ['knowledge/runbooks/never-written'] },
    });
    expect((await stats('runbooks/checkout-latency')).worked).toBe(start.worked + 1);
    // A completion retried after the run ended is refused, and reports nothing again.
    const again = await call(path(`/runs/${created.id}/complete`), { apiKey: key, body: { lease_id: lease, status: 'succeeded' } });
    expect(again.status).toBe(409);
    expect((await stats('runbooks/checkout-latency')).worked).toBe(start.worked + 1);
    const memories = (await call(path(`/threads/${thread.id}/memories`), { token: t() })).json.memories;
    expect(memories.map((m: Json) => [m.namespace, m.key, m.version, m.step_index])).toEqual([
      ['knowledge', 'runbooks/checkout-rollback', 3, 1],
    ]);
  });
});

describe('attachments and the memories of a thread', () => {
  const attachment = { uri: 's3://ops-logs/deploys/checkout-42.log', media_type: 'text/plain', title: 'Deploy 42 log', size_bytes: 48213 };

  it('keeps attachments by reference on messages, reads them back, and gives them to the model', async () => {
    const thread = (await call(path('/threads'), { token: t(), body: { title: 'With a log' } })).json;
    const posted = await call(path(`/threads/${thread.id}/messages`), {
      token: t(),
      body: {
        content: 'What does this log say?',
        attachments: [attachment, { uri: 'https://grafana.example.com/d/x', media_type: 'text/html' }],
      },
    });
    expect(posted.status).toBe(201);
    expect(posted.json.attachments).toEqual([
      attachment,
      { uri: 'https://grafana.example.com/d/x', media_type: 'text/html', title: '', size_bytes: null },
    ]);
    const listed = await call(path(`/threads/${thread.id}/messages`), { token: viewer.access_token });
    expect(listed.json.messages[0].attachments).toEqual(posted.json.attachments);
    const run = (await call(path(`/threads/${thread.id}/runs`), { token: t(), body: {} })).json;
    await until(readRun(run.id), isRunFinished);
    const asked = model.requests.find((r) => r.messages.some((m) => m.content?.startsWith('What does this log say?')))!;
    expect(asked.messages[1].content).toBe(
      'What does this log say?\n\nAttachments:\n- Deploy 42 log (text/plain, 48213 bytes): s3://ops-logs/deploys/checkout-42.log\n' +
        '- https://grafana.example.com/d/x (text/html): https://grafana.example.com/d/x',
    );
  });

  it('answers malformed attachments with 422 naming the field, never a 500', async () => {
    const thread = (await call(path('/threads'), { token: t(), body: { title: 'Bad attachments' } })).json;
    const post = (attachments: unknown) =>
      call(path(`/threads/${thread.id}/messages`), { token: t(), body: { content: 'x', attachments } });
    const cases: Array<[unknown, Array<string | number>]> = [
      [[{ uri: 'javascript:alert(1)', media_type: 'text/html' }], ['body', 'attachments', 0, 'uri']],
      [[{ uri: 'DATA:text/plain,hi', media_type: 'text/plain' }], ['body', 'attachments', 0, 'uri']],
      [[{ uri: 'not a uri', media_type: 'text/plain' }], ['body', 'attachments', 0, 'uri']],
      [[{ uri: 'https://x.example/a', media_type: 'text' }], ['body', 'attachments', 0, 'media_type']],
      [[{ uri: 'https://x.example/a', media_type: 'Text/Plain' }], ['body', 'attachments', 0, 'media_type']],
      [[{ uri: 'https://x.example/a', media_type: 'text/plain', size_bytes: -1 }], ['body', 'attachments', 0, 'size_bytes']],
      [[{ uri: 'https://x.example/a', media_type: 'text/plain', extra: 1 }], ['body', 'attachments', 0]],
      [[{ media_type: 'text/plain' }], ['body', 'attachments', 0, 'uri']],
      [Array.from({ length: 21 }, () => ({ uri: 'https://x.example/a', media_type: 'text/plain' })), ['body', 'attachments']],
      ['s3://x/y', ['body', 'attachments']],
    ];
    for (const [attachments, loc] of cases) {
      const res = await post(attachments);
      expect(res.status, JSON.stringify(attachments).slice(0, 80)).toBe(422);
      expect(res.json.errors[0].loc).toEqual(loc);
    }
    expect((await call(path(`/threads/${thread.id}/messages`), { token: t() })).json.messages).toEqual([]);
    // The service refuses the same on its own (a gRPC caller gets INVALID_ARGUMENT naming the field).
    const refused = await platform.ctx.clients.threads
      .postMessage({
        organizationId: org,
        threadId: thread.id,
        role: 1,
        content: 'x',
        attachments: [{ uri: 'file:///etc/passwd', mediaType: 'text/plain', title: '' }],
      })
      .then(
        () => undefined,
        (err: Error) => err.message,
      );
    expect(refused).toContain('attachments[0].uri');
  });

  it("keeps a thread's messages and memories to its organization", async () => {
    const theirs = `/organizations/${other.organizationId}/threads/${opsThreadId}`;
    expect((await call(path(`/threads/${opsThreadId}/memories`), { token: other.access_token })).status).toBe(403);
    expect((await call(`${theirs}/memories`, { token: other.access_token })).status).toBe(404);
    expect((await call(`${theirs}/messages`, { token: other.access_token })).status).toBe(404);
    expect((await call(path('/threads/not-a-thread/memories'), { token: t() })).status).toBe(422);
    expect((await call(path(`/threads/${opsThreadId}/memories?page_size=0`), { token: t() })).status).toBe(422);
    const page = await call(path(`/threads/${opsThreadId}/memories?page_size=1`), { token: t() });
    expect(page.json).toMatchObject({ memories: [{ key: 'incidents/checkout-deploy-42', version: 1 }], next_page_token: null });
    // This organization's runs never see the other's server.
    expect(model.requests.every((r) => !offered(r).some((name) => name.startsWith('ops-theirs')))).toBe(true);
  });
});
