// Playbooks over the real REST API: the lifecycle (create, versions under If-Match, publish, roll
// back, import and export as JSON and YAML), documents refused with every problem at its path, and
// runs bound to the published version, worked by the built-in runner with no model: MCP tool calls
// through the gateway to a real MCP server (an SDK backend) registered for the organization, under
// its tool policy, conditions on the results, and what it found written to the Brain.
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { problemType } from '../../edge/api/problems.ts';
import { startMcpBackend, type McpBackend } from '../support/gateway-backends.ts';
import { joinAs, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { isRunFinished, restClient, type Json } from '../support/rest.ts';
import { until } from '../support/until.ts';

let platform: TestPlatform;
let backend: McpBackend;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
let viewer: TestMember;
const call = restClient(() => api);
const path = (p: string) => `/organizations/${org}${p}`;

const doc = (overrides: Json = {}): Json => ({
  name: 'Checkout latency',
  instructions: 'Look at what changed, then record it.',
  inputs: [{ name: 'service', type: 'string', required: true }],
  tools: ['tools/echo'],
  namespaces: ['episodes', 'knowledge'],
  steps: [
    { id: 'echo', kind: 'tool_call', server: 'tools', tool: 'echo', arguments: { text: 'deploy 42 of {{ inputs.service }}' } },
    { id: 'known', kind: 'brain_read', namespace: 'knowledge', query: '{{ inputs.service }} latency', limit: 5 },
    {
      id: 'record',
      kind: 'brain_write',
      when: { path: 'steps.echo.result.content[0].text', contains: 'deploy 42' },
      namespace: 'episodes',
      key: 'playbook/{{ inputs.service }}',
      content: 'Seen: {{ steps.echo.result.content[0].text }}; known: {{ steps.known.result.memories[0].key }}',
    },
    { id: 'never', kind: 'brain_write', when: { path: 'steps.echo.ok', equals: false }, namespace: 'episodes', key: 'never', content: 'x' },
  ],
  output: 'Echoed: {{ steps.echo.result.content[0].text }}',
  ...overrides,
});

const readRun = (id: string) => async () => (await call(path(`/runs/${id}`), { token: owner.access_token })).json;

beforeAll(async () => {
  platform = await startOAuthTestPlatform({
    GATEWAY_REGISTRY_POLL_MS: '100',
    GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true',
    RUNNER_POLL_MS: '50',
    RUNNER_LEASE_SECONDS: '5',
  });
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  viewer = await joinAs(platform, org, 'viewer');
  backend = await startMcpBackend({ mode: 'json', name: 'tools' });
  const server = await call(path('/mcp-servers'), { token: owner.access_token, body: { name: 'tools', url: backend.url } });
  expect(server.status).toBe(201);
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
  await backend?.close();
});

describe('the playbook lifecycle', () => {
  it('creates, versions under If-Match, publishes, rolls back, lists and reads versions', async () => {
    const t = owner.access_token;
    const created = await call(path('/playbooks'), { token: t, body: { document: doc({ name: 'Lifecycle' }) } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'Lifecycle', latest_version: 1, published_version: null, has_steps: true });
    const id = created.json.id;
    const etag = created.headers.get('etag')!;
    const v2 = await call(path(`/playbooks/${id}`), {
      token: t,
      method: 'PUT',
      headers: { 'if-match': etag },
      body: { document: doc({ name: 'Lifecycle', description: 'second' }), publish: true },
    });
    expect(v2.status).toBe(200);
    expect(v2.json).toMatchObject({ latest_version: 2, published_version: 2, description: 'second' });
    const stale = await call(path(`/playbooks/${id}`), {
      token: t,
      method: 'PUT',
      headers: { 'if-match': etag },
      body: { document: doc({ name: 'Lifecycle' }) },
    });
    expect(stale.status).toBe(412);
    const rolledBack = await call(path(`/playbooks/${id}/publish`), { token: t, body: { version: 1 } });
    expect(rolledBack.json).toMatchObject({ latest_version: 2, published_version: 1 });
    const tooFar = await call(path(`/playbooks/${id}/publish`), { token: t, body: { version: 3 } });
    expect(tooFar.status).toBe(422);
    const versions = await call(path(`/playbooks/${id}/versions`), { token: viewer.access_token });
    expect(versions.json.versions.map((v: Json) => v.version)).toEqual([2, 1]);
    const v1 = await call(path(`/playbooks/${id}/versions/1`), { token: viewer.access_token });
    expect(v1.json.document.description).toBeUndefined();
    const list = await call(path('/playbooks?page_size=1'), { token: viewer.access_token });
    expect(list.json.playbooks).toHaveLength(1);
    const duplicate = await call(path('/playbooks'), { token: t, body: { document: doc({ name: 'lifecycle' }) } });
    expect(duplicate.status).toBe(409);
  });

  it('answers every problem of a document with its path, on validate and on create', async () => {
    const bad = doc({
      output: undefined,
      steps: [
        { id: 'a', kind: 'tool_call', server: 'tools', tool: 'delete_all' },
        { id: 'a', kind: 'brain_read', namespace: 'knowledge', query: '{{ steps.later.result }}', extra: 1 },
        { id: 'b', kind: 'brain_write', namespace: 'episodes', key: 'k', content: 'c', when: { path: 'inputs.nope', equals: 1 } },
      ],
    });
    const checked = await call(path('/playbooks/validate'), { token: viewer.access_token, body: bad });
    expect(checked.status).toBe(200);
    expect(checked.json.valid).toBe(false);
    expect(checked.json.problems).toEqual([{ path: '/steps/1/extra', message: 'is not a field of this kind of step or object' }]);
    const semantic = { ...bad, steps: bad.steps.map((s: Json) => (s.extra ? { ...s, extra: undefined } : s)) };
    const problems = (await call(path('/playbooks/validate'), { token: t(), body: JSON.parse(JSON.stringify(semantic)) })).json.problems;
    expect(problems.map((p: Json) => p.path)).toEqual(['/steps/0/tool', '/steps/1/id', '/steps/1/query', '/steps/2/when/path']);
    const refused = await call(path('/playbooks'), { token: t(), body: { document: JSON.parse(JSON.stringify(semantic)) } });
    expect(refused.status).toBe(422);
    expect(refused.json.type).toBe(problemType(422));
    expect(refused.json.errors.map((e: Json) => e.loc)).toEqual([
      ['body', 'document', 'steps', 0, 'tool'],
      ['body', 'document', 'steps', 1, 'id'],
      ['body', 'document', 'steps', 1, 'query'],
      ['body', 'document', 'steps', 2, 'when', 'path'],
    ]);
    const yaml = await call(path('/playbooks/validate'), { token: t(), rawBody: 'name: [unclosed', contentType: 'application/yaml' });
    expect(yaml.status).toBe(422);
    const schema = await fetch(`${api}/schemas/playbook.json`);
    expect(schema.status).toBe(200);
    expect((await schema.json()).$id).toBe('https://mindgate.dev/schemas/playbook.json');
  });

  it('imports YAML as a new playbook then as its next version, and exports both formats', async () => {
    const yamlText = `name: Imported\ninstructions: |\n  Do the thing.\ntools: [tools/echo]\nsteps:\n  - id: say\n    kind: tool_call\n    server: tools\n    tool: echo\n    arguments: {text: hi}\n`;
    const first = await call(path('/playbooks/import?publish=true'), { token: t(), rawBody: yamlText, contentType: 'application/yaml' });
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ name: 'Imported', latest_version: 1, published_version: 1 });
    const again = await call(path('/playbooks/import'), {
      token: t(),
      rawBody: yamlText.replace('text: hi', 'text: hello'),
      contentType: 'application/yaml',
    });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ id: first.json.id, latest_version: 2, published_version: 1 });
    const json = await call(path(`/playbooks/${first.json.id}/export`), { token: viewer.access_token });
    expect(json.json.steps[0].arguments.text).toBe('hi');
    const yaml = await call(path(`/playbooks/${first.json.id}/export?version=2&format=yaml`), { token: viewer.access_token });
    expect(yaml.headers.get('content-type')).toContain('application/yaml');
    expect(parseYaml(yaml.text).steps[0].arguments.text).toBe('hello');
  });

  it('keeps playbooks to their organization and their roles', async () => {
    const created = await call(path('/playbooks'), { token: t(), body: { document: doc({ name: 'Tenant' }) } });
    const id = created.json.id;
    expect((await call(`/organizations/${other.organizationId}/playbooks/${id}`, { token: other.access_token })).status).toBe(404);
    expect((await call(path(`/playbooks/${id}`), { token: other.access_token })).status).toBe(403);
    expect((await call(path('/playbooks'), { token: viewer.access_token, body: { document: doc({ name: 'Viewer' }) } })).status).toBe(403);
    expect((await call(path(`/playbooks/${id}/runs`), { token: viewer.access_token, body: { inputs: { service: 'x' } } })).status).toBe(
      403,
    );
  });
});

function t() {
  return owner.access_token;
}

describe('running a playbook', () => {
  it('refuses a run before a version is published, and inputs that do not fit', async () => {
    const created = await call(path('/playbooks'), { token: t(), body: { document: doc({ name: 'Unpublished' }) } });
    const id = created.json.id;
    const early = await call(path(`/playbooks/${id}/runs`), { token: t(), body: { inputs: { service: 'checkout' } } });
    expect(early.status).toBe(409);
    expect(early.json.type).toBe(problemType(409, 'playbook-unpublished'));
    await call(path(`/playbooks/${id}/publish`), { token: t(), body: { version: 1 } });
    const missing = await call(path(`/playbooks/${id}/runs`), { token: t(), body: { inputs: {} } });
    expect(missing.status).toBe(422);
    expect(missing.json.errors[0].loc).toEqual(['body', 'inputs', 'service']);
    const wrong = await call(path(`/playbooks/${id}/runs`), { token: t(), body: { inputs: { service: 3 } } });
    expect(wrong.json.errors[0]).toMatchObject({ loc: ['body', 'inputs', 'service'], msg: 'must be of type string' });
  });

  it('works the steps with no model: a tool through the gateway, a Brain search, a conditional Brain write', async () => {
    const created = await call(path('/playbooks'), { token: t(), body: { document: doc({ name: 'Runner' }), publish: true } });
    const started = await call(path(`/playbooks/${created.json.id}/runs`), { token: t(), body: { inputs: { service: 'checkout' } } });
    expect(started.status).toBe(201);
    expect(started.json).toMatchObject({
      executor: 'playbook',
      playbook_id: created.json.id,
      playbook_version: 1,
      inputs: { service: 'checkout' },
    });
    const run = await until(readRun(started.json.id), isRunFinished);
    expect(run).toMatchObject({ status: 'succeeded', output: 'Echoed: deploy 42 of checkout', step_count: 4 });
    const steps = (await call(path(`/runs/${run.id}/steps`), { token: viewer.access_token })).json.steps;
    expect(steps.map((s: Json) => [s.kind, s.name, s.ok])).toEqual([
      ['tool_call', 'tools/echo', true],
      ['brain_read', 'brain_search', true],
      ['brain_write', 'brain_write', true],
      ['condition', 'never', true],
    ]);
    expect(steps[0].result.content[0].text).toBe('deploy 42 of checkout');
    expect(steps[1].result.memories[0].key).toBe('runbooks/checkout-latency');
    expect(steps[3].result).toEqual({ skipped: true });
    // The tool call went through the gateway as the organization: the backend saw it there.
    expect(backend.seen.some((r) => r.method === 'POST' && r.url === '/mcp')).toBe(true);
    const { memories } = await platform.ctx.clients.brain.getMemories({
      organizationId: org,
      namespace: Namespace.EPISODES,
      keys: ['playbook/checkout'],
    });
    expect(memories[0].content).toBe('Seen: deploy 42 of checkout; known: runbooks/checkout-latency');
    const messages = (await call(path(`/threads/${run.thread_id}/messages`), { token: t() })).json.messages;
    expect(messages.map((m: Json) => m.role)).toEqual(['user', 'agent']);
    expect(messages[0].content).toContain('service: checkout');
  });

  it('fails the run at a tool the gateway refuses (tool policy), and runs a version without steps on the LLM queue', async () => {
    const server = (await call(path('/mcp-servers'), { token: t() })).json.mcp_servers.find((s: Json) => s.name === 'tools');
    await call(path(`/mcp-servers/${server.id}`), { token: t(), method: 'PATCH', body: { tool_policy: { deny: ['echo'] } } });
    try {
      const created = await call(path('/playbooks'), { token: t(), body: { document: doc({ name: 'Denied' }), publish: true } });
      // The registry change reaches the gateway within a poll.
      await new Promise((r) => setTimeout(r, 400));
      const started = await call(path(`/playbooks/${created.json.id}/runs`), { token: t(), body: { inputs: { service: 'checkout' } } });
      const run = await until(readRun(started.json.id), isRunFinished);
      expect(run.status).toBe('failed');
      expect(run.error).toMatch(/^step echo failed: .*not available: the tool policy of server tools does not allow it/);
    } finally {
      await call(path(`/mcp-servers/${server.id}`), { token: t(), method: 'PATCH', body: { tool_policy: { deny: [] } } });
    }
    const plain = await call(path('/playbooks'), {
      token: t(),
      body: { document: { name: 'Plain', instructions: 'Think.' }, publish: true },
    });
    const queued = await call(path(`/playbooks/${plain.json.id}/runs`), { token: t(), body: { executor: 'external' } });
    expect(queued.json).toMatchObject({ executor: 'external', instructions: 'Think.', status: 'queued', playbook_version: 1 });
    // Out of the external queue, which a later test claims from.
    await call(path(`/runs/${queued.json.id}/cancel`), { token: t(), method: 'POST' });
  });
});

/** An open SSE stream: its status, and its events as they arrive. */
async function openEvents(runId: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${api}${path(`/runs/${runId}/events`)}`, { headers: { authorization: `Bearer ${t()}`, ...headers } });
  const reader = res.body?.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = false;
  const events: Json[] = [];
  async function next(): Promise<Json | undefined> {
    for (;;) {
      const cut = buffer.indexOf('\n\n');
      if (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const fields = Object.fromEntries(
          block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
        );
        if (fields.id === undefined) continue;
        const event = { id: Number(fields.id), event: fields.event, data: JSON.parse(fields.data) };
        events.push(event);
        return event;
      }
      if (ended || !reader) return undefined;
      const { value, done } = await reader.read();
      if (done) ended = true;
      else buffer += decoder.decode(value, { stream: true });
    }
  }
  return { status: res.status, next, events, close: () => reader?.cancel() };
}

describe("a run's live events (SSE)", () => {
  it('streams status changes and steps as they happen, and resumes after Last-Event-ID', async () => {
    const plain = await call(path('/playbooks'), {
      token: t(),
      body: { document: { name: 'Live', instructions: 'Watch.' }, publish: true },
    });
    const run = (await call(path(`/playbooks/${plain.json.id}/runs`), { token: t(), body: { executor: 'external' } })).json;
    const live = await openEvents(run.id);
    expect(live.status).toBe(200);
    expect(await live.next()).toMatchObject({ id: 1, event: 'status', data: { status: 'queued' } });
    // The agent works while the stream is open: each change arrives on it.
    const claimed = (await call(path('/runs/claim'), { token: t(), body: { agent_id: 'sse-agent', lease_seconds: 30 } })).json;
    expect(claimed.run.id).toBe(run.id);
    expect(await live.next()).toMatchObject({ id: 2, data: { status: 'running', agent_id: 'sse-agent' } });
    const lease = claimed.lease_id;
    await call(path(`/runs/${run.id}/steps`), { token: t(), body: { lease_id: lease, kind: 'tool_call', name: 'ssh/df', ok: true } });
    expect(await live.next()).toMatchObject({ id: 3, event: 'step', data: { index: 0, name: 'ssh/df' } });
    await call(path(`/runs/${run.id}/steps`), { token: t(), body: { lease_id: lease, kind: 'brain_read', name: 'recall', ok: true } });
    expect(await live.next()).toMatchObject({ id: 4, event: 'step', data: { index: 1 } });
    await call(path(`/runs/${run.id}/complete`), { token: t(), body: { lease_id: lease, status: 'succeeded', output: 'Disk full.' } });
    expect(await live.next()).toMatchObject({ id: 5, data: { status: 'succeeded', run: { output: 'Disk full.', step_count: 2 } } });
    expect(await live.next()).toBeUndefined();

    const resumed = await openEvents(run.id, { 'last-event-id': '3' });
    expect(resumed.status).toBe(200);
    await resumed.next();
    await resumed.next();
    expect(await resumed.next()).toBeUndefined();
    expect(resumed.events.map((e) => e.id)).toEqual([4, 5]);
    expect((await openEvents(run.id, { 'last-event-id': '5' })).status).toBe(204);
    const replay = await openEvents(run.id);
    while (await replay.next());
    expect(replay.events.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
  });

  it('streams a built-in run to its end, and keeps streams to their organization', async () => {
    const created = await call(path('/playbooks'), { token: t(), body: { document: doc({ name: 'Streamed' }), publish: true } });
    const run = (await call(path(`/playbooks/${created.json.id}/runs`), { token: t(), body: { inputs: { service: 'search' } } })).json;
    const stream = await openEvents(run.id);
    while (await stream.next());
    expect(stream.events.map((e) => e.event)).toEqual(['status', 'status', 'step', 'step', 'step', 'step', 'status']);
    expect(stream.events.at(-1)!.data.status).toBe('succeeded');
    const foreign = await fetch(`${api}/organizations/${other.organizationId}/runs/${run.id}/events`, {
      headers: { authorization: `Bearer ${other.access_token}` },
    });
    expect(foreign.status).toBe(404);
  });
});

describe('the audit log', () => {
  it('records the changes of playbooks and the runs started from them, and the refused attempts', async () => {
    const events = async (query: string) =>
      (await call(path(`/audit-events?${query}`), { token: owner.access_token })).json.events as Json[];
    for (const action of ['createPlaybook', 'updatePlaybook', 'publishPlaybook', 'importPlaybook', 'runPlaybook']) {
      expect((await events(`action=${action}&outcome=success`)).length, action).toBeGreaterThan(0);
    }
    const denied = await events('action=createPlaybook&outcome=denied');
    expect(denied[0]).toMatchObject({ actor: { id: viewer.userId }, status: 403 });
  });
});

describe("a run's outcome as feedback to the Brain", () => {
  it('reports the outcome on the memories the run read, once, when the run asks for it', async () => {
    const stats = async () =>
      (
        await platform.ctx.clients.brain.getMemories({
          organizationId: org,
          namespace: Namespace.KNOWLEDGE,
          keys: ['runbooks/checkout-latency'],
        })
      ).memories[0]!.stats!;
    const before = await stats();
    const created = await call(path('/playbooks'), { token: t(), body: { document: doc({ name: 'Feedback' }), publish: true } });
    const quiet = await call(path(`/playbooks/${created.json.id}/runs`), { token: t(), body: { inputs: { service: 'checkout' } } });
    expect((await until(readRun(quiet.json.id), isRunFinished)).step_count).toBe(4);
    expect((await stats()).worked).toBe(before.worked);
    const asked = await call(path(`/playbooks/${created.json.id}/runs`), {
      token: t(),
      body: { inputs: { service: 'checkout' }, brain_feedback: true },
    });
    expect(asked.json.brain_feedback).toBe(true);
    const run = await until(readRun(asked.json.id), isRunFinished);
    expect(run).toMatchObject({ status: 'succeeded', step_count: 5 });
    const steps = (await call(path(`/runs/${run.id}/steps`), { token: t() })).json.steps;
    expect(steps.at(-1)).toMatchObject({
      kind: 'brain_write',
      name: 'brain_feedback',
      ok: true,
      arguments: { outcome: 'worked', memories: ['knowledge/runbooks/checkout-latency'] },
      result: { recorded: 1, missing: [] },
    });
    expect((await stats()).worked).toBe(before.worked + 1);
  });
});
