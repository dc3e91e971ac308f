// An alert rule's run goes through the runs' own code, so the plan's runs_per_month applies: with
// a Starter plan of 1 run a month that the organization has used, a matching alert still opens its
// investigation thread, queues no run, and the alert event's note says why.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_PLANS_FILE } from '../../services/billing/catalogue.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';

const plansFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-plans-')), 'plans.yaml');
fs.writeFileSync(plansFile, fs.readFileSync(DEFAULT_PLANS_FILE, 'utf8').replace('runs_per_month: 100', 'runs_per_month: 1'));

let platform: TestPlatform;
let owner: ObtainedToken;
let api: string;
const call = restClient(() => api);

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ BILLING_PLANS_FILE: plansFile, TRIAL_DAYS: '0' });
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

it("opens the thread without a run past the plan's runs_per_month, and says why", async () => {
  const token = owner.access_token;
  const path = (p: string) => `/organizations/${owner.organizationId}${p}`;
  const thread = await call(path('/threads'), { token, body: { title: 'Uses the month' } });
  expect((await call(path(`/threads/${thread.json.id}/runs`), { token, body: { executor: 'external' } })).status).toBe(201);
  const source = (await call(path('/alert-sources'), { token, body: { name: 'am', format: 'generic' } })).json;
  const rule = await call(path('/alert-rules'), { token, body: { name: 'all', action: { type: 'investigate', executor: 'external' } } });
  expect(rule.status, rule.text).toBe(201);
  const received = await call(new URL(source.source.receive_url).pathname, {
    body: { title: 'Disk full on db-1', severity: 'critical' },
    headers: { authorization: `Bearer ${source.secret}` },
  });
  expect(received.json).toMatchObject({ opened: 1, investigations_opened: 1 });
  const event = (await call(path(`/alert-events/${received.json.alert_event_ids[0]}`), { token })).json;
  expect(event).toMatchObject({ run_id: null, rule_id: rule.json.id });
  expect(event.thread_id).toBeTruthy();
  expect(event.note).toContain('the Starter plan allows 1 runs a month');
  expect((await call(path(`/runs?thread_id=${event.thread_id}`), { token })).json.runs).toEqual([]);
});
