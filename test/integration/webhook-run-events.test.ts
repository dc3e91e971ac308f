// Run and thread events as webhooks: an endpoint subscribed to `run.*` and `thread.*` receives,
// signed per Standard Webhooks (checked with the `standardwebhooks` package), the life of a run
// created, claimed and completed through the REST API (queued, started, succeeded), of one that is
// cancelled, and of ones that pass their timeout (the platform's clock moved past it: one ended
// by its holder's next call, one queued that nobody touches, ended by the sweep); each event
// carries the run as it stood after its change, and is counted against the plan's monthly webhook
// events. The catalogue lists each type with its JSON Schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.ts';

let offset = 0;
let platform: TestPlatform;
let api: string;
let org: string;
let token: string;
let key: string;
let receiver: WebhookReceiver;
const call = restClient(() => api);
const path = (p: string) => `/organizations/${org}${p}`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }, { now: () => Date.now() + offset });
  api = platform.ctx.config.publicUrls.api;
  const owner = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  token = owner.access_token;
  key = (await call(path('/api-keys'), { token, body: { name: 'oncall-bot', scopes: ['write'] } })).json.secret;
  receiver = await startWebhookReceiver();
  const r = await call(path('/webhook-endpoints'), { token, body: { url: receiver.url, event_types: ['run.*', 'thread.*'] } });
  expect(r.status, r.text).toBe(201);
  receiver.secrets.push(r.json.secret);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await platform?.stop();
});

/** The verified events about one run (or thread), in the order they happened. */
async function eventsOf(id: string, count: number): Promise<ReceivedWebhook['verified'][]> {
  const mine = (r: ReceivedWebhook) => r.verified?.data.id === id;
  const got = await receiver.waitFor(count, mine);
  return got.map((r) => r.verified).sort((a, b) => Date.parse(a!.timestamp) - Date.parse(b!.timestamp) || 0);
}

async function externalRun(body: Json = {}): Promise<{ thread: Json; run: Json }> {
  const thread = (await call(path('/threads'), { token, body: { title: 'Disk', message: 'db-1 disk at 95%' } })).json;
  const run = await call(path(`/threads/${thread.id}/runs`), { token, body: { executor: 'external', ...body } });
  expect(run.status, run.text).toBe(201);
  return { thread, run: run.json };
}

describe('run events', () => {
  it('lists the run and thread types in the catalogue, each with a JSON Schema', async () => {
    const r = await call(path('/webhook-event-types?page_size=100'), { token });
    const types = r.json.event_types.map((t: Json) => t.type);
    for (const t of [
      'run.queued',
      'run.started',
      'run.succeeded',
      'run.failed',
      'run.cancelled',
      'run.timed_out',
      'thread.created',
      'thread.resolved',
    ])
      expect(types).toContain(t);
    const started = r.json.event_types.find((t: Json) => t.type === 'run.started');
    expect(started.schema.properties.status.enum).toContain('running');
    expect(started.schema.required).toEqual(expect.arrayContaining(['id', 'thread_id', 'attempt', 'usage']));
  });

  it('delivers queued, started and succeeded, signed, for a run created, claimed and completed through the API', async () => {
    const { thread, run } = await externalRun();
    const claimed = await call(path('/runs/claim'), { apiKey: key, body: { agent_id: 'oncall-bot@host-7', lease_seconds: 30 } });
    expect(claimed.json.run.id).toBe(run.id);
    const lease = claimed.json.lease_id;
    await call(path(`/runs/${run.id}/steps`), {
      apiKey: key,
      body: { lease_id: lease, kind: 'tool_call', name: 'ssh/df', ok: true, input_tokens: 3 },
    });
    const done = await call(path(`/runs/${run.id}/complete`), {
      apiKey: key,
      body: { lease_id: lease, status: 'succeeded', output: 'Rotated the WAL archive.' },
    });
    expect(done.status, done.text).toBe(200);
    const events = await eventsOf(run.id, 3);
    expect(events.map((e) => e!.type)).toEqual(['run.queued', 'run.started', 'run.succeeded']);
    expect(events[0]!.data).toMatchObject({
      id: run.id,
      thread_id: thread.id,
      status: 'queued',
      executor: 'external',
      attempt: 0,
      started_at: null,
    });
    expect(events[1]!.data).toMatchObject({ status: 'running', attempt: 1, agent_id: 'oncall-bot@host-7' });
    expect(events[2]!.data).toMatchObject({
      status: 'succeeded',
      output: 'Rotated the WAL archive.',
      step_count: 1,
      usage: { input_tokens: 3, tool_calls: 1 },
      finished_at: expect.any(String),
    });
    const [opened] = await eventsOf(thread.id, 1);
    expect(opened).toMatchObject({ type: 'thread.created', data: { title: 'Disk', status: 'open' } });
  });

  it('delivers run.cancelled for a run cancelled while queued, and thread.resolved once', async () => {
    const { thread, run } = await externalRun();
    const cancelled = await call(path(`/runs/${run.id}/cancel`), { token, body: { reason: 'fixed by hand' } });
    expect(cancelled.status, cancelled.text).toBe(200);
    const events = await eventsOf(run.id, 2);
    expect(events.map((e) => e!.type)).toEqual(['run.queued', 'run.cancelled']);
    expect(events[1]!.data).toMatchObject({ status: 'cancelled', error: 'cancelled: fixed by hand' });
    const resolve = (title?: string) =>
      call(path(`/threads/${thread.id}`), { token, method: 'PATCH', body: title ? { title } : { status: 'resolved' } });
    expect((await resolve()).status).toBe(200);
    expect((await resolve('Disk, solved')).status).toBe(200);
    const resolved = await eventsOf(thread.id, 2);
    expect(resolved.map((e) => e!.type)).toEqual(['thread.created', 'thread.resolved']);
    expect(resolved[1]!.data).toMatchObject({ status: 'resolved' });
  });

  it('delivers run.timed_out for a run whose timeout passed before an executor finished it', async () => {
    const { run } = await externalRun({ timeout_seconds: 5 });
    const claimed = await call(path('/runs/claim'), { apiKey: key, body: { agent_id: 'slow-bot', lease_seconds: 60 } });
    expect(claimed.json.run.id).toBe(run.id);
    offset += 6_000;
    const late = await call(path(`/runs/${run.id}/heartbeat`), { apiKey: key, body: { lease_id: claimed.json.lease_id } });
    expect(late.status).toBe(409);
    const events = await eventsOf(run.id, 3);
    expect(events.map((e) => e!.type)).toEqual(['run.queued', 'run.started', 'run.timed_out']);
    expect(events[2]!.data).toMatchObject({ status: 'timed_out', error: 'timed out after 5 s', attempt: 1 });
    expect(receiver.received.filter((r) => r.verified?.data.id === run.id).every((r) => r.verifiedWith === 0)).toBe(true);
  });

  it('times out a queued run nobody claims, once its timeout passed: run.timed_out without any call', async () => {
    const { thread, run } = await externalRun({ timeout_seconds: 5 });
    offset += 6_000;
    const events = await eventsOf(run.id, 2);
    expect(events.map((e) => e!.type)).toEqual(['run.queued', 'run.timed_out']);
    expect(events[1]!.data).toMatchObject({ status: 'timed_out', attempt: 0, started_at: null });
    expect((await call(path(`/runs/${run.id}`), { token })).json.status).toBe('timed_out');
    await eventsOf(thread.id, 1);
  });

  it('counts run events against the plan’s monthly webhook events', async () => {
    // Four runs (3 + 2 + 3 + 2 events) on four threads (created; one resolved): 15 events sent.
    const received = await receiver.waitFor(15, (r) => r.verified !== undefined);
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(15);
    const usage = await call(path('/webhook-usage'), { token });
    expect(usage.status, usage.text).toBe(200);
    expect(usage.json).toMatchObject({ published: 15, dropped: 0 });
  });
});
