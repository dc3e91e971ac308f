// API key scopes and teams over the real REST API: a key does what its scopes allow and nothing
// more, keys from before scopes read only, a key may name a team of its organization.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
const call = restClient(() => api);
const keys = () => `/organizations/${org}/api-keys`;

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('API key scopes', () => {
  it('gives new keys the read scope unless told, and lets only an admin key manage teams', async () => {
    const plain = await call(keys(), { token: owner.access_token, body: { name: 'plain' } });
    expect(plain.json.api_key).toMatchObject({ scopes: ['read'], team_id: null });
    expect((await call(`/organizations/${org}/teams`, { apiKey: plain.json.secret })).status).toBe(200);
    const refused = await call(`/organizations/${org}/teams`, { apiKey: plain.json.secret, body: { name: 'by-key' } });
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toBe('this needs an API key with the admin scope');
    const adminKey = await call(keys(), { token: owner.access_token, body: { name: 'sync', scopes: ['admin'] } });
    expect(adminKey.json.api_key.scopes).toEqual(['admin']);
    const team = await call(`/organizations/${org}/teams`, { apiKey: adminKey.json.secret, body: { name: 'by-key' } });
    expect(team.status).toBe(201);
    // Credentials are never minted by a key, whatever its scopes.
    expect((await call(keys(), { apiKey: adminKey.json.secret, body: { name: 'more' } })).status).toBe(403);
  });

  it('reads keys from before scopes as read-only', async () => {
    const created = await call(keys(), { token: owner.access_token, body: { name: 'old', scopes: ['admin'] } });
    const stored = platform.ctx.stores.records.collection<{ _id: string; scopes?: string[] }>('api_keys');
    const record = (await stored.get(created.json.api_key.id))!;
    delete record.scopes;
    await stored.put(record);
    expect((await call(`/organizations/${org}/teams`, { apiKey: created.json.secret, body: { name: 'old-key' } })).status).toBe(403);
    const listed = await call(`${keys()}?page_size=100`, { token: owner.access_token });
    expect(listed.json.api_keys.find((k: { id: string }) => k.id === created.json.api_key.id).scopes).toEqual(['read']);
  });

  it('binds a key to a team of its organization only, and refuses unknown scopes', async () => {
    const team = await call(`/organizations/${org}/teams`, { token: owner.access_token, body: { name: 'Keyed' } });
    const bound = await call(keys(), { token: owner.access_token, body: { name: 'team key', team_id: team.json.id } });
    expect(bound.json.api_key.team_id).toBe(team.json.id);
    const foreignTeam = await call(`/organizations/${other.organizationId}/teams`, { token: other.access_token, body: { name: 'Theirs' } });
    const foreign = await call(keys(), { token: owner.access_token, body: { name: 'x', team_id: foreignTeam.json.id } });
    expect(foreign.status).toBe(404);
    for (const body of [
      { name: 'x', scopes: ['root'] },
      { name: 'x', scopes: [] },
      { name: 'x', team_id: 'nope' },
    ]) {
      expect((await call(keys(), { token: owner.access_token, body })).status, JSON.stringify(body)).toBe(422);
    }
  });
});
