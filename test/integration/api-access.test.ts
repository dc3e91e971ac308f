// The authorization matrix (edge/api/access.ts) as a table over real HTTP: every operation of
// the OpenAPI document, called by an owner, an admin, a member, a viewer, a billing admin and an API key of the
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
type Who = RoleName | 'read key' | 'write key' | 'admin key';
const credentials = new Map<Who, { token?: string; apiKey?: string }>();
const KEY_SCOPES = { 'read key': ['read'], 'write key': ['read', 'write'], 'admin key': ['admin'] } as const;
const call = restClient(() => api);

const FILL: Record<string, string> = {
  key_id: 'k0000000000000000',
  client_id: 'no-such-client',
  grant_id: 'no-such-grant',
  user_id: 'usr_nobody',
  invitation_id: 'inv_nothing',
  team_id: 'team_nothing',
  server_id: 'mcs_nothing',
  integration: 'nothing',
  key_id_gateway: 'gk0000000000000000',
  thread_id: 'thr_nothing',
  run_id: 'run_nothing',
  job_id: 'job_nothing',
  playbook_id: 'pbk_nothing',
  dataset_id: 'evd_nothing',
  case_id: 'evc_nothing',
  evaluation_id: 'evr_nothing',
  endpoint_id: 'whe_nothingnothingnothin',
  delivery_id: 'dlv_000000000000000000000000',
  checkout_id: 'chk_nothingnothingnothingnot',
  entity_id: 'no-such-entity',
  relationship_id: 'rel_aaaaaaaaaaaaaaaaaaaaaaaaaa',
  namespace: 'knowledge',
  key: 'no-such-key',
  contradiction_id: 'ctr_aaaaaaaaaaaaaaaaaaaa',
  question_id: 'q_aaaaaaaaaaaaaaaaaaaa',
  version: '1',
  seeding_run_id: 'sdr_aaaaaaaaaaaaaaaaaaaa',
  source_id: 'als_nothing',
  rule_id: 'alr_nothing',
  alert_event_id: 'alrt_nothing',
};

interface Operation {
  operationId: string;
  method: string;
  path: string;
  access: { roles: RoleName[]; api_keys: boolean; api_key_scope: 'read' | 'write' | 'admin' | null; operator?: boolean };
  hasBody: boolean;
}

let operations: Operation[] = [];

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  const owner = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  credentials.set('owner', { token: owner.access_token });
  for (const role of ['admin', 'member', 'viewer', 'billing_admin'] as const) {
    credentials.set(role, { token: (await joinAs(platform, org, role)).access_token });
  }
  for (const [who, scopes] of Object.entries(KEY_SCOPES)) {
    const key = await call(`/organizations/${org}/api-keys`, { token: owner.access_token, body: { name: who, scopes } });
    credentials.set(who as Who, { apiKey: key.json.secret });
  }
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

/** An independent reading of the scopes: read < write < admin, each including the ones before. */
function keyAllowed(op: Operation, who: keyof typeof KEY_SCOPES): boolean {
  if (!op.access.api_keys || op.access.api_key_scope === null) return false;
  const order = ['read', 'write', 'admin'];
  return KEY_SCOPES[who].some((scope) => order.indexOf(scope) >= order.indexOf(op.access.api_key_scope!));
}

function concretePath(path: string): string {
  const gatewayKey = path.includes('/gateway-keys/');
  const seeding = path.includes('/seeding-runs/');
  return path.replace(/\{([a-z_]+)\}/g, (_, name: string) =>
    name === 'organization_id'
      ? org
      : FILL[gatewayKey && name === 'key_id' ? 'key_id_gateway' : seeding && name === 'run_id' ? 'seeding_run_id' : name],
  );
}

describe('the authorization matrix', () => {
  it('documents an entry for every operation of the matrix, and nothing else', () => {
    expect(operations.map((o) => o.operationId).sort()).toEqual(Object.keys(ACCESS).sort());
  });

  it('refuses exactly the callers the matrix leaves out, on every operation', async () => {
    const mismatches: string[] = [];
    for (const op of operations) {
      for (const [who, credential] of credentials) {
        // This organization is not the operator's: the operator's operations refuse everyone here
        // (api-gateway-keys.test.ts covers the operator's own organization).
        const allowed =
          !op.access.operator &&
          (who in KEY_SCOPES ? keyAllowed(op, who as keyof typeof KEY_SCOPES) : op.access.roles.includes(who as RoleName));
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
    expect(op['x-mindgate-access']).toEqual({ roles: ['owner', 'admin'], api_keys: false, api_key_scope: null, self: false, user: false });
    const me = doc.paths['/users/me'].patch;
    expect(me['x-mindgate-access']).toMatchObject({ api_keys: false, user: true });
    expect(me.description).toContain('Roles: any signed-in user, on their own account; API keys and client credentials: no.');
    const teams = doc.paths['/organizations/{organization_id}/teams'];
    expect(teams.get['x-mindgate-access']).toMatchObject({ api_keys: true, api_key_scope: 'read' });
    expect(teams.post['x-mindgate-access']).toMatchObject({ api_keys: true, api_key_scope: 'admin' });
    expect(op.description).toContain('Roles: owner, admin; API keys and client credentials: no.');
  });

  it('lets billing admins spend the money and read what anyone reads, and nothing else', async () => {
    const doc = (await call('/openapi.json')).json;
    const subscription = doc.paths['/organizations/{organization_id}/subscription'];
    expect(subscription.patch['x-mindgate-access'].roles).toEqual(['owner', 'billing_admin']);
    expect(subscription.patch.description).toContain('Roles: owner, billing_admin;');
    expect(subscription.get['x-mindgate-access'].roles).toEqual(['owner', 'admin', 'member', 'viewer', 'billing_admin']);
    expect(doc.paths['/organizations/{organization_id}/invoices'].get['x-mindgate-access'].roles).toEqual([
      'owner',
      'admin',
      'billing_admin',
    ]);
    const members = doc.paths['/organizations/{organization_id}/members'].get;
    expect(members['x-mindgate-access'].roles).toContain('billing_admin');
    expect(operations.find((o) => o.operationId === 'createMemory')!.access.roles).toEqual(['owner', 'admin', 'member']);
    const billingOnly = operations.filter((o) => o.access.roles.includes('billing_admin') && !o.access.roles.includes('viewer'));
    expect(billingOnly.map((o) => o.operationId).sort()).toEqual([
      'cancelSubscription',
      'changeSubscription',
      'createCheckout',
      'getCheckout',
      'listInvoices',
      'resumeSubscription',
    ]);
  });
});
