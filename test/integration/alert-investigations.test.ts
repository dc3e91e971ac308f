// The first "Done when", end to end over the real surfaces: an Alertmanager webhook (the
// payload Alertmanager's webhook notifier sends) posted to an alert source's public receive URL
// opens an investigation whose rule names a playbook; the built-in runner works the playbook with
// the alert's labels, fingerprint and status as its inputs, calling a real MCP server (the MCP
// SDK's) through the gateway, and writes what it learned to the Brain, where a Brain search over
// the REST API finds it. The rule's notification channels hear of it: a webhook endpoint named by
// the rule (subscribed to nothing of the kind) and an e-mail address, through a real SMTP server,
// when the investigation opens and when its run ends. The thread's alerts are listed by thread.
// Rules naming a playbook that is not usable, or channels that are not the organization's, are
// refused with 422 at the field; a playbook changed later so that the alert no longer fits it
// leaves the thread without a run, and the alert event and the announcement say why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertStatus } from '../../gen/mindgate/agents/v1/alerts_pb.js';
import { alertmanagerNotification } from '../support/alertmanager.ts';
import { startMcpBackend, type McpBackend } from '../support/gateway-backends.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { isRunFinished, restClient, type Json } from '../support/rest.ts';
import { createSmtpInbox, readable, type SmtpListener } from '../support/smtp-inbox.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

let smtp: SmtpListener;
const inbox = createSmtpInbox();
let platform: TestPlatform;
let backend: McpBackend;
let receiver: WebhookReceiver;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
let endpointId: string;
let playbookId: string;
let source: { url: string; secret: string };
const call = restClient(() => api);
const path = (p: string) => `/organizations/${org}${p}`;
const t = () => owner.access_token;

/** An Alertmanager notification of one firing alert on payments. */
const notification = (fingerprint: string, alertname: string) =>
  alertmanagerNotification({
    groupKey: '{}:{service="payments"}',
    alerts: [
      {
        fingerprint,
        labels: { alertname, service: 'payments', severity: 'critical', instance: 'payments-2:9090' },
        annotations: { summary: `${alertname} on payments`, runbook_url: 'https://runbooks.example/payments' },
        startsAt: '2026-04-14T08:12:00.000Z',
        generatorURL: 'http://prometheus:9090/graph?g0.expr=rate',
      },
    ],
    groupLabels: { service: 'payments' },
    commonLabels: { service: 'payments', severity: 'critical' },
  });

const playbook = (name: string) => ({
  name,
  instructions: 'Check recent deploys of the alerting service and record what was found.',
  inputs: [
    { name: 'labels', type: 'object', required: true },
    { name: 'fingerprint', type: 'string', required: true },
    { name: 'status', type: 'string' },
    { name: 'team', type: 'string', required: true },
  ],
  tools: ['deploys/echo'],
  namespaces: ['knowledge'],
  steps: [
    {
      id: 'deploys',
      kind: 'tool_call',
      server: 'deploys',
      tool: 'echo',
      arguments: { text: 'deploy 7731 of {{ inputs.labels.service }} at 08:05 changed the card-vault timeout' },
    },
    {
      id: 'learned',
      kind: 'brain_write',
      namespace: 'knowledge',
      key: 'incidents/{{ inputs.fingerprint }}',
      content:
        '{{ inputs.labels.alertname }} on {{ inputs.labels.service }} ({{ inputs.status }}, team {{ inputs.team }}): {{ steps.deploys.result.content[0].text }}',
    },
  ],
  output: 'Found: {{ steps.deploys.result.content[0].text }}',
});

beforeAll(async () => {
  smtp = await inbox.listen();
  platform = await startOAuthTestPlatform({
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Mindgate <alerts@mindgate.test>',
    GATEWAY_REGISTRY_POLL_MS: '100',
    GATEWAY_ALLOW_PRIVATE_BACKENDS: 'true',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    RUNNER_POLL_MS: '50',
    RUNNER_LEASE_SECONDS: '5',
  });
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  backend = await startMcpBackend({ mode: 'json', name: 'deploys' });
  expect((await call(path('/mcp-servers'), { token: t(), body: { name: 'deploys', url: backend.url } })).status).toBe(201);
  receiver = await startWebhookReceiver();
  // Subscribed to nothing alerts publish: it hears of investigations only because the rule names it.
  const endpoint = await call(path('/webhook-endpoints'), { token: t(), body: { url: receiver.url, event_types: ['member.*'] } });
  expect(endpoint.status, endpoint.text).toBe(201);
  endpointId = endpoint.json.endpoint.id;
  receiver.secrets.push(endpoint.json.secret);
  const created = await call(path('/playbooks'), { token: t(), body: { document: playbook('Payments alert'), publish: true } });
  expect(created.status, created.text).toBe(201);
  playbookId = created.json.id;
  const src = await call(path('/alert-sources'), { token: t(), body: { name: 'Alertmanager', format: 'alertmanager' } });
  expect(src.status, src.text).toBe(201);
  source = { url: src.json.source.receive_url, secret: src.json.secret };
}, 240_000);

afterAll(async () => {
  await receiver?.close();
  await platform?.stop();
  await backend?.close();
  await smtp?.close();
});

const ruleBody = (action: Json, notifications: Json = {}) => ({
  name: 'Payments critical',
  severities: ['critical'],
  matchers: [{ label: 'service', op: '=', value: 'payments' }],
  action: { type: 'investigate', ...action },
  notifications,
});

describe('alert rules that name a playbook, and their channels', () => {
  it('refuses a playbook or a channel the rule cannot use with 422 at the field', async () => {
    const unpublished = await call(path('/playbooks'), { token: t(), body: { document: playbook('Draft') } });
    const refusals: Array<[Json, Json, Array<string | number>]> = [
      [{ playbook: { id: 'pbk_nosuchplaybook1' } }, {}, ['body', 'action', 'playbook', 'id']],
      [{ playbook: { id: unpublished.json.id } }, {}, ['body', 'action', 'playbook', 'version']],
      [{ playbook: { id: playbookId, version: 9 } }, {}, ['body', 'action', 'playbook', 'version']],
      [{ playbook: { id: playbookId } }, {}, ['body', 'action', 'playbook', 'inputs', 'team']],
      [{ playbook: { id: playbookId, inputs: { team: 'x', nope: 1 } } }, {}, ['body', 'action', 'playbook', 'inputs', 'nope']],
      [{ instructions: 'Do it', playbook: { id: playbookId, inputs: { team: 'x' } } }, {}, ['body', 'action', 'instructions']],
      [{}, { emails: ['not an address'] }, ['body', 'notifications', 'emails', 0]],
      [{}, { webhook_endpoint_ids: ['whe_00000000000000000000'] }, ['body', 'notifications', 'webhook_endpoint_ids', 0]],
    ];
    for (const [action, notifications, loc] of refusals) {
      const res = await call(path('/alert-rules'), { token: t(), body: ruleBody(action, notifications) });
      expect(res.status, JSON.stringify(action)).toBe(422);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.json.errors[0].loc).toEqual(loc);
    }
    // Another organization's playbook is not one of this organization's.
    const theirs = await call(`/organizations/${other.organizationId}/playbooks`, {
      token: other.access_token,
      body: { document: playbook('Theirs'), publish: true },
    });
    const foreign = await call(path('/alert-rules'), {
      token: t(),
      body: ruleBody({ playbook: { id: theirs.json.id, inputs: { team: 'x' } } }),
    });
    expect(foreign.json.errors[0].loc).toEqual(['body', 'action', 'playbook', 'id']);
  });

  it('opens an investigation the built-in runner works through the playbook, writing to the Brain', async () => {
    const rule = await call(path('/alert-rules'), {
      token: t(),
      body: ruleBody(
        { playbook: { id: playbookId, inputs: { team: 'payments-oncall' } }, timeout_seconds: 600 },
        { emails: ['oncall@payments.example'], webhook_endpoint_ids: [endpointId] },
      ),
    });
    expect(rule.status, rule.text).toBe(201);
    expect(rule.json.action.playbook).toEqual({
      id: playbookId,
      version: null,
      inputs: { team: 'payments-oncall' },
      brain_feedback: false,
    });
    expect(rule.json.notifications).toEqual({ emails: ['oncall@payments.example'], webhook_endpoint_ids: [endpointId] });

    // The monitoring system posts to the public URL with the source's secret, as Alertmanager does.
    const posted = await fetch(source.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${source.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(notification('4c1e9a77d0b2f3aa', 'PaymentErrors')),
    });
    expect(posted.status).toBe(200);
    const receipt = await posted.json();
    expect(receipt).toMatchObject({ received: 1, opened: 1, investigations_opened: 1 });
    const event = (await call(path(`/alert-events/${receipt.alert_event_ids[0]}`), { token: t() })).json;
    expect(event).toMatchObject({ rule_id: rule.json.id, note: '' });

    const run = await until(async () => (await call(path(`/runs/${event.run_id}`), { token: t() })).json, isRunFinished, {
      what: 'the run to end',
      timeoutMs: 60_000,
    });
    expect(run, JSON.stringify(run)).toMatchObject({
      status: 'succeeded',
      executor: 'playbook',
      thread_id: event.thread_id,
      playbook_id: playbookId,
      playbook_version: 1,
      output: 'Found: deploy 7731 of payments at 08:05 changed the card-vault timeout',
    });
    expect(run.inputs).toEqual({
      labels: { alertname: 'PaymentErrors', service: 'payments', severity: 'critical', instance: 'payments-2:9090' },
      fingerprint: '4c1e9a77d0b2f3aa',
      status: 'firing',
      team: 'payments-oncall',
    });
    // The MCP server was called through the gateway, with the alert's label in the arguments.
    const steps = (await call(path(`/runs/${run.id}/steps`), { token: t() })).json.steps as Json[];
    expect(steps.map((s) => [s.kind, s.name, s.ok])).toEqual([
      ['tool_call', 'deploys/echo', true],
      ['brain_write', 'brain_write', true],
    ]);
    expect(JSON.stringify(steps[0].arguments)).toContain('deploy 7731 of payments');
    expect(backend.seen.some((s) => s.method === 'POST')).toBe(true);

    // What it learned is in the Brain: a search finds it.
    const found = await call(path(`/memories/search?q=${encodeURIComponent('payments card-vault timeout deploy')}&namespace=knowledge`), {
      token: t(),
    });
    expect(found.status, found.text).toBe(200);
    const memory = found.json.results.find((r: Json) => r.memory.key === 'incidents/4c1e9a77d0b2f3aa')?.memory;
    expect(memory?.content).toBe(
      'PaymentErrors on payments (firing, team payments-oncall): deploy 7731 of payments at 08:05 changed the card-vault timeout',
    );
  }, 120_000);

  it("tells the rule's webhook endpoint and address when the investigation opens and when its run ends", async () => {
    const events = await receiver.waitFor(2, (w) => w.verified?.type.startsWith('alert.investigation_') ?? false, 60_000);
    const byType = Object.fromEntries(events.map((w) => [w.verified!.type, w.verified!.data]));
    expect(byType['alert.investigation_opened']).toMatchObject({
      rule_name: 'Payments critical',
      playbook_id: playbookId,
      playbook_version: 1,
      note: '',
      alert: { fingerprint: '4c1e9a77d0b2f3aa', status: 'firing', labels: { service: 'payments' } },
    });
    const finished = byType['alert.investigation_finished'] as Json;
    expect(finished).toMatchObject({ outcome: 'succeeded', thread_id: byType['alert.investigation_opened'].thread_id });
    expect(finished.run.output).toContain('deploy 7731');
    // Nothing else reached it: it subscribes to member.* only.
    expect(receiver.received.every((w) => w.verified?.type.startsWith('alert.investigation_'))).toBe(true);

    const mails = await until(
      async () => inbox.mails.filter((m) => m.to.includes('oncall@payments.example')),
      (m) => m.length >= 2,
      { what: 'the two e-mails', timeoutMs: 60_000 },
    );
    const subjects = mails.map((m) => /^Subject: (.*)$/m.exec(readable(m))?.[1] ?? '');
    expect(subjects.some((s) => s.startsWith('Investigation opened: [critical] PaymentErrors on payments'))).toBe(true);
    expect(subjects.some((s) => s.startsWith('Investigation succeeded: rule Payments critical'))).toBe(true);
    expect(mails.map(readable).join('\n')).toContain(`/app/investigations/${finished.thread_id}`);
  }, 90_000);

  it('opens the thread without a run, and says why, when the playbook changed so that the alert no longer fits it', async () => {
    const created = await call(path('/playbooks'), { token: t(), body: { document: playbook('Ledger alert'), publish: true } });
    const rule = await call(path('/alert-rules'), {
      token: t(),
      body: {
        ...ruleBody({ playbook: { id: created.json.id, inputs: { team: 'ledger' } } }, { webhook_endpoint_ids: [endpointId] }),
        name: 'Ledger critical',
        matchers: [{ label: 'service', op: '=', value: 'ledger' }],
      },
    });
    expect(rule.status, rule.text).toBe(201);
    // Version 2, published later, needs an input neither the alert nor the rule gives.
    const v2 = playbook('Ledger alert');
    v2.inputs.push({ name: 'region', type: 'string', required: true });
    const updated = await call(path(`/playbooks/${created.json.id}`), { token: t(), method: 'PUT', body: { document: v2, publish: true } });
    expect(updated.status, updated.text).toBe(200);
    const body = notification('77aa00ledger', 'LedgerLag');
    body.alerts[0].labels.service = 'ledger';
    body.groupKey = '{}:{service="ledger"}';
    const res = await call(new URL(source.url).pathname, { body, headers: { authorization: `Bearer ${source.secret}` } });
    expect(res.json).toMatchObject({ opened: 1, investigations_opened: 1 });
    const event = (await call(path(`/alert-events/${res.json.alert_event_ids[0]}`), { token: t() })).json;
    expect(event).toMatchObject({ rule_id: rule.json.id, run_id: null, note: 'no run queued: inputs.region: is required' });
    expect((await call(path(`/runs?thread_id=${event.thread_id}`), { token: t() })).json.runs).toEqual([]);
    const [opened] = await receiver.waitFor(
      1,
      (w) => w.verified?.type === 'alert.investigation_opened' && w.verified.data.rule_id === rule.json.id,
    );
    expect(opened.verified!.data).toMatchObject({ thread_id: event.thread_id, run_id: null, note: event.note });
  });

  it("lists a thread's alerts by thread, over REST and RPC", async () => {
    const listed = (await call(path(`/alert-events?source_id=${new URL(source.url).pathname.split('/')[2]}`), { token: t() })).json;
    const first = listed.alert_events.find((e: Json) => e.fingerprint === '4c1e9a77d0b2f3aa');
    // A second alert of the group joins the investigation.
    const joined = await call(new URL(source.url).pathname, {
      body: notification('9f00aa11bb22cc33', 'PaymentLatency'),
      headers: { authorization: `Bearer ${source.secret}` },
    });
    expect(joined.json).toMatchObject({ opened: 1, investigations_opened: 0 });
    const linked = await call(path(`/alert-events?thread_id=${first.thread_id}`), { token: t() });
    expect(linked.status).toBe(200);
    expect(linked.json.alert_events.map((e: Json) => e.fingerprint).sort()).toEqual(['4c1e9a77d0b2f3aa', '9f00aa11bb22cc33']);
    const paged = await call(path(`/alert-events?thread_id=${first.thread_id}&page_size=1`), { token: t() });
    expect(paged.json.alert_events).toHaveLength(1);
    expect(paged.json.next_page_token).toBeTruthy();
    const thread = await call(path('/threads'), { token: t(), body: { title: 'No alerts here' } });
    expect((await call(path(`/alert-events?thread_id=${thread.json.id}`), { token: t() })).json.alert_events).toEqual([]);
    const bad = await call(path('/alert-events?thread_id=nope'), { token: t() });
    expect(bad.status).toBe(422);
    expect(bad.json.errors[0].loc).toEqual(['query', 'thread_id']);
    // Another organization's view of the thread lists none of them.
    const theirs = await call(`/organizations/${other.organizationId}/alert-events?thread_id=${first.thread_id}`, {
      token: other.access_token,
    });
    expect(theirs.json.alert_events).toEqual([]);
    const rpc = await platform.ctx.clients.alerts.listAlertEvents({
      organizationId: org,
      threadId: first.thread_id,
      status: AlertStatus.FIRING,
    });
    expect(rpc.alertEvents).toHaveLength(2);
  });
});
