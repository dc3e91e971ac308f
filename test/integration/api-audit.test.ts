// The audit log over the real REST API: changes and refused attempts recorded with who, what,
// target, when, from where and how they ended; listed newest first with filters and pages;
// exported as JSON Lines; visible only to owners and admins of the organization.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordDoc } from '../../services/common/storage/records/interface.ts';
import { joinAs, userIdOf, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
let viewer: TestMember;
let keyId: string;
let keySecret: string;
let startedAt: string;
const call = restClient(() => api);
const events = (query = '') => `/organizations/${org}/audit-events${query}`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  viewer = await joinAs(platform, org, 'viewer');
  startedAt = new Date().toISOString();
  const t = owner.access_token;
  const ua = { 'user-agent': 'audit-test/1.0' };
  const created = await call(`/organizations/${org}/api-keys`, { token: t, body: { name: 'ci' }, headers: ua });
  keyId = created.json.api_key.id;
  keySecret = created.json.secret;
  await call(`/organizations/${org}/api-keys/${keyId}/rotate`, { token: t, method: 'POST', headers: ua });
  await call(`/organizations/${org}/members/${viewer.userId}`, { token: viewer.access_token, method: 'PATCH', body: { role: 'admin' } });
  await call(`/organizations/${org}/api-keys`, { token: t, body: { name: '' } });
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

describe('what is recorded', () => {
  it('records each change and each refused attempt, newest first, with who, what, where and how it ended', async () => {
    const r = await call(events(), { token: owner.access_token });
    expect(r.status).toBe(200);
    const list = r.json.events as Json[];
    expect(list.map((e) => [e.action, e.outcome, e.status])).toEqual([
      ['createApiKey', 'failed', 422],
      ['updateMember', 'denied', 403],
      ['rotateApiKey', 'success', 200],
      ['createApiKey', 'success', 201],
      // The viewer's joining is outside the REST API (joinAs adds the member through the service);
      // the owner's sign-up, which created the organization, is recorded by onboarding.
      ['signUp', 'success', 200],
    ]);
    expect(list[3]).toMatchObject({
      actor: { kind: 'user', id: userIdOf(owner) },
      target: `/organizations/${org}/api-keys`,
      ip: '127.0.0.1',
      user_agent: 'audit-test/1.0',
      request_id: expect.any(String),
    });
    expect(list[2].target).toBe(`/organizations/${org}/api-keys/${keyId}/rotate`);
    expect(list[1].actor).toEqual({ kind: 'user', id: viewer.userId });
    expect(Date.parse(list[3].created_at)).toBeGreaterThanOrEqual(Date.parse(startedAt));
    expect(r.text).not.toContain(keySecret);
  });

  it('records an API key as the actor, and never reads as changes', async () => {
    const denied = await call(`/organizations/${org}/api-keys`, { apiKey: (await rotated()).secret, body: { name: 'x' } });
    expect(denied.status).toBe(403);
    await call(`/organizations/${org}/members`, { token: owner.access_token });
    const r = await call(events('?page_size=1'), { token: owner.access_token });
    expect(r.json.events[0]).toMatchObject({ action: 'createApiKey', outcome: 'denied', actor: { kind: 'api_key', id: keyId } });
  });

  it('keeps events for the retention of 365 days, then lets the store drop them', async () => {
    const stored = await platform.ctx.stores.records
      .collection<RecordDoc & { organizationId: string; createdAt: number }>('audit_events')
      .find({ organizationId: org });
    expect(stored.length).toBeGreaterThan(0);
    for (const e of stored) expect(e.expiresAt! - e.createdAt).toBe(365 * 86_400_000);
  });
});

async function rotated(): Promise<{ secret: string }> {
  const r = await call(`/organizations/${org}/api-keys/${keyId}/rotate`, { token: owner.access_token, method: 'POST' });
  return { secret: r.json.secret };
}

describe('listing and export', () => {
  it('filters by action, outcome, actor and time, and pages', async () => {
    const t = owner.access_token;
    const created = (await call(events('?action=createApiKey'), { token: t })).json.events as Json[];
    expect(created.every((e) => e.action === 'createApiKey')).toBe(true);
    expect(created.length).toBeGreaterThanOrEqual(2);
    const denied = (await call(events('?outcome=denied'), { token: t })).json.events as Json[];
    expect(denied.length).toBeGreaterThan(0);
    expect(denied.every((e) => e.outcome === 'denied')).toBe(true);
    const byViewer = (await call(events(`?actor_id=${viewer.userId}`), { token: t })).json.events as Json[];
    expect(byViewer.map((e) => e.action)).toEqual(['updateMember']);
    expect((await call(events('?until=2000-01-01T00:00:00Z'), { token: t })).json.events).toEqual([]);
    const all = (await call(events(`?since=${encodeURIComponent(startedAt)}`), { token: t })).json.events as Json[];
    const seen: string[] = [];
    let token: string | null = '';
    while (token !== null) {
      const page: Json = (
        await call(events(`?since=${encodeURIComponent(startedAt)}&page_size=2${token ? `&page_token=${token}` : ''}`), { token: t })
      ).json;
      expect(page.events.length).toBeLessThanOrEqual(2);
      seen.push(...page.events.map((e: Json) => e.id));
      token = page.next_page_token;
    }
    expect(seen).toEqual(all.map((e) => e.id));
  });

  it('exports the same events as JSON Lines', async () => {
    const res = await fetch(`${api}${events('/export')}`, { headers: { authorization: `Bearer ${owner.access_token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/jsonl; charset=utf-8');
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    const listed = (await call(events('?page_size=1000'), { token: owner.access_token })).json.events as Json[];
    expect(lines).toEqual(listed);
  });

  it('shows the log only to owners and admins of the organization', async () => {
    const member = await joinAs(platform, org, 'member');
    expect((await call(events(), { token: member.access_token })).status).toBe(403);
    expect((await call(events(), { token: other.access_token })).status).toBe(403);
    const theirs = (await call(`/organizations/${other.organizationId}/audit-events`, { token: other.access_token })).json.events as Json[];
    expect(theirs.map((e) => [e.action, e.actor.id])).toEqual([['signUp', userIdOf(other)]]);
  });

  it('answers malformed filters with 422 naming the parameter', async () => {
    for (const [query, field] of [
      ['?since=yesterday', 'since'],
      ['?outcome=maybe', 'outcome'],
      ['?action=drop%20table', 'action'],
      ['?page_size=1001', 'page_size'],
      ['?page_token=bm9wZQ', 'page_token'],
    ] as const) {
      const r = await call(events(query), { token: owner.access_token });
      expect(r.status, query).toBe(422);
      expect(r.json.errors[0].loc).toEqual(['query', field]);
    }
  });
});
