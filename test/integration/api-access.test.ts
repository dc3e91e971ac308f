// The authorization matrix (edge/api/access.ts) as a table over real HTTP: every operation of
// the OpenAPI document, called by an owner, an admin, a member, a viewer and an API key of the
// organization, is refused with 403 exactly when the matrix says so. Calls name resources that do
// not exist or carry an empty body, so an allowed call ends in 404 or 422 and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS, type RoleName } from '../../edge/api/access.ts';
import { joinAs } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient, type Json } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let org: string;
const credentials = new Map<RoleName | 'api_key', { token?: string; apiKey?: string }>();
const call = restClient(() => api);

const FILL: Record<string, string> = {
  key_id: 'k0000000000000000',
  client_id: 'no-such-client',
  grant_id: 'no-such-grant',
  user_id: 'usr_nobody',
  invitation_id: 'inv_nothing',
  team_id: 'team_nothing',
};

interface Operation {
  operationId: string;
  method: string;
  path: string;
  access: { roles: RoleName[]; api_keys: boolean };
  hasBody: boolean;
}

let operations: Operation[] = [];

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  const owner = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  credentials.set('owner', { token: owner.access_token });
  for (const role of ['admin', 'member', 'viewer'] as const) {
    credentials.set(role, { token: (await joinAs(platform, org, role)).access_token });
  }
  const key = await call(`/organizations/${org}/api-keys`, { token: owner.access_token, body: { name: 'matrix' } });
  credentials.set('api_key', { apiKey: key.json.secret });
  const doc = (await call('/openapi.json')).json;
  operations = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op['x-mindgate-access'])
      .map(([method, op]) => ({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        access: op['x-mindgate-access'],
        hasBody: op.requestBody !== undefined,
      })),
  );
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

function concretePath(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, (_, name: string) => (name === 'organization_id' ? org : FILL[name]));
}

describe('the authorization matrix', () => {
  it('documents an entry for every operation of the matrix, and nothing else', () => {
    expect(operations.map((o) => o.operationId).sort()).toEqual(Object.keys(ACCESS).sort());
  });

  it('refuses exactly the callers the matrix leaves out, on every operation', async () => {
    const mismatches: string[] = [];
    for (const op of operations) {
      for (const [who, credential] of credentials) {
        const allowed = who === 'api_key' ? op.access.api_keys : op.access.roles.includes(who);
        const r = await call(concretePath(op.path), {
          ...credential,
          method: op.method,
          ...(op.hasBody ? { body: {} } : {}),
        });
        const refused = r.status === 403;
        if (refused === allowed || r.status >= 500 || r.status === 401) {
          mismatches.push(`${op.operationId} as ${who}: ${r.status} ${r.json.detail ?? ''}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('states the roles in each operation description', async () => {
    const doc = (await call('/openapi.json')).json;
    const op = doc.paths['/organizations/{organization_id}/api-keys'].post;
    expect(op['x-mindgate-access']).toEqual({ roles: ['owner', 'admin'], api_keys: false, self: false });
    expect(op.description).toContain('Roles: owner, admin; API keys and client credentials: no.');
  });
});
