// Investigations over the real REST API: threads opened, written to, renamed under If-Match and
// resolved; runs started on them and worked by the platform's LLM runner against a scripted model
// speaking the chat-completions wire protocol over HTTP, recalling from the organization's Brain
// as a tool; cancelled; refused for other organizations; recorded in the audit log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { problemType } from '../../edge/api/problems.ts';
import { startChatServer, type ChatRequest, type ChatReply, type ChatServer } from '../support/chat-server.ts';
import { joinAs, userIdOf, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';
import { until } from '../support/until.ts';

let platform: TestPlatform;
let model: ChatServer;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
let viewer: TestMember;
const call = restClient(() => api);
const path = (p: string) => `/organizations/${org}${p}`;

/** The model: asks the Brain first, then concludes from what it recalled; scripted failures by keyword. */
function script(req: ChatRequest): ChatReply {
  const firstUser = req.messages.find((m) => m.role === 'user')?.content ?? '';
  if (firstUser.includes('[hang]')) return 'hang';
  if (firstUser.includes('[refuse]')) return { status: 400, body: '{"error":{"message":"bad request"}}' };
  const tool = req.messages.find((m) => m.role === 'tool');
  if (!tool) return { toolCalls: [{ id: 'call_1', name: 'brain_recall', arguments: { task: firstUser } }] };
  return { content: `Conclusion from the Brain:\n${tool.content}` };
}

beforeAll(async () => {
  model = await startChatServer(script);
  platform = await startOAuthTestPlatform({
    LLM_URL: model.url,
    LLM_API_KEY: 'sk-test-0123456789',
    LLM_MODEL: 'scripted-1',
    RUNNER_POLL_MS: '50',
    RUNNER_LEASE_SECONDS: '5',
  });
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  viewer = await joinAs(platform, org, 'viewer');
  await platform.ctx.clients.brain.putMemory({
    organizationId: org,
    namespace: Namespace.KNOWLEDGE,
    key: 'runbooks/checkout-latency',
    title: 'Checkout latency after deploys',
    content: 'When checkout latency rises after a deploy, the payment client timeout was lowered: roll back the payment client config.',
  });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
  await model?.close();
});

describe('threads', () => {
  it('opens a thread with a first message, lists, renames under If-Match and resolves it', async () => {
    const t = owner.access_token;
    const created = await call(path('/threads'), { token: t, body: { title: 'Checkout slow', message: 'Why is checkout slow?' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ title: 'Checkout slow', status: 'open', message_count: 1, created_by: userIdOf(owner) });
    const id = created.json.id;
    const etag = created.headers.get('etag')!;
    const listed = await call(path('/threads?status=open'), { token: viewer.access_token });
    expect(listed.json.threads.map((x: Json) => x.id)).toContain(id);
    const renamed = await call(path(`/threads/${id}`), {
      token: t,
      method: 'PATCH',
      body: { title: 'Checkout p99 > 2 s' },
      headers: { 'if-match': etag },
    });
    expect(renamed.status).toBe(200);
    const stale = await call(path(`/threads/${id}`), {
      token: t,
      method: 'PATCH',
      body: { status: 'resolved' },
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(412);
    expect(stale.json.type).toBe(problemType(412, 'etag-mismatch'));
    const resolved = await call(path(`/threads/${id}`), { token: t, method: 'PATCH', body: { status: 'resolved' } });
    expect(resolved.json).toMatchObject({ status: 'resolved', title: 'Checkout p99 > 2 s' });
    expect((await call(path('/threads?status=open'), { token: t })).json.threads.map((x: Json) => x.id)).not.toContain(id);
  });

  it('pages messages oldest first without repeats', async () => {
    const t = owner.access_token;
    const id = (await call(path('/threads'), { token: t, body: { title: 'Paging' } })).json.id;
    for (let i = 0; i < 5; i += 1) {
      expect((await call(path(`/threads/${id}/messages`), { token: t, body: { content: `m${i}` } })).status).toBe(201);
    }
    const first = await call(path(`/threads/${id}/messages?page_size=3`), { token: t });
    const second = await call(path(`/threads/${id}/messages?page_size=3&page_token=${first.json.next_page_token}`), { token: t });
    expect([...first.json.messages, ...second.json.messages].map((m: Json) => m.content)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect(second.json.next_page_token).toBeNull();
    const foreign = await call(path(`/threads/${id}/messages?page_token=${first.json.next_page_token}`), { token: t, method: 'GET' });
    expect(foreign.status).toBe(200);
    const wrongList = await call(path(`/threads?page_token=${first.json.next_page_token}`), { token: t });
    expect(wrongList.status).toBe(422);
  });

  it('answers bad input with its problem, never a 500', async () => {
    const t = owner.access_token;
    const empty = await call(path('/threads'), { token: t, body: { title: '  ' } });
    expect(empty.status).toBe(422);
    expect(empty.json.errors[0].loc).toEqual(['body', 'title']);
    expect((await call(path('/threads'), { token: t, body: { title: 'x', extra: 1 } })).status).toBe(422);
    expect((await call(path('/threads/not-a-thread'), { token: t })).status).toBe(422);
    expect((await call(path('/threads/thr_nothing'), { token: t })).status).toBe(404);
    expect((await call(path('/threads?status=closed'), { token: t })).status).toBe(422);
    const id = (await call(path('/threads'), { token: t, body: { title: 'x' } })).json.id;
    expect((await call(path(`/threads/${id}/runs`), { token: t, body: { timeout_seconds: 0 } })).status).toBe(422);
    expect((await call(path(`/threads/${id}/messages`), { token: t, body: { content: '' } })).status).toBe(422);
  });

  it('keeps organizations apart: another organization gets 403 on the path, 404 for a foreign id in its own', async () => {
    const id = (await call(path('/threads'), { token: owner.access_token, body: { title: 'Private' } })).json.id;
    expect((await call(path(`/threads/${id}`), { token: other.access_token })).status).toBe(403);
    const theirs = `/organizations/${other.organizationId}/threads/${id}`;
    expect((await call(theirs, { token: other.access_token })).status).toBe(404);
    expect((await call(`${theirs}/runs`, { token: other.access_token, body: {} })).status).toBe(404);
    const listed = await call(`/organizations/${other.organizationId}/threads`, { token: other.access_token });
    expect(listed.json.threads.map((x: Json) => x.id)).not.toContain(id);
  });

  it('replays a create with the same Idempotency-Key, and a viewer may not create', async () => {
    const headers = { 'idempotency-key': 'thread-create-0001' };
    const first = await call(path('/threads'), { token: owner.access_token, body: { title: 'Once' }, headers });
    const again = await call(path('/threads'), { token: owner.access_token, body: { title: 'Once' }, headers });
    expect(again.json.id).toBe(first.json.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const refused = await call(path('/threads'), { token: viewer.access_token, body: { title: 'No' } });
    expect(refused.status).toBe(403);
  });
});

describe('runs', () => {
  it('works a run through the model, recalling from the Brain, and posts the conclusion to the thread', async () => {
    const t = owner.access_token;
    const thread = (
      await call(path('/threads'), { token: t, body: { title: 'Latency', message: 'Checkout latency rose after the deploy' } })
    ).json;
    const created = await call(path(`/threads/${thread.id}/runs`), {
      token: t,
      body: { timeout_seconds: 600 },
      headers: { 'idempotency-key': 'run-0001' },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ status: 'queued', thread_id: thread.id, attempt: 0 });
    const run = await until(
      async () => (await call(path(`/runs/${created.json.id}`), { token: viewer.access_token })).json,
      (r) => r.status === 'succeeded',
    );
    expect(run).toMatchObject({
      attempt: 1,
      step_count: 3,
      model: 'scripted-1',
      usage: { input_tokens: 200, output_tokens: 40, tool_calls: 1 },
    });
    expect(run.agent_id).toMatch(/^llm:/);
    expect(run.output).toContain('roll back the payment client config');
    const steps = (await call(path(`/runs/${run.id}/steps`), { token: t })).json.steps as Json[];
    expect(steps.map((s) => s.kind)).toEqual(['model_call', 'brain_read', 'model_call']);
    expect(steps[1].result.memories).toEqual([
      { namespace: 'knowledge', key: 'runbooks/checkout-latency', title: 'Checkout latency after deploys' },
    ]);
    const messages = (await call(path(`/threads/${thread.id}/messages`), { token: t })).json.messages as Json[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'agent']);
    expect(messages[1]).toMatchObject({ run_id: run.id, content: run.output });
    const asked = model.requests.find((r) => r.messages.some((m) => m.content === 'Checkout latency rose after the deploy'))!;
    expect(asked.authorization).toBe('Bearer sk-test-0123456789');
    expect(asked.tools?.map((x) => x.function.name)).toEqual(['brain_recall', 'brain_remember']);
    const listed = await call(path(`/runs?thread_id=${thread.id}&status=succeeded`), { token: t });
    expect(listed.json.runs.map((r: Json) => r.id)).toEqual([run.id]);
  });

  it('fails a run the model refuses, with the reason', async () => {
    const t = owner.access_token;
    const thread = (await call(path('/threads'), { token: t, body: { title: 'Refused', message: '[refuse] anything' } })).json;
    const created = (await call(path(`/threads/${thread.id}/runs`), { token: t, body: {} })).json;
    const run = await until(
      async () => (await call(path(`/runs/${created.id}`), { token: t })).json,
      (r) => r.status === 'failed',
    );
    expect(run.error).toContain('the model answered 400');
  });

  it('cancels a running run: the runner lets go, and a finished run cannot be cancelled again', async () => {
    const t = owner.access_token;
    const thread = (await call(path('/threads'), { token: t, body: { title: 'Stuck', message: '[hang] think forever' } })).json;
    const created = (await call(path(`/threads/${thread.id}/runs`), { token: t, body: {} })).json;
    await until(
      async () => (await call(path(`/runs/${created.id}`), { token: t })).json,
      (r) => r.status === 'running',
    );
    const cancelled = await call(path(`/runs/${created.id}/cancel`), { token: t, body: { reason: 'not needed' } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ status: 'cancelled', error: 'cancelled: not needed' });
    const again = await call(path(`/runs/${created.id}/cancel`), { token: t, body: {} });
    expect(again.status).toBe(409);
    expect(again.json.type).toBe(problemType(409, 'run-finished'));
    expect((await call(path(`/runs/${created.id}/cancel`), { token: viewer.access_token, body: {} })).status).toBe(403);
  });

  it('retries a finished run as a new one, and refuses to retry one still active', async () => {
    const t = owner.access_token;
    const thread = (await call(path('/threads'), { token: t, body: { title: 'Retry', message: '[refuse] first try' } })).json;
    const first = (await call(path(`/threads/${thread.id}/runs`), { token: t, body: { instructions: 'Be brief.', timeout_seconds: 120 } }))
      .json;
    await until(
      async () => (await call(path(`/runs/${first.id}`), { token: t })).json,
      (r) => r.status === 'failed',
    );
    const retried = await call(path(`/runs/${first.id}/retry`), { token: t, method: 'POST', headers: { 'idempotency-key': 'retry-0001' } });
    expect(retried.status).toBe(201);
    expect(retried.json).toMatchObject({
      retry_of: first.id,
      thread_id: thread.id,
      instructions: 'Be brief.',
      timeout_seconds: 120,
      executor: 'llm',
    });
    expect(retried.json.id).not.toBe(first.id);
    const replay = await call(path(`/runs/${first.id}/retry`), { token: t, method: 'POST', headers: { 'idempotency-key': 'retry-0001' } });
    expect(replay.json.id).toBe(retried.json.id);
    const external = (await call(path(`/threads/${thread.id}/runs`), { token: t, body: { executor: 'external' } })).json;
    const active = await call(path(`/runs/${external.id}/retry`), { token: t, method: 'POST' });
    expect(active.status).toBe(409);
    expect(active.json.type).toBe(problemType(409, 'run-active'));
    expect((await call(path(`/runs/${external.id}/cancel`), { token: t, body: {} })).status).toBe(200);
  });

  it('lets an external agent claim, report steps and complete a run, which the LLM runner never takes', async () => {
    const t = owner.access_token;
    const key = (await call(path('/api-keys'), { token: t, body: { name: 'oncall-bot', scopes: ['write'] } })).json.secret;
    const thread = (await call(path('/threads'), { token: t, body: { title: 'Disk', message: 'db-1 disk at 95%' } })).json;
    const created = (await call(path(`/threads/${thread.id}/runs`), { token: t, body: { executor: 'external' } })).json;
    expect(created).toMatchObject({ executor: 'external', status: 'queued' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await call(path(`/runs/${created.id}`), { token: t })).json.status).toBe('queued');
    const otherOrg = await call(`/organizations/${other.organizationId}/runs/claim`, {
      token: other.access_token,
      body: { agent_id: 'spy' },
    });
    expect(otherOrg.status).toBe(204);
    const claimed = await call(path('/runs/claim'), { apiKey: key, body: { agent_id: 'oncall-bot@host-7', lease_seconds: 30 } });
    expect(claimed.status).toBe(200);
    expect(claimed.json.run).toMatchObject({ id: created.id, status: 'running', attempt: 1, agent_id: 'oncall-bot@host-7' });
    expect(claimed.json.messages.map((m: Json) => m.content)).toEqual(['db-1 disk at 95%']);
    expect((await call(path('/runs/claim'), { apiKey: key, body: { agent_id: 'second-bot' } })).status).toBe(204);
    const lease = claimed.json.lease_id;
    const step = await call(path(`/runs/${created.id}/steps`), {
      apiKey: key,
      body: {
        lease_id: lease,
        kind: 'tool_call',
        name: 'ssh/df',
        ok: true,
        arguments: { host: 'db-1' },
        result: { used: '95%' },
        input_tokens: 3,
      },
    });
    expect(step.status).toBe(201);
    expect(step.json).toMatchObject({ index: 0, kind: 'tool_call', name: 'ssh/df', attempt: 1, result: { used: '95%' } });
    expect((await call(path(`/runs/${created.id}/heartbeat`), { apiKey: key, body: { lease_id: lease } })).status).toBe(200);
    const wrongLease = await call(path(`/runs/${created.id}/heartbeat`), {
      apiKey: key,
      body: { lease_id: '3b0f2c4e-8a1d-4f6b-9c2e-7d5a1b3c9e0f' },
    });
    expect(wrongLease.status).toBe(409);
    expect(wrongLease.json.type).toBe(problemType(409, 'lease-lost'));
    const done = await call(path(`/runs/${created.id}/complete`), {
      apiKey: key,
      body: { lease_id: lease, status: 'succeeded', output: 'Rotated the WAL archive.' },
    });
    expect(done.json).toMatchObject({
      status: 'succeeded',
      step_count: 1,
      output: 'Rotated the WAL archive.',
      usage: { input_tokens: 3, tool_calls: 1 },
    });
    const late = await call(path(`/runs/${created.id}/steps`), {
      apiKey: key,
      body: { lease_id: lease, kind: 'tool_call', name: 'x', ok: true },
    });
    expect(late.status).toBe(409);
    const messages = (await call(path(`/threads/${thread.id}/messages`), { token: t })).json.messages as Json[];
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'db-1 disk at 95%'],
      ['agent', 'Rotated the WAL archive.'],
    ]);
    const bad = await call(path(`/runs/${created.id}/steps`), {
      apiKey: key,
      body: { lease_id: 'nope', kind: 'dance', name: '', ok: 'yes' },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.errors.map((e: Json) => e.loc.at(-1)).sort()).toEqual(['kind', 'lease_id', 'name', 'ok']);
    const readKey = (await call(path('/api-keys'), { token: t, body: { name: 'reader' } })).json.secret;
    expect((await call(path('/runs/claim'), { apiKey: readKey, body: { agent_id: 'reader' } })).status).toBe(403);
  });

  it('records the changes in the audit log', async () => {
    const events = async (query: string) =>
      (await call(path(`/audit-events?${query}`), { token: owner.access_token })).json.events as Json[];
    for (const action of ['createThread', 'updateThread', 'postThreadMessage', 'createRun', 'cancelRun']) {
      expect((await events(`action=${action}&outcome=success`)).length).toBeGreaterThan(0);
    }
    const denied = await events('action=createThread&outcome=denied');
    expect(denied[0]).toMatchObject({ actor: { id: viewer.userId }, status: 403 });
  });
});
