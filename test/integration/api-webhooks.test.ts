// Webhook endpoints through the Agents API, and the events they receive: endpoints created (the
// secret shown once), listed, read, changed under If-Match, deleted; bad input answered with 422
// on the field; the event catalogue with JSON Schemas; events of memory writes, contradictions,
// questions, members, invitations and API keys delivered signed per Standard Webhooks (checked
// with the `standardwebhooks` package); a secret rotation with both signatures during the
// overlap; a test event; and the delivery log of a receiver outage, redelivered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

let platform: TestPlatform;
let api: string;
let org: string;
let token: string;
let receiver: WebhookReceiver;
const call = restClient(() => api);

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_BASE_MS: '200' });
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
