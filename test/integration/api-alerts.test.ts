// Alerts over the real REST API: an Alertmanager webhook (the shape Alertmanager sends) at an alert
// source's URL opens an investigation (a thread and a queued run with the matching rule's
// instructions); the same alert again is counted, not opened; a second alert of the same group
// joins the thread; resolved closes the alert event and tells its thread. A generic source takes
// one JSON alert signed with HMAC. Wrong secrets are 401, malformed payloads 422 naming the field,
// concurrent duplicate posts open one alert event and one thread, a snoozed alert that fires
// again stays quiet, events are acknowledged and resolved under If-Match, other tenants see
// nothing, and alert.received / alert.resolved reach a webhook endpoint.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertFormat } from '../../gen/mindgate/agents/v1/alerts_pb.js';
import { alertmanagerNotification } from '../support/alertmanager.ts';
import { joinAs, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

let offset = 0;
let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let member: TestMember;
let viewer: TestMember;
let org: string;
let receiver: WebhookReceiver;
let am: { id: string; secret: string; url: string };
let rule: Json;
const call = restClient(() => api);
const path = (p: string) => `/organizations/${org}${p}`;

/** An Alertmanager notification of one group of alerts on checkout. */
const notification = (
  group: string,
  status: 'firing' | 'resolved',
  alerts: Array<{ fingerprint: string; name: string; severity?: string }>,
) =>
  alertmanagerNotification({
    groupKey: `{}/{service="checkout"}:{group="${group}"}`,
    status,
    alerts: alerts.map((a) => ({
      fingerprint: a.fingerprint,
      labels: { alertname: a.name, service: 'checkout', severity: a.severity ?? 'critical', instance: 'checkout-1:9090' },
      annotations: { summary: `${a.name} on checkout`, description: 'p99 above 2 s for 5 minutes' },
      endsAt: status === 'firing' ? '0001-01-01T00:00:00Z' : '2026-03-02T10:00:00.000Z',
      generatorURL: 'http://prometheus:9090/graph?g0.expr=histogram_quantile',
    })),
    groupLabels: { alertname: alerts[0].name },
    commonLabels: { service: 'checkout' },
  });

const send = (source: { url: string; secret: string }, body: unknown, headers: Record<string, string> = {}) =>
  call(new URL(source.url).pathname, { body, headers: { authorization: `Bearer ${source.secret}`, ...headers } });

const alertEvent = async (id: string) => (await call(path(`/alert-events/${id}`), { token: owner.access_token })).json;
const messages = async (thread: string) =>
  (await call(path(`/threads/${thread}/messages`), { token: owner.access_token })).json.messages as Json[];
const runsOf = async (thread: string) => (await call(path(`/runs?thread_id=${thread}`), { token: owner.access_token })).json.runs as Json[];

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }, { now: () => Date.now() + offset });
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  member = await joinAs(platform, org, 'member');
  viewer = await joinAs(platform, org, 'viewer');
  receiver = await startWebhookReceiver();
  const endpoint = await call(path('/webhook-endpoints'), {
    token: owner.access_token,
    body: { url: receiver.url, event_types: ['alert.*'] },
  });
  expect(endpoint.status, endpoint.text).toBe(201);
  receiver.secrets.push(endpoint.json.secret);
  const created = await call(path('/alert-sources'), {
    token: owner.access_token,
    body: { name: 'Prod Alertmanager', format: 'alertmanager' },
  });
  expect(created.status, created.text).toBe(201);
  am = { id: created.json.source.id, secret: created.json.secret, url: created.json.source.receive_url };
  const r = await call(path('/alert-rules'), {
    token: owner.access_token,
    body: {
      name: 'Critical checkout',
      severities: ['critical'],
      matchers: [
        { label: 'service', op: '=~', value: 'check.*' },
        { label: 'instance', op: '!=', value: 'canary' },
      ],
      action: { type: 'investigate', instructions: 'Find the deploy that caused it.', executor: 'external', timeout_seconds: 600 },
    },
  });
  expect(r.status, r.text).toBe(201);
  rule = r.json;
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await platform?.stop();
});

describe('alert sources', () => {
  it('shows the secret once, seals it at rest, and lists sources without it', async () => {
    expect(am.secret).toMatch(/^alsec_/);
    expect(am.url).toBe(`${api}/alert-sources/${am.id}/alerts`);
    const stored = await platform.ctx.stores.records.collection('alert_sources').get(am.id);
    expect(JSON.stringify(stored)).not.toContain(am.secret);
    const listed = await call(path('/alert-sources'), { token: viewer.access_token });
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(am.secret);
    expect(listed.json.sources.map((s: Json) => s.id)).toContain(am.id);
  });

  it('refuses a wrong secret, a missing one and an unknown source with 401', async () => {
    const body = notification('auth', 'firing', [{ fingerprint: 'f-auth', name: 'Auth' }]);
    const wrong = await send({ ...am, secret: 'alsec_wrong' }, body);
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('content-type')).toContain('application/problem+json');
    expect(wrong.headers.get('www-authenticate')).toContain('Bearer');
    expect((await call(new URL(am.url).pathname, { body })).status).toBe(401);
    expect((await send({ url: `${api}/alert-sources/als_nosuchsource/alerts`, secret: am.secret }, body)).status).toBe(401);
    // An owner's access token is not the source's secret.
    expect((await send({ ...am, secret: owner.access_token }, body)).status).toBe(401);
  });

  it('answers malformed payloads with 422 naming the field, other media types 415, large bodies 413', async () => {
    const body = notification('bad', 'firing', [{ fingerprint: 'f-bad', name: 'Bad' }]) as Json;
    delete body.alerts[0].fingerprint;
    const missing = await send(am, body);
    expect(missing.status, missing.text).toBe(422);
    expect(missing.json.errors[0].loc).toEqual(['body', 'alerts', 0, 'fingerprint']);
    const version = await send(am, { ...body, version: '3' });
    expect(version.json.errors[0].loc).toEqual(['body', 'version']);
    const notJson = await call(new URL(am.url).pathname, { rawBody: '{not json', headers: { authorization: `Bearer ${am.secret}` } });
    expect(notJson.status).toBe(422);
    const text = await call(new URL(am.url).pathname, {
      rawBody: 'x',
      contentType: 'text/plain',
      headers: { authorization: `Bearer ${am.secret}` },
    });
    expect(text.status).toBe(415);
    const huge = await call(new URL(am.url).pathname, {
      rawBody: `"${'x'.repeat(2_000_000)}"`,
      headers: { authorization: `Bearer ${am.secret}` },
    });
    expect(huge.status).toBe(413);
  });
});

describe('Alertmanager alerts', () => {
  let first: Json;

  it('opens an investigation with a queued run when a rule matches', async () => {
    const r = await send(am, notification('latency', 'firing', [{ fingerprint: 'fp-latency', name: 'HighLatency' }]));
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ received: 1, opened: 1, deduplicated: 0, investigations_opened: 1 });
    first = await alertEvent(r.json.alert_event_ids[0]);
    expect(first).toMatchObject({ status: 'firing', severity: 'critical', fingerprint: 'fp-latency', count: 1, rule_id: rule.id });
    expect(first.title).toBe('HighLatency on checkout');
    const runs = await runsOf(first.thread_id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      id: first.run_id,
      status: 'queued',
      executor: 'external',
      instructions: 'Find the deploy that caused it.',
    });
    const thread = (await call(path(`/threads/${first.thread_id}`), { token: owner.access_token })).json;
    expect(thread).toMatchObject({ status: 'open', title: '[critical] HighLatency on checkout' });
    expect((await messages(first.thread_id))[0].content).toContain('`service=checkout`');
  });

  it('deduplicates the same alert sent again: the count goes up, nothing new opens', async () => {
    const r = await send(am, notification('latency', 'firing', [{ fingerprint: 'fp-latency', name: 'HighLatency' }]));
    expect(r.json).toMatchObject({ opened: 0, deduplicated: 1, investigations_opened: 0, alert_event_ids: [first.id] });
    expect(await alertEvent(first.id)).toMatchObject({ count: 2, thread_id: first.thread_id });
    expect(await runsOf(first.thread_id)).toHaveLength(1);
  });

  it('joins a second alert of the same group to the open thread', async () => {
    const r = await send(
      am,
      notification('latency', 'firing', [
        { fingerprint: 'fp-latency', name: 'HighLatency' },
        { fingerprint: 'fp-errors', name: 'HighErrorRate', severity: 'warning' },
      ]),
    );
    expect(r.json).toMatchObject({ received: 2, opened: 1, deduplicated: 1, investigations_opened: 0 });
    const second = await alertEvent(r.json.alert_event_ids[1]);
    // The warning matches no rule, but its group has an open investigation: it joins it.
    expect(second).toMatchObject({ thread_id: first.thread_id, run_id: null, rule_id: null });
    expect(await runsOf(first.thread_id)).toHaveLength(1);
    expect((await messages(first.thread_id)).map((m) => m.content).join('\n')).toContain('HighErrorRate on checkout');
  });

  it('closes the alert event on resolved and tells its thread', async () => {
    const r = await send(am, notification('latency', 'resolved', [{ fingerprint: 'fp-latency', name: 'HighLatency' }]));
    expect(r.json).toMatchObject({ resolved: 1, alert_event_ids: [first.id] });
    const closed = await alertEvent(first.id);
    expect(closed).toMatchObject({ status: 'resolved', ends_at: '2026-03-02T10:00:00.000Z' });
    const last = (await messages(first.thread_id)).at(-1)!;
    expect(last.content).toContain('**Alert resolved**');
    // A resolved notification repeated changes nothing.
    expect((await send(am, notification('latency', 'resolved', [{ fingerprint: 'fp-latency', name: 'HighLatency' }]))).json.resolved).toBe(
      0,
    );
  });

  it('publishes alert.received and alert.resolved to webhook endpoints', async () => {
    const got = await receiver.waitFor(2, (w) => w.verified?.data.id === first.id);
    expect(got.map((w) => w.verified!.type).sort()).toEqual(['alert.received', 'alert.resolved']);
    const resolved = got.find((w) => w.verified!.type === 'alert.resolved')!.verified!.data;
    expect(resolved).toMatchObject({ status: 'resolved', thread_id: first.thread_id, fingerprint: 'fp-latency' });
  });

  it('opens one alert event and one thread for concurrent duplicate posts', async () => {
    const body = notification('race', 'firing', [{ fingerprint: 'fp-race', name: 'DiskFull' }]);
    const results = await Promise.all(Array.from({ length: 8 }, () => send(am, body)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(results.reduce((n, r) => n + r.json.opened, 0)).toBe(1);
    expect(results.reduce((n, r) => n + r.json.investigations_opened, 0)).toBe(1);
    expect(new Set(results.map((r) => r.json.alert_event_ids[0])).size).toBe(1);
    const event = await alertEvent(results[0].json.alert_event_ids[0]);
    expect(event.count).toBe(8);
    expect(await runsOf(event.thread_id)).toHaveLength(1);
    const threads = (await call(path('/threads?page_size=100'), { token: owner.access_token })).json.threads as Json[];
    expect(threads.filter((t) => t.title === '[critical] DiskFull on checkout')).toHaveLength(1);
  });
});

describe('a replica that dies mid-alert', () => {
  const events = () => platform.ctx.stores.records.collection('alert_events');

  it('leaves the investigation step to the next repeat when it died before the thread', async () => {
    const body = notification('crash-1', 'firing', [{ fingerprint: 'fp-crash-1', name: 'OOMKilled' }]);
    const opened = await alertEvent((await send(am, body)).json.alert_event_ids[0]);
    // What a replica that died right after inserting the alert event leaves: no thread, no run.
    await platform.ctx.stores.records.collection('runs').delete(opened.run_id);
    await platform.ctx.stores.records.collection('threads').delete(opened.thread_id);
    const stored = (await events().get(opened.id))!;
    await events().put({ ...stored, attached: false, threadId: '', runId: '', ruleId: '' });
    const repeat = await send(am, body);
    expect(repeat.json).toMatchObject({ deduplicated: 1 });
    const recovered = await alertEvent(opened.id);
    expect(recovered).toMatchObject({ count: 2, rule_id: rule.id });
    expect(recovered.thread_id).toBeTruthy();
    expect((await runsOf(recovered.thread_id)).map((r) => r.id)).toEqual([recovered.run_id]);
    // Done once: the next repeat changes nothing more.
    await send(am, body);
    expect(await runsOf(recovered.thread_id)).toHaveLength(1);
  });

  it("queues the group's run when the opener died between the thread and the run", async () => {
    const opened = await alertEvent(
      (await send(am, notification('crash-2', 'firing', [{ fingerprint: 'fp-crash-2a', name: 'PodRestarts' }]))).json.alert_event_ids[0],
    );
    await platform.ctx.stores.records.collection('runs').delete(opened.run_id);
    const joined = await send(am, notification('crash-2', 'firing', [{ fingerprint: 'fp-crash-2b', name: 'PodRestarts' }]));
    expect(joined.json).toMatchObject({ opened: 1, investigations_opened: 0 });
    const runs = await runsOf(opened.thread_id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'queued', instructions: 'Find the deploy that caused it.' });
  });
});

describe('a generic source', () => {
  let generic: { id: string; secret: string; url: string };
  const sign = (secret: string, body: string, at = Math.floor((Date.now() + offset) / 1000)) => ({
    'mindgate-timestamp': String(at),
    'mindgate-signature': `sha256=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`,
  });

  beforeAll(async () => {
    const r = await call(path('/alert-sources'), { token: owner.access_token, body: { name: 'Uptime checker', format: 'generic' } });
    generic = { id: r.json.source.id, secret: r.json.secret, url: r.json.source.receive_url };
  });

  it('takes a JSON alert signed with HMAC, and refuses a wrong or stale signature', async () => {
    const body = JSON.stringify({
      title: 'Checkout down',
      severity: 'critical',
      labels: { service: 'checkout' },
      dedup_key: 'uptime-checkout',
    });
    const p = new URL(generic.url).pathname;
    const ok = await call(p, { rawBody: body, headers: sign(generic.secret, body) });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toMatchObject({ opened: 1, investigations_opened: 1 });
    const event = await alertEvent(ok.json.alert_event_ids[0]);
    expect(event).toMatchObject({ fingerprint: 'uptime-checkout', source_id: generic.id, rule_id: rule.id });
    expect((await call(p, { rawBody: body, headers: sign('alsec_other', body) })).status).toBe(401);
    expect((await call(p, { rawBody: body, headers: sign(generic.secret, body, Math.floor(Date.now() / 1000) - 3600) })).status).toBe(401);
    const tampered = body.replace('critical', 'info');
    expect((await call(p, { rawBody: tampered, headers: sign(generic.secret, body) })).status).toBe(401);
    // Bearer works too, and the same dedup_key is a repeat.
    const again = await send(generic, JSON.parse(body));
    expect(again.json).toMatchObject({ opened: 0, deduplicated: 1 });
    const bad = await send(generic, { severity: 'critical' });
    expect(bad.status).toBe(422);
    expect(bad.json.errors[0].loc).toEqual(['body', 'title']);
  });
});

describe('alert events', () => {
  it('lists with filters, acknowledges under If-Match, resolves by hand, and refuses a resolved one', async () => {
    const r = await send(am, notification('ack', 'firing', [{ fingerprint: 'fp-ack', name: 'QueueBacklog' }]));
    const id = r.json.alert_event_ids[0];
    const listed = await call(path(`/alert-events?status=firing&severity=critical&source_id=${am.id}&page_size=100`), {
      token: viewer.access_token,
    });
    expect(listed.json.alert_events.map((e: Json) => e.id)).toContain(id);
    const got = await call(path(`/alert-events/${id}`), { token: viewer.access_token });
    expect((await call(path(`/alert-events/${id}/acknowledge`), { token: viewer.access_token, method: 'POST' })).status).toBe(403);
    const stale = await call(path(`/alert-events/${id}/acknowledge`), {
      token: member.access_token,
      method: 'POST',
      headers: { 'if-match': '"999"' },
    });
    expect(stale.status).toBe(412);
    const acked = await call(path(`/alert-events/${id}/acknowledge`), {
      token: member.access_token,
      method: 'POST',
      headers: { 'if-match': got.headers.get('etag')! },
    });
    expect(acked.status, acked.text).toBe(200);
    expect(acked.json).toMatchObject({ status: 'acknowledged', acknowledged_by: expect.any(String) });
    const resolved = await call(path(`/alert-events/${id}/resolve`), { token: member.access_token, method: 'POST' });
    expect(resolved.json.status).toBe('resolved');
    expect((await messages(resolved.json.thread_id)).at(-1)!.content).toContain('**Alert resolved** (by ');
    const again = await call(path(`/alert-events/${id}/resolve`), { token: member.access_token, method: 'POST' });
    expect(again.status).toBe(409);
  });

  it('keeps a snoozed alert quiet when it fires again until the snooze ends', async () => {
    const body = notification('snooze', 'firing', [{ fingerprint: 'fp-snooze', name: 'CertExpiring', severity: 'warning' }]);
    const id = (await send(am, body)).json.alert_event_ids[0];
    const until = new Date(Date.now() + offset + 60_000).toISOString();
    const snoozed = await call(path(`/alert-events/${id}/snooze`), { token: member.access_token, body: { until } });
    expect(snoozed.status, snoozed.text).toBe(200);
    expect(snoozed.json).toMatchObject({ status: 'snoozed', snoozed_until: until });
    const past = await call(path(`/alert-events/${id}/snooze`), { token: member.access_token, body: { until: '2020-01-01T00:00:00Z' } });
    expect(past.status).toBe(422);
    // It resolves, then fires again within the snooze: a new occurrence, snoozed, quiet.
    await send(am, notification('snooze', 'resolved', [{ fingerprint: 'fp-snooze', name: 'CertExpiring', severity: 'warning' }]));
    const refired = await send(am, body);
    expect(refired.json).toMatchObject({ opened: 1, investigations_opened: 0 });
    const next = await alertEvent(refired.json.alert_event_ids[0]);
    expect(next.id).not.toBe(id);
    expect(next).toMatchObject({ status: 'snoozed', snoozed_until: until, thread_id: null });
    // After the snooze: the next occurrence is loud again.
    await send(am, notification('snooze', 'resolved', [{ fingerprint: 'fp-snooze', name: 'CertExpiring', severity: 'warning' }]));
    offset += 120_000;
    const loud = await alertEvent((await send(am, body)).json.alert_event_ids[0]);
    expect(loud.status).toBe('firing');
    const received = await receiver.waitFor(1, (w) => w.verified?.type === 'alert.received' && w.verified.data.id === loud.id);
    expect(received).toHaveLength(1);
    expect(receiver.received.some((w) => w.verified?.type === 'alert.received' && w.verified.data.id === next.id)).toBe(false);
  });
});

describe('alert rules', () => {
  it('refuses a bad regular expression with 422 and changes a rule under If-Match', async () => {
    const bad = await call(path('/alert-rules'), {
      token: owner.access_token,
      body: { name: 'x', matchers: [{ label: 'service', op: '=~', value: '(' }], action: { type: 'investigate' } },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.errors[0].loc).toEqual(['body', 'matchers', 0, 'value']);
    const got = await call(path(`/alert-rules/${rule.id}`), { token: viewer.access_token });
    const stale = await call(path(`/alert-rules/${rule.id}`), {
      token: owner.access_token,
      method: 'PATCH',
      body: { name: 'Renamed' },
      headers: { 'if-match': '"999"' },
    });
    expect(stale.status).toBe(412);
    const changed = await call(path(`/alert-rules/${rule.id}`), {
      token: owner.access_token,
      method: 'PATCH',
      body: { name: 'Critical checkout alerts' },
      headers: { 'if-match': got.headers.get('etag')! },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({ name: 'Critical checkout alerts', matchers: rule.matchers, action: rule.action });
    expect(
      (await call(path(`/alert-rules/${rule.id}`), { token: member.access_token, method: 'PATCH', body: { enabled: false } })).status,
    ).toBe(403);
  });
});

describe('audit', () => {
  it('records the changes in the audit log, and refusals', async () => {
    const events = async (query: string) =>
      (await call(path(`/audit-events?${query}`), { token: owner.access_token })).json.events as Json[];
    for (const action of [
      'createAlertSource',
      'createAlertRule',
      'updateAlertRule',
      'acknowledgeAlertEvent',
      'resolveAlertEvent',
      'snoozeAlertEvent',
    ]) {
      expect((await events(`action=${action}&outcome=success`)).length, action).toBeGreaterThan(0);
    }
    expect((await call(path('/alert-sources'), { token: member.access_token, body: { name: 'x', format: 'generic' } })).status).toBe(403);
    const denied = await events('action=createAlertSource&outcome=denied');
    expect(denied[0]).toMatchObject({ actor: { id: member.userId }, status: 403 });
  });
});

describe("an organization's deletion", () => {
  it('purges its alert sources, rules, events and generation hints', async () => {
    const org2 = 'org_alertspurge';
    const alerts = platform.ctx.clients.alerts;
    const created = await alerts.createAlertSource({ organizationId: org2, name: 'p', format: AlertFormat.GENERIC, createdBy: 'usr_p' });
    const body = Buffer.from(JSON.stringify({ title: 'Purge me', dedup_key: 'purge' }));
    const auth = `Bearer ${created.secret}`;
    await alerts.receiveAlerts({ sourceId: created.source!.sourceId, payload: body, authorization: auth });
    await alerts.receiveAlerts({
      sourceId: created.source!.sourceId,
      payload: Buffer.from('{"title":"Purge me","dedup_key":"purge","status":"resolved"}'),
      authorization: auth,
    });
    await alerts.receiveAlerts({ sourceId: created.source!.sourceId, payload: body, authorization: auth });
    for (;;) if ((await platform.ctx.clients.organizations.purgeOrganizationData({ organizationId: org2 })).done) break;
    for (const name of ['alert_sources', 'alert_rules', 'alert_events', 'alert_generations']) {
      expect(await platform.ctx.stores.records.collection(name).count({ organizationId: org2 }), name).toBe(0);
    }
  });
});

describe('tenants', () => {
  it("does not show an organization's alerts to another", async () => {
    const mine = (await call(path('/alert-events?page_size=1'), { token: owner.access_token })).json.alert_events[0];
    const theirs = `/organizations/${other.organizationId}`;
    expect((await call(`${theirs}/alert-events/${mine.id}`, { token: other.access_token })).status).toBe(404);
    expect((await call(`${theirs}/alert-sources/${am.id}`, { token: other.access_token })).status).toBe(404);
    expect((await call(`${theirs}/alert-rules/${rule.id}`, { token: other.access_token })).status).toBe(404);
    expect((await call(path(`/alert-events/${mine.id}`), { token: other.access_token })).status).toBe(403);
    const listed = await call(`${theirs}/alert-events`, { token: other.access_token });
    expect(listed.json.alert_events).toEqual([]);
  });
});
