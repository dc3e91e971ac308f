// The scheduled jobs of the Agents API over real HTTP: created (Idempotency-Key), listed a page at a
// time, read with an ETag and changed with If-Match, paused and resumed, triggered now (the run it
// starts shown with the execution), deleted; an invalid cron expression or time zone is a 422
// naming the field; viewers read but may not change; a write key manages them; organizations are
// kept apart; every change is in the audit log. Playbook and seeding targets are taken, and their
// refusals answered at the field of the body's flat target.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAs, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let viewer: TestMember;
let org: string;
const call = restClient(() => api);
const path = (p: string) => `/organizations/${org}${p}`;

const body = (fields: Json = {}) => ({
  name: 'Nightly check',
  schedule: '30 2 * * *',
  time_zone: 'Europe/Berlin',
  target: { type: 'run', title_template: 'Nightly check {occurrence}', message: 'Anything overnight?', executor: 'external' },
  ...fields,
});

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  viewer = await joinAs(platform, org, 'viewer');
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('scheduled jobs on the Agents API', () => {
  it('creates a job once per Idempotency-Key, with its next occurrence and an ETag', async () => {
    const headers = { 'idempotency-key': 'job-create-0001' };
    const created = await call(path('/jobs'), { token: owner.access_token, body: body(), headers });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect(created.json).toMatchObject({
      name: 'Nightly check',
      schedule: '30 2 * * *',
      time_zone: 'Europe/Berlin',
      enabled: true,
      missed_policy: 'skip',
      target: { type: 'run', title_template: 'Nightly check {occurrence}', executor: 'external', timeout_seconds: 3600 },
      state: { consecutive_failures: 0, last_error: '', backoff_skips: 0, last_execution: null },
    });
    expect(created.json.id).toMatch(/^job_/);
    expect(Date.parse(created.json.state.next_fire_at)).toBeGreaterThan(Date.now());
    expect(created.headers.get('etag')).toBe('"1"');
    const replay = await call(path('/jobs'), { token: owner.access_token, body: body(), headers });
    expect(replay.json.id).toBe(created.json.id);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('answers an invalid cron expression or time zone with a 422 naming the field', async () => {
    const bad = async (fields: Json) => {
      const r = await call(path('/jobs'), { token: owner.access_token, body: body(fields) });
      expect(r.status).toBe(422);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
      return r.json.errors as { loc: string[]; msg: string }[];
    };
    const cron = await bad({ schedule: '61 * * * *' });
    expect(cron).toEqual([
      { loc: ['body', 'schedule'], msg: expect.stringContaining('Invalid value for minute: 61'), type: 'value_error' },
    ]);
    expect((await bad({ schedule: 'every day' }))[0].loc).toEqual(['body', 'schedule']);
    const zone = await bad({ time_zone: 'Europe/Atlantis' });
    expect(zone).toEqual([{ loc: ['body', 'time_zone'], msg: expect.stringContaining('not an IANA time zone'), type: 'value_error' }]);
    expect((await bad({ missed_policy: 'sometimes' }))[0].loc).toEqual(['body', 'missed_policy']);
    expect((await bad({ target: { type: 'seed' } }))[0].loc[0]).toBe('body');
  });

  it('takes playbook and seeding targets, and answers their refusals at the field of the flat target', async () => {
    const document = {
      name: 'Payments check',
      instructions: 'Check payments.',
      inputs: [{ name: 'service', type: 'string', required: true }],
      steps: [{ id: 'note', kind: 'brain_write', namespace: 'episodes', key: 'k', content: 'c' }],
      namespaces: ['episodes'],
    };
    const playbook = await call(path('/playbooks'), { token: owner.access_token, body: { document, publish: true } });
    expect(playbook.status).toBe(201);
    const target = { type: 'playbook', playbook_id: playbook.json.id, inputs: { service: 'payments' } };
    const created = await call(path('/jobs'), { token: owner.access_token, body: body({ name: 'Payments', target }) });
    expect(created.status, created.text).toBe(201);
    expect(created.json.target).toEqual({
      ...target,
      version: null,
      title_template: '',
      executor: 'llm',
      timeout_seconds: 3600,
      brain_feedback: false,
    });
    const triggered = await call(path(`/jobs/${created.json.id}/trigger`), { token: owner.access_token, body: {} });
    expect(triggered.json).toMatchObject({
      outcome: 'succeeded',
      seeding_run_id: null,
      run: { executor: 'playbook', playbook_version: 1 },
    });
    const refusals: Array<[Json, Array<string | number>]> = [
      [{ ...target, inputs: {} }, ['body', 'target', 'inputs', 'service']],
      [{ ...target, version: 4 }, ['body', 'target', 'version']],
      [{ ...target, playbook_id: 'pbk_nosuchplaybook0' }, ['body', 'target', 'playbook_id']],
      [{ type: 'seeding', url: 'https://docs.example.com/runbook' }, ['body', 'target', 'url']],
      [{ type: 'seeding', url: 'https://docs.example.com/runbook', key_prefix: 'bad prefix' }, ['body', 'target', 'key_prefix']],
      [{ type: 'bogus' }, ['body', 'target', 'type']],
    ];
    for (const [refused, loc] of refusals) {
      const res = await call(path('/jobs'), { token: owner.access_token, body: body({ target: refused }) });
      expect(res.status, JSON.stringify(refused)).toBe(422);
      expect(res.json.errors[0].loc, res.text).toEqual(loc);
    }
    expect((await call(path(`/jobs/${created.json.id}`), { token: owner.access_token, method: 'DELETE' })).status).toBe(204);
  });

  it('lists jobs a page at a time, newest first', async () => {
    for (const name of ['Weekly report', 'Hourly sweep']) {
      expect((await call(path('/jobs'), { token: owner.access_token, body: body({ name, schedule: '0 * * * *' }) })).status).toBe(201);
    }
    const first = await call(path('/jobs?page_size=2'), { token: viewer.access_token });
    expect(first.status).toBe(200);
    expect(first.json.jobs.map((j: Json) => j.name)).toEqual(['Hourly sweep', 'Weekly report']);
    const second = await call(path(`/jobs?page_size=2&page_token=${first.json.next_page_token}`), { token: viewer.access_token });
    expect(second.json.jobs.map((j: Json) => j.name)).toEqual(['Nightly check']);
    expect(second.json.next_page_token).toBeNull();
  });

  it('changes a job only at the ETag given, and reschedules it from now on a new schedule', async () => {
    const job = (await call(path('/jobs'), { token: owner.access_token, body: body({ name: 'Changing' }) })).json;
    const read = await call(path(`/jobs/${job.id}`), { token: viewer.access_token });
    expect(read.status).toBe(200);
    const etag = read.headers.get('etag')!;
    const changed = await call(path(`/jobs/${job.id}`), {
      token: owner.access_token,
      method: 'PATCH',
      headers: { 'if-match': etag },
      body: { schedule: '0 6 * * 1-5', time_zone: 'America/New_York', missed_policy: 'run_once' },
    });
    expect(changed.status, JSON.stringify(changed.json)).toBe(200);
    expect(changed.json).toMatchObject({
      schedule: '0 6 * * 1-5',
      time_zone: 'America/New_York',
      missed_policy: 'run_once',
      name: 'Changing',
    });
    // 06:00 in New York is 10:00 or 11:00 UTC.
    expect(new Date(changed.json.state.next_fire_at).getUTCHours()).toBeOneOf([10, 11]);
    const stale = await call(path(`/jobs/${job.id}`), {
      token: owner.access_token,
      method: 'PATCH',
      headers: { 'if-match': etag },
      body: { name: 'x' },
    });
    expect(stale.status).toBe(412);
    const badZone = await call(path(`/jobs/${job.id}`), {
      token: owner.access_token,
      method: 'PATCH',
      body: { time_zone: 'Nowhere/Land' },
    });
    expect([badZone.status, badZone.json.errors?.[0]?.loc]).toEqual([422, ['body', 'time_zone']]);
  });

  it('pauses, resumes, triggers now, and lists the executions with their runs', async () => {
    const job = (await call(path('/jobs'), { token: owner.access_token, body: body({ name: 'Triggered' }) })).json;
    const paused = await call(path(`/jobs/${job.id}/pause`), { token: owner.access_token, method: 'POST' });
    expect([paused.status, paused.json.enabled, paused.json.state.next_fire_at]).toEqual([200, false, null]);
    const fired = await call(path(`/jobs/${job.id}/trigger`), { token: owner.access_token, method: 'POST' });
    expect(fired.status, JSON.stringify(fired.json)).toBe(201);
    expect(fired.json).toMatchObject({
      trigger: 'manual',
      outcome: 'succeeded',
      occurrences: 1,
      run: { status: 'queued', executor: 'external' },
    });
    const thread = await call(path(`/threads/${fired.json.thread_id}`), { token: viewer.access_token });
    expect(thread.json.title).toMatch(/^Nightly check \d{4}-\d\d-\d\d \d\d:\d\d \+0[12]:00$/);
    const resumed = await call(path(`/jobs/${job.id}/resume`), { token: owner.access_token, method: 'POST' });
    expect([resumed.status, resumed.json.enabled]).toEqual([200, true]);
    expect(resumed.json.state.last_execution).toMatchObject({ id: fired.json.id, outcome: 'succeeded' });
    const executions = await call(path(`/jobs/${job.id}/executions`), { token: viewer.access_token });
    expect(executions.status).toBe(200);
    expect(executions.json.executions).toHaveLength(1);
    expect(executions.json.executions[0]).toMatchObject({ id: fired.json.id, run_id: fired.json.run_id, run: { id: fired.json.run_id } });
  });

  it('lets viewers read but not change, and a write key manage', async () => {
    const job = (await call(path('/jobs'), { token: owner.access_token, body: body({ name: 'Guarded' }) })).json;
    expect((await call(path('/jobs'), { token: viewer.access_token, body: body() })).status).toBe(403);
    expect((await call(path(`/jobs/${job.id}/trigger`), { token: viewer.access_token, method: 'POST' })).status).toBe(403);
    expect((await call(path(`/jobs/${job.id}`), { token: viewer.access_token, method: 'DELETE' })).status).toBe(403);
    const key = await call(path('/api-keys'), { token: owner.access_token, body: { name: 'scheduler', scopes: ['write'] } });
    const byKey = await call(path('/jobs'), { apiKey: key.json.secret, body: body({ name: 'By key' }) });
    expect(byKey.status).toBe(201);
    expect(byKey.json.created_by).toBe(key.json.api_key.id);
    expect((await call(path(`/jobs/${byKey.json.id}`), { apiKey: key.json.secret, method: 'DELETE' })).status).toBe(204);
    expect((await call(path(`/jobs/${byKey.json.id}`), { token: owner.access_token })).status).toBe(404);
  });

  it('keeps organizations apart: 403 on the other path, 404 for a foreign job under its own', async () => {
    const job = (await call(path('/jobs'), { token: owner.access_token, body: body({ name: 'Mine' }) })).json;
    expect((await call(path(`/jobs/${job.id}`), { token: other.access_token })).status).toBe(403);
    const theirs = `/organizations/${other.organizationId}/jobs/${job.id}`;
    expect((await call(theirs, { token: other.access_token })).status).toBe(404);
    expect((await call(`${theirs}/trigger`, { token: other.access_token, method: 'POST' })).status).toBe(404);
    expect((await call(`${theirs}/executions`, { token: other.access_token })).status).toBe(404);
    expect((await call(theirs, { token: other.access_token, method: 'DELETE' })).status).toBe(404);
    const listed = await call(`/organizations/${other.organizationId}/jobs`, { token: other.access_token });
    expect(listed.json.jobs).toEqual([]);
    expect((await call(path(`/jobs/${job.id}`), { token: owner.access_token })).status).toBe(200);
  });

  it('records the changes in the audit log', async () => {
    const events = async (query: string) =>
      (await call(path(`/audit-events?${query}`), { token: owner.access_token })).json.events as Json[];
    for (const action of ['createJob', 'updateJob', 'pauseJob', 'resumeJob', 'triggerJob', 'deleteJob']) {
      expect((await events(`action=${action}&outcome=success`)).length, action).toBeGreaterThan(0);
    }
    expect((await events('action=createJob&outcome=denied'))[0]).toMatchObject({ actor: { id: viewer.userId }, status: 403 });
  });
});
