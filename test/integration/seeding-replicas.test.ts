// A seeding run's progress streams from any edge replica, not only the one whose brain works it:
// the run is started on the test platform (its in-process brain works it), and its SSE stream is
// read from a second edge process (`node edge/main.ts`) that reaches the same services over gRPC.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformServicesEnv, startEdgeProcess, type EdgeProcess } from '../support/edge-process.ts';
import { obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';

const token = 'a-shared-internal-token-of-at-least-32-chars';
let platform: TestPlatform;
let replica: EdgeProcess;
let org: string;
let apiKey: string;

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ INTERNAL_TOKEN: token, SEEDING_POLL_MS: '50' });
  const api = platform.ctx.config.publicUrls.api;
  const owner = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  const key = await restClient(() => api)(`/organizations/${org}/api-keys`, {
    token: owner.access_token,
    body: { name: 'seeder', scopes: ['write'] },
  });
  apiKey = key.json.secret;
  replica = await startEdgeProcess(platformServicesEnv(platform, token));
}, 180_000);

afterAll(async () => {
  await replica?.stop();
  await platform?.stop();
});

describe('seeding progress across replicas', () => {
  it('streams a run worked by one replica from another', async () => {
    const text = [
      '# Ledger',
      '',
      '## Backups',
      '',
      'Ledger backups run nightly.',
      '',
      '## Restore',
      '',
      'Restores need two approvals.',
    ].join('\n');
    const res = await fetch(`${platform.ctx.config.publicUrls.api}/organizations/${org}/seeding-runs?filename=ledger.md`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'text/markdown' },
      body: text,
    });
    expect(res.status).toBe(201);
    const run = (await res.json()) as { id: string };
    const stream = await fetch(`${replica.urls.api}/organizations/${org}/seeding-runs/${run.id}/events`, {
      headers: { 'x-api-key': apiKey, accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const events = (await stream.text()).split('\n\n').filter((b) => b.startsWith('event:'));
    const items = events.filter((b) => b.startsWith('event: item')).map((b) => JSON.parse(b.split('data: ')[1]).key);
    expect(items).toEqual(['ledger/backups', 'ledger/restore']);
    expect(events[events.length - 1]).toContain('"status":"succeeded"');
  });
});
