// Webhook endpoints through the Agents API, and the events they receive: endpoints created (the
// secret shown once), listed, read, changed under If-Match, deleted; bad input answered with 422
// on the field; the event catalogue with JSON Schemas; events of memory writes, contradictions,
// questions, members, invitations and API keys delivered signed per Standard Webhooks (checked
// with the `standardwebhooks` package); a secret rotation with both signatures during the
// overlap; a test event; the delivery log of a receiver outage, retried with growing waits and
// redelivered; tenant isolation of endpoints and deliveries; and malformed input answered with
// RFC 9457 problems.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { EventSchema } from '../../gen/mindgate/events/v1/outbox_pb.js';
import { newEventId } from '../../services/common/events/outbox.ts';
import { obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

let platform: TestPlatform;
let api: string;
let org: string;
let token: string;
let receiver: WebhookReceiver;
const BASE_MS = 200;
const call = restClient(() => api);

beforeAll(async () => {
  platform = await startOAuthTestPlatform({
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_BASE_MS: String(BASE_MS),
    WEBHOOK_MAX_ATTEMPTS: '3',
    WEBHOOK_DISABLE_AFTER_SECONDS: '0',
    WEBHOOK_DISABLE_AFTER_FAILURES: '5',
  });
  api = platform.ctx.config.publicUrls.api;
  const owner = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  token = owner.access_token;
  receiver = await startWebhookReceiver();
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await platform?.stop();
});

async function createEndpoint(body: Json): Promise<{ endpoint: Json; secret: string; etag: string | null }> {
  const r = await call(`/organizations/${org}/webhook-endpoints`, { token, body });
  expect(r.status, r.text).toBe(201);
  return { endpoint: r.json.endpoint, secret: r.json.secret, etag: r.headers.get('etag') };
}

const ofType = (type: string) => (r: { verified?: { type: string } }) => r.verified?.type === type;

describe('webhook endpoints', () => {
  it('creates an endpoint whose secret is shown once, and lists, reads and changes it under If-Match', async () => {
    const { endpoint, secret, etag } = await createEndpoint({ url: receiver.url, event_types: ['member.*'], description: 'ops' });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(endpoint).toMatchObject({
      url: receiver.url,
      event_types: ['member.*'],
      enabled: true,
      disabled_reason: null,
      description: 'ops',
    });
    expect(endpoint.secret_prefix).toBe(secret.slice(0, 10));
    expect(etag).toBe('"1"');
    const path = `/organizations/${org}/webhook-endpoints/${endpoint.id}`;
    const got = await call(path, { token });
    expect(got.status).toBe(200);
    expect(got.text).not.toContain(secret.slice(6));
    const list = await call(`/organizations/${org}/webhook-endpoints?page_size=100`, { token });
    expect(list.json.endpoints.map((e: Json) => e.id)).toContain(endpoint.id);
    const changed = await call(path, { token, method: 'PATCH', body: { description: 'on-call' }, headers: { 'if-match': '"1"' } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).toBe('"2"');
    const stale = await call(path, { token, method: 'PATCH', body: { enabled: false }, headers: { 'if-match': '"1"' } });
    expect(stale.status).toBe(412);
    expect(stale.json.type).toBe('tag:mindgate.dev,2026:problem/etag-mismatch');
    expect((await call(path, { token, method: 'DELETE' })).status).toBe(204);
    expect((await call(path, { token })).status).toBe(404);
  });

  it('answers bad input with 422 on the field', async () => {
    const bad = async (body: Json) => (await call(`/organizations/${org}/webhook-endpoints`, { token, body })).json;
    expect((await bad({ url: 'ftp://example.com/x', event_types: ['*'] })).errors[0]).toMatchObject({ loc: ['body', 'url'] });
    expect((await bad({ url: 'https://user:pw@example.com/', event_types: ['*'] })).errors[0].loc).toEqual(['body', 'url']);
    expect((await bad({ url: receiver.url, event_types: ['memory.exploded'] })).errors[0]).toMatchObject({
      loc: ['body', 'event_types', 0],
      msg: expect.stringContaining('not an event type'),
    });
    expect((await bad({ url: receiver.url, event_types: [] })).errors[0].loc).toEqual(['body', 'event_types']);
    expect((await bad({ url: 'https://does-not-exist.invalid/hook', event_types: ['*'] })).errors[0].msg).toContain('does not resolve');
    const other = await call(`/organizations/${org}/webhook-endpoints/whe_aaaaaaaaaaaaaaaaaaaa`, { token });
    expect(other.status).toBe(404);
    const malformed = await call(`/organizations/${org}/webhook-endpoints/nope`, { token });
    expect(malformed.status).toBe(422);
  });

  it('lists the event catalogue with the JSON Schema of each type', async () => {
    const r = await call(`/organizations/${org}/webhook-event-types?page_size=100`, { token });
    expect(r.status).toBe(200);
    const types = r.json.event_types.map((t: Json) => t.type);
    for (const t of [
      'memory.created',
      'memory.deleted',
      'contradiction.flagged',
      'question.resolved',
      'member.added',
      'invitation.accepted',
      'api_key.revoked',
    ]) {
      expect(types).toContain(t);
    }
    const created = r.json.event_types.find((t: Json) => t.type === 'memory.created');
    expect(created.schema).toMatchObject({ type: 'object', properties: { key: { type: 'string' }, version: { type: 'integer' } } });
    const first = await call(`/organizations/${org}/webhook-event-types?page_size=5`, { token });
    const second = await call(`/organizations/${org}/webhook-event-types?page_size=5&page_token=${first.json.next_page_token}`, { token });
    expect([...first.json.event_types, ...second.json.event_types].map((t: Json) => t.type)).toEqual(types.slice(0, 10));
    expect((await call(`/organizations/${org}/webhook-event-types?page_token=garbage`, { token })).status).toBe(422);
  });
  it('describes every webhook operation in the OpenAPI document, with examples', async () => {
    const doc = (await call('/openapi.json')).json;
    const ops = Object.values(doc.paths as Record<string, Json>).flatMap((item) => Object.values(item).map((op: Json) => op.operationId));
    for (const id of [
      'createWebhookEndpoint',
      'rotateWebhookEndpointSecret',
      'sendWebhookTestEvent',
      'listWebhookDeliveries',
      'redeliverWebhookEndpoint',
      'listWebhookEventTypes',
      'getWebhookUsage',
    ]) {
      expect(ops).toContain(id);
    }
    const create = doc.components.schemas.CreateWebhookEndpoint;
    expect(create.properties.url.example).toBe('https://93.184.215.14/mindgate');
    expect(create.properties.event_types.example).toContain('memory.*');
  });
});

describe('events delivered per Standard Webhooks', () => {
  it('signs memory events with the endpoint secret, the same webhook-id on every attempt', async () => {
    const { secret } = await createEndpoint({ url: receiver.url, event_types: ['memory.*'] });
    receiver.secrets.push(secret);
    const { brain } = platform.ctx.clients;
    await brain.putMemory({
      organizationId: org,
      namespace: Namespace.KNOWLEDGE,
      key: 'deploy/steps',
      content: 'Deploys run at noon UTC.',
    });
    const [created] = await receiver.waitFor(1, ofType('memory.created'));
    expect(created.verifiedWith).toBe(receiver.secrets.indexOf(secret));
    expect(created.verified?.data).toMatchObject({
      namespace: 'knowledge',
      key: 'deploy/steps',
      content: 'Deploys run at noon UTC.',
      version: 1,
    });
    expect(created.headers['webhook-id']).toMatch(/^evt_[a-z2-7]{26}$/);
    expect(created.headers['user-agent']).toBe('Mindgate-Webhooks/1.0');
    await brain.putMemory({
      organizationId: org,
      namespace: Namespace.KNOWLEDGE,
      key: 'deploy/steps',
      content: 'Deploys run at 13:00 UTC.',
    });
    await brain.deleteMemory({ organizationId: org, namespace: Namespace.KNOWLEDGE, key: 'deploy/steps' });
    const [updated] = await receiver.waitFor(1, ofType('memory.updated'));
    const [deleted] = await receiver.waitFor(1, ofType('memory.deleted'));
    expect(updated.verified?.data).toMatchObject({ version: 2, content: 'Deploys run at 13:00 UTC.' });
    expect(deleted.verified?.data).toMatchObject({ key: 'deploy/steps', version: 2 });
  });
});

let keyCount = 0;
/** A memory written in the organization: a memory.created event. */
async function writeMemory(organizationId = org): Promise<void> {
  await platform.ctx.clients.brain.putMemory({
    organizationId,
    namespace: Namespace.KNOWLEDGE,
    key: `retries/${++keyCount}`,
    content: `Fact number ${keyCount} about the retry policy.`,
  });
}

/** Polls the delivery until it is no longer pending. */
async function settledDelivery(path: string): Promise<Json> {
  for (;;) {
    const r = await call(path, { token });
    expect(r.status, r.text).toBe(200);
    if (r.json.delivery.status !== 'pending') return r.json;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('retries and the delivery log', () => {
  it('retries a failing receiver with growing waits, logs every attempt, and redelivers a failed delivery', async () => {
    const flaky = await startWebhookReceiver();
    try {
      const { endpoint, secret } = await createEndpoint({ url: flaky.url, event_types: ['memory.created'] });
      flaky.secrets.push(secret);
      flaky.status = 503;
      await writeMemory();
      const failures = await flaky.waitFor(2);
      flaky.status = 200;
      const [ok] = await flaky.waitFor(1, (r) => r.status === 200);
      const ids = new Set([...failures, ok].map((r) => r.headers['webhook-id']));
      expect(ids.size).toBe(1);
      const list = await call(`/organizations/${org}/webhook-deliveries?endpoint_id=${endpoint.id}`, { token });
      expect(list.json.deliveries).toHaveLength(1);
      const path = `/organizations/${org}/webhook-deliveries/${list.json.deliveries[0].id}`;
      const detail = await settledDelivery(path);
      expect(detail.delivery).toMatchObject({ status: 'succeeded', attempts: 3, event_id: [...ids][0], last_status_code: 200 });
      expect(detail.attempts.map((a: Json) => a.response_status)).toEqual([503, 503, 200]);
      expect(detail.attempts[0].response_body).toBe('failing with 503');
      expect(detail.attempts[0].request_headers['webhook-id']).toBe([...ids][0]);
      expect(new Webhook(secret).verify(detail.payload, ok.headers)).toMatchObject({ type: 'memory.created' });
      // Each wait is 3 times the one before (±20%): at least 0.8 × 200 ms, then 0.8 × 600 ms.
      const starts = detail.attempts.map((a: Json) => Date.parse(a.started_at));
      expect(starts[1] - starts[0]).toBeGreaterThanOrEqual(0.8 * BASE_MS);
      expect(starts[2] - starts[1]).toBeGreaterThanOrEqual(0.8 * 3 * BASE_MS);

      // An outage longer than WEBHOOK_MAX_ATTEMPTS: the delivery fails, then is redelivered.
      flaky.status = 500;
      await writeMemory();
      const failedList = await call(`/organizations/${org}/webhook-deliveries?endpoint_id=${endpoint.id}`, { token });
      const failedPath = `/organizations/${org}/webhook-deliveries/${failedList.json.deliveries[0].id}`;
      const failed = await settledDelivery(failedPath);
      expect(failed.delivery).toMatchObject({ status: 'failed', attempts: 3, last_status_code: 500, last_error: 'HTTP 500' });
      flaky.status = 200;
      const again = await call(`${failedPath}/redeliver`, { token, method: 'POST' });
      expect(again.status, again.text).toBe(202);
      expect(again.json).toMatchObject({ status: 'pending', attempts: 3 });
      const redelivered = await settledDelivery(failedPath);
      expect(redelivered.delivery).toMatchObject({ status: 'succeeded', attempts: 4 });
      const sent = flaky.received.filter((r) => r.headers['webhook-id'] === failed.delivery.event_id);
      expect(sent.map((r) => r.status)).toEqual([500, 500, 500, 200]);
      expect((await call(`/organizations/${org}/webhook-endpoints/${endpoint.id}`, { token, method: 'DELETE' })).status).toBe(204);
    } finally {
      await flaky.close();
    }
  }, 60_000);
});

describe('secret rotation', () => {
  it('signs with both secrets during the overlap, and only the new one once it is over', async () => {
    const rotating = await startWebhookReceiver();
    try {
      const { endpoint, secret: first } = await createEndpoint({ url: rotating.url, event_types: ['webhook.test'] });
      const path = `/organizations/${org}/webhook-endpoints/${endpoint.id}`;
      const rotated = await call(`${path}/rotate-secret`, { token, body: { overlap_seconds: 3600 } });
      expect(rotated.status, rotated.text).toBe(200);
      const second: string = rotated.json.secret;
      expect(second).not.toBe(first);
      expect(rotated.json.endpoint.secret_prefix).toBe(second.slice(0, 10));
      expect((await call(`${path}/test`, { token, method: 'POST' })).status).toBe(202);
      const [during] = await rotating.waitFor(1);
      expect(during.headers['webhook-signature'].split(' ')).toHaveLength(2);
      for (const secret of [first, second])
        expect(new Webhook(secret).verify(during.body, during.headers)).toMatchObject({ type: 'webhook.test' });

      const ended = await call(`${path}/rotate-secret`, { token, body: { overlap_seconds: 0 } });
      const third: string = ended.json.secret;
      expect((await call(`${path}/test`, { token, method: 'POST' })).status).toBe(202);
      const [, after] = await rotating.waitFor(2);
      expect(new Webhook(third).verify(after.body, after.headers)).toMatchObject({ type: 'webhook.test' });
      // Ended at once: the second secret no longer signs; the first keeps its own hour.
      expect(after.headers['webhook-signature'].split(' ')).toHaveLength(2);
      expect(() => new Webhook(second).verify(after.body, after.headers)).toThrow();
      expect(new Webhook(first).verify(after.body, after.headers)).toMatchObject({ type: 'webhook.test' });
    } finally {
      await rotating.close();
    }
  });
});

describe('tenant isolation', () => {
  it("never shows, changes or delivers one organization's endpoints and deliveries to another", async () => {
    const other = await obtainAccessToken(platform, { resource: api });
    expect(other.organizationId).not.toBe(org);
    const theirs = await startWebhookReceiver();
    try {
      const { endpoint: mine } = await createEndpoint({ url: receiver.url, event_types: ['*'] });
      const created = await call(`/organizations/${other.organizationId}/webhook-endpoints`, {
        token: other.access_token,
        body: { url: theirs.url, event_types: ['*'] },
      });
      expect(created.status, created.text).toBe(201);
      theirs.secrets.push(created.json.secret);
      await writeMemory();
      const [mineDelivered] = await receiver.waitFor(
        1,
        (r) => r.verified?.type === 'memory.created' && r.verified.data.key === `retries/${keyCount}`,
      );
      const deliveryList = await call(`/organizations/${org}/webhook-deliveries?event_id=${mineDelivered.headers['webhook-id']}`, {
        token,
      });
      const deliveryId = deliveryList.json.deliveries[0].id;

      const as = (path: string, init: Json = {}) =>
        call(`/organizations/${other.organizationId}${path}`, { token: other.access_token, ...init });
      expect((await as(`/webhook-endpoints/${mine.id}`)).status).toBe(404);
      expect(
        (await as(`/webhook-endpoints/${mine.id}`, { method: 'PATCH', body: { enabled: false }, headers: { 'if-match': '"1"' } })).status,
      ).toBe(404);
      expect((await as(`/webhook-endpoints/${mine.id}/rotate-secret`, { body: {} })).status).toBe(404);
      expect((await as(`/webhook-endpoints/${mine.id}`, { method: 'DELETE' })).status).toBe(404);
      expect((await as(`/webhook-deliveries/${deliveryId}`)).status).toBe(404);
      expect((await as(`/webhook-deliveries/${deliveryId}/redeliver`, { method: 'POST' })).status).toBe(404);
      const listed = await as('/webhook-endpoints?page_size=100');
      expect(listed.json.endpoints.map((e: Json) => e.id)).toEqual([created.json.endpoint.id]);
      expect((await as('/webhook-deliveries?page_size=100')).json.deliveries).toEqual([]);
      // Another organization's path with one's own credentials: 403, whatever the id.
      expect((await call(`/organizations/${org}/webhook-endpoints/${mine.id}`, { token: other.access_token })).status).toBe(403);
      expect(theirs.received).toEqual([]);
      expect((await call(`/organizations/${org}/webhook-endpoints/${mine.id}`, { token })).status).toBe(200);
    } finally {
      await theirs.close();
    }
  });
});

describe('malformed input', () => {
  const problem = (r: { status: number; headers: Headers; json: Json }, status: number) => {
    expect(r.status).toBe(status);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(r.json).toMatchObject({ status, type: expect.stringMatching(/^tag:mindgate\.dev,2026:problem\//), title: expect.any(String) });
    return r.json;
  };

  it('answers every kind with an RFC 9457 problem, never a 500', async () => {
    const base = `/organizations/${org}`;
    const { endpoint } = await createEndpoint({ url: receiver.url, event_types: ['webhook.test'] });
    const path = `${base}/webhook-endpoints/${endpoint.id}`;
    problem(await call(`${base}/webhook-endpoints`, { token, rawBody: '{"url": ' }), 422);
    problem(await call(`${base}/webhook-endpoints`, { token, rawBody: 'url=x', contentType: 'application/x-www-form-urlencoded' }), 415);
    const extra = problem(
      await call(`${base}/webhook-endpoints`, { token, body: { url: receiver.url, event_types: ['*'], secret: 'mine' } }),
      422,
    );
    expect(extra.errors[0]).toMatchObject({ loc: ['body'], msg: expect.stringContaining('secret') });
    const types = problem(await call(`${base}/webhook-endpoints`, { token, body: { url: receiver.url, event_types: 'memory.*' } }), 422);
    expect(types.errors[0].loc).toEqual(['body', 'event_types']);
    const overlap = problem(await call(`${path}/rotate-secret`, { token, body: { overlap_seconds: -1 } }), 422);
    expect(overlap.errors[0].loc).toEqual(['body', 'overlap_seconds']);
    problem(await call(path, { token, method: 'PATCH', body: {}, headers: { 'if-match': '"1"' } }), 422);
    problem(await call(path, { token, method: 'PATCH', body: { enabled: 'yes' }, headers: { 'if-match': '"1"' } }), 422);
    problem(await call(`${base}/webhook-deliveries?status=lost`, { token }), 422);
    problem(await call(`${base}/webhook-deliveries?since=yesterday`, { token }), 422);
    problem(await call(`${base}/webhook-deliveries/dlv_nothex`, { token }), 422);
    problem(await call(`${base}/webhook-deliveries/dlv_000000000000000000000000`, { token }), 404);
    const range = problem(
      await call(`${path}/redeliver`, { token, body: { since: '2026-05-02T00:00:00Z', until: '2026-05-01T00:00:00Z' } }),
      422,
    );
    expect(range.errors[0].loc).toEqual(['body', 'since']);
    problem(await call(`${path}/redeliver`, { token, body: {} }), 422);
  });
});

describe('sustained failure', () => {
  it('disables an endpoint that keeps failing, tells the other endpoints and e-mails the owners', async () => {
    const failing = await startWebhookReceiver();
    const watcher = await startWebhookReceiver();
    try {
      failing.status = 500;
      const since = new Date(Date.now() - 1000).toISOString();
      const { endpoint } = await createEndpoint({ url: failing.url, event_types: ['memory.created'] });
      const { secret } = await createEndpoint({ url: watcher.url, event_types: ['webhook_endpoint.*'] });
      watcher.secrets.push(secret);
      await writeMemory();
      await writeMemory();
      const [told] = await watcher.waitFor(1, (r) => r.verified?.data.endpoint_id === endpoint.id);
      expect(told.verified).toMatchObject({
        type: 'webhook_endpoint.disabled',
        data: { url: failing.url, reason: 'failing', consecutive_failures: 5 },
      });
      const got = await call(`/organizations/${org}/webhook-endpoints/${endpoint.id}`, { token });
      expect(got.json).toMatchObject({ enabled: false, disabled_reason: 'failing' });
      // An attempt already in flight when it was disabled may count one more.
      expect(got.json.consecutive_failures).toBeGreaterThanOrEqual(5);
      const outbox = path.join(platform.dataDir, 'outbox.jsonl');
      let mail = '';
      for (let i = 0; i < 200 && !mail.includes(endpoint.id); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        mail = fs.existsSync(outbox) ? fs.readFileSync(outbox, 'utf8') : '';
      }
      const message = mail.split('\n').find((line) => line.includes(endpoint.id));
      expect(message).toContain('A webhook endpoint was disabled');

      // The receiver recovers: enabled again, the failed range is redelivered with the same ids.
      const endpointPath = `/organizations/${org}/webhook-endpoints/${endpoint.id}`;
      expect((await call(`${endpointPath}/redeliver`, { token, body: { since } })).status).toBe(412);
      // Both deliveries end failed: a retry due after the disabling ends without an attempt.
      let failed: Json[] = [];
      for (;;) {
        failed = (await call(`/organizations/${org}/webhook-deliveries?endpoint_id=${endpoint.id}`, { token })).json.deliveries;
        if (failed.length === 2 && failed.every((d) => d.status !== 'pending')) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(failed.map((d) => d.status)).toEqual(['failed', 'failed']);
      failing.status = 200;
      const etag = (await call(endpointPath, { token })).headers.get('etag')!;
      const enabled = await call(endpointPath, { token, method: 'PATCH', body: { enabled: true }, headers: { 'if-match': etag } });
      expect(enabled.json).toMatchObject({ enabled: true, disabled_reason: null, consecutive_failures: 0 });
      const range = await call(`${endpointPath}/redeliver`, { token, body: { since } });
      expect(range.status, range.text).toBe(202);
      expect(range.json.requeued).toBe(2);
      const ids = failed.map((d) => d.event_id);
      const redelivered = await failing.waitFor(2, (r) => r.status === 200);
      expect(redelivered.map((r) => r.headers['webhook-id']).sort()).toEqual(ids.sort());
    } finally {
      await failing.close();
      await watcher.close();
    }
  });
});

describe('plan limits', () => {
  it("counts events over the month's limit as dropped, sends none of them, and shows the reason", async () => {
    const usage = async () => (await call(`/organizations/${org}/webhook-usage`, { token })).json;
    const before = await usage();
    expect(before).toMatchObject({ limit: 100_000, dropped: 0, dropped_reason: null });
    expect(before.published).toBeGreaterThan(0);
    const counted = await startWebhookReceiver();
    try {
      await createEndpoint({ url: counted.url, event_types: ['memory.created'] });
      const events = [1, 2, 3].map((n) =>
        create(EventSchema, {
          eventId: newEventId(Date.now()),
          organizationId: org,
          type: 'memory.created',
          time: timestampFromMs(Date.now()),
          dataJson: JSON.stringify({ namespace: 'knowledge', key: `limited/${n}` }),
        }),
      );
      // As the relay would pass it: the plan leaves room for one more event this month.
      const monthlyLimits = { [org]: BigInt(before.published + 1) };
      const res = await platform.ctx.clients.webhooks.publishEvents({ events, monthlyLimits });
      expect(res).toMatchObject({ published: 1, dropped: 2 });
      const after = await usage();
      expect(after).toMatchObject({ published: before.published + 1, dropped: 2 });
      expect(after.dropped_reason).toContain('limit of 100000');
      await counted.waitFor(1);
      const dropped = await call(`/organizations/${org}/webhook-deliveries?event_id=${events[2]!.eventId}`, { token });
      expect(dropped.json.deliveries).toEqual([]);
      expect(counted.received.map((r) => JSON.parse(r.body).data.key)).toEqual(['limited/1']);
    } finally {
      await counted.close();
    }
  });
});

describe('the verification helper of docs/webhooks.md', () => {
  it('accepts a real delivery in Python and refuses a tampered one', () => {
    const docs = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/webhooks.md'), 'utf8');
    const helper = /```python\n([\s\S]*?)```/.exec(docs)![1];
    const delivery = receiver.received.find((r) => r.verifiedWith >= 0)!;
    const driver = `
import json, sys
given = json.load(sys.stdin)
body = given["body"].encode()
verify(given["secret"], given["headers"], body)
try:
    verify(given["secret"], given["headers"], body + b" ")
    print("tampered accepted")
except ValueError:
    print("ok")
`;
    const input = JSON.stringify({ secret: receiver.secrets[delivery.verifiedWith], headers: delivery.headers, body: delivery.body });
    expect(execFileSync('python3', ['-c', `${helper}\n${driver}`], { input, encoding: 'utf8' }).trim()).toBe('ok');
  });
});
