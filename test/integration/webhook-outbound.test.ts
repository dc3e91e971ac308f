// Where webhooks may be sent, and how much of an answer is waited for and read. The platform runs
// without WEBHOOK_ALLOW_PRIVATE_URLS: endpoint URLs naming or resolving to loopback, private,
// link-local or metadata addresses are refused with a 422 on `body.url`, and an endpoint whose
// name resolves to such an address only later (DNS rebinding) is refused at the connection: its
// delivery fails with the reason logged and the receiver never hears from it. The sender itself
// (services/agents/webhooks/sender.ts) reads at most a small part of an answer and gives up on a
// receiver that does not answer in time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointRecord } from '../../services/agents/webhooks/records.ts';
import { createSender, RESPONSE_KEPT_BYTES } from '../../services/agents/webhooks/sender.ts';
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
  platform = await startOAuthTestPlatform({ WEBHOOK_MAX_ATTEMPTS: '1' });
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

describe('the outbound address policy', () => {
  it('refuses endpoint URLs that name or resolve to loopback, private, link-local or metadata addresses', async () => {
    const port = new URL(receiver.url).port;
    for (const url of [
      receiver.url,
      `http://localhost:${port}/hooks`,
      `http://[::1]:${port}/hooks`,
      'http://[::ffff:127.0.0.1]/hooks',
      'http://10.1.2.3/hooks',
      'http://192.168.0.10/hooks',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/hooks',
    ]) {
      const r = await call(`/organizations/${org}/webhook-endpoints`, { token, body: { url, event_types: ['*'] } });
      expect(r.status, url).toBe(422);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.json.errors[0]).toMatchObject({ loc: ['body', 'url'], msg: expect.stringContaining('WEBHOOK_ALLOW_PRIVATE_URLS') });
    }
    const created = await call(`/organizations/${org}/webhook-endpoints`, {
      token,
      body: { url: 'https://93.184.215.14/hooks', event_types: ['webhook.test'] },
    });
    expect(created.status, created.text).toBe(201);
    const path = `/organizations/${org}/webhook-endpoints/${created.json.endpoint.id}`;
    const moved = await call(path, { token, method: 'PATCH', body: { url: receiver.url }, headers: { 'if-match': '"1"' } });
    expect(moved.status).toBe(422);
    expect(moved.json.errors[0].loc).toEqual(['body', 'url']);
    expect(receiver.arrived).toEqual([]);
  });

  it('refuses the connection when a saved name resolves to a loopback address at delivery time', async () => {
    const created = await call(`/organizations/${org}/webhook-endpoints`, {
      token,
      body: { url: 'https://93.184.215.14/hooks', event_types: ['webhook.test'] },
    });
    expect(created.status, created.text).toBe(201);
    const id: string = created.json.endpoint.id;
    // The name now resolves to loopback, as a rebinding DNS server would answer after the check.
    const endpoints = platform.ctx.stores.records.collection<EndpointRecord>('webhook_endpoints');
    const record = (await endpoints.get(id))!;
    await endpoints.put({ ...record, url: `http://localhost:${new URL(receiver.url).port}/hooks` });
    const queued = await call(`/organizations/${org}/webhook-endpoints/${id}/test`, { token, method: 'POST' });
    expect(queued.status).toBe(202);
    const path = `/organizations/${org}/webhook-deliveries/${queued.json.id}`;
    let detail: Json;
    do {
      await new Promise((resolve) => setTimeout(resolve, 50));
      detail = (await call(path, { token })).json;
    } while (detail.delivery.status === 'pending');
    expect(detail.delivery.status).toBe('failed');
    expect(detail.attempts).toHaveLength(1);
    expect(detail.attempts[0]).toMatchObject({ response_status: null, error: expect.stringContaining('loopback') });
    expect(receiver.arrived).toEqual([]);
  });
});

describe('the sender', () => {
  let server: http.Server;
  let url: string;
  const bigBody = 'x'.repeat(1_000_000);

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/big') res.writeHead(200).end(bigBody);
      else setTimeout(() => res.writeHead(200).end('late'), 3_000).unref();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses loopback addresses, literal or resolved, unless the operator allows them', async () => {
    const strict = createSender({ timeoutMs: 2_000, allowPrivate: false });
    const open = createSender({ timeoutMs: 2_000, allowPrivate: true });
    try {
      const port = new URL(url).port;
      const literal = await strict.send(`${url}/big`, {}, '{}');
      expect(literal).toMatchObject({ status: 0, error: expect.stringContaining('loopback') });
      const named = await strict.send(`http://localhost:${port}/big`, {}, '{}');
      expect(named).toMatchObject({ status: 0, error: expect.stringContaining('loopback') });
      expect((await open.send(`http://localhost:${port}/big`, {}, '{}')).status).toBe(200);
    } finally {
      await strict.close();
      await open.close();
    }
  });

  it('keeps only the start of a large answer, and gives up on a receiver that does not answer in time', async () => {
    const sender = createSender({ timeoutMs: 300, allowPrivate: true });
    try {
      const big = await sender.send(`${url}/big`, {}, '{}');
      expect(big.status).toBe(200);
      expect(big.body).toHaveLength(RESPONSE_KEPT_BYTES);
      const slow = await sender.send(`${url}/slow`, {}, '{}');
      expect(slow).toMatchObject({ status: 0, error: 'no answer within 300 ms' });
    } finally {
      await sender.close();
    }
  });
});
