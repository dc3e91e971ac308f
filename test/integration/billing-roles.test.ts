// Who spends the organization's money: owners and billing admins. A billing admin is made through
// the members API (only by an owner), changes the plan, opens a checkout and reads invoices, and
// otherwise has a viewer's rights; an admin is refused the plan change (403), and may neither
// make a billing admin nor invite one. Each attempt is in the audit log under its actor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import { joinAs, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';

let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let org: string;
let admin: TestMember;
let billing: TestMember;
const call = restClient(() => api);

beforeAll(async () => {
  platform = await startOAuthTestPlatform();
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  admin = await joinAs(platform, org, 'admin');
  billing = await joinAs(platform, org, 'viewer');
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

const member = (userId: string) => `/organizations/${org}/members/${userId}`;

describe('the billing admin role', () => {
  it('is granted and taken away only by an owner', async () => {
    const byAdmin = await call(member(billing.userId), { method: 'PATCH', token: admin.access_token, body: { role: 'billing_admin' } });
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.json.detail).toContain('billing_admin');
    const byOwner = await call(member(billing.userId), { method: 'PATCH', token: owner.access_token, body: { role: 'billing_admin' } });
    expect(byOwner.status).toBe(200);
    expect(byOwner.json.role).toBe('billing_admin');
    const demote = await call(member(billing.userId), { method: 'PATCH', token: admin.access_token, body: { role: 'viewer' } });
    expect(demote.status).toBe(403);
    expect((await call(member(billing.userId), { token: admin.access_token })).json.role).toBe('billing_admin');
  });

  it('is invited by an owner, never by an admin', async () => {
    const body = { email: 'finance@example.com', role: 'billing_admin' };
    const byAdmin = await call(`/organizations/${org}/invitations`, { token: admin.access_token, body });
    expect(byAdmin.status).toBe(403);
    const byOwner = await call(`/organizations/${org}/invitations`, { token: owner.access_token, body });
    expect(byOwner.status).toBe(201);
    expect(byOwner.json.role).toBe('billing_admin');
  });

  it('is what accepting gives a member, unless their role already covers it (a billing admin invited as viewer stays one)', async () => {
    const invitations = platform.ctx.clients.invitations;
    const joinVia = async (who: TestMember, email: string, role: Role) => {
      const { token } = await invitations.createInvitation({
        organizationId: org,
        email,
        role,
        invitedBy: 'usr_test',
        actorRole: Role.OWNER,
      });
      return (await invitations.acceptInvitation({ token, userId: who.userId, userEmail: email })).membership!.role;
    };
    const colleague = await joinAs(platform, org, 'member');
    expect(await joinVia(colleague, colleague.user.email, Role.BILLING_ADMIN)).toBe(Role.BILLING_ADMIN);
    expect(await joinVia(colleague, colleague.user.email, Role.VIEWER)).toBe(Role.BILLING_ADMIN);
    expect(await joinVia(colleague, colleague.user.email, Role.ADMIN)).toBe(Role.ADMIN);
  });

  it('changes the plan, which an admin may not', async () => {
    const refused = await call(`/organizations/${org}/subscription`, {
      method: 'PATCH',
      token: admin.access_token,
      body: { plan: 'starter' },
    });
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toContain('billing_admin');
    const changed = await call(`/organizations/${org}/subscription`, {
      method: 'PATCH',
      token: billing.access_token,
      body: { plan: 'starter' },
    });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ plan: 'starter', status: 'active' });
    expect((await call(`/organizations/${org}/usage`, { token: billing.access_token })).json.plan).toBe('starter');
  });

  it('opens a checkout, reads it and the invoices; an admin reads them but may not check out', async () => {
    const body = { plan: 'professional', interval: 'month', billing_address: { country: 'US' } };
    expect((await call(`/organizations/${org}/checkouts`, { token: admin.access_token, body })).status).toBe(403);
    const checkout = await call(`/organizations/${org}/checkouts`, { token: billing.access_token, body });
    expect(checkout.status).toBe(201);
    expect(checkout.json.currency).toBe('USD');
    for (const who of [billing, admin]) {
      expect((await call(`/organizations/${org}/checkouts/${checkout.json.id}`, { token: who.access_token })).status).toBe(200);
      expect((await call(`/organizations/${org}/invoices`, { token: who.access_token })).status).toBe(200);
    }
  });

  it("has a viewer's rights otherwise: reads, but writes no memory and makes no key", async () => {
    expect((await call(`/organizations/${org}/members`, { token: billing.access_token })).status).toBe(200);
    const key = await call(`/organizations/${org}/api-keys`, { token: billing.access_token, body: { name: 'k', scopes: ['read'] } });
    expect(key.status).toBe(403);
    const team = await call(`/organizations/${org}/teams`, { token: billing.access_token, body: { name: 'finance' } });
    expect(team.status).toBe(403);
  });

  it('records the changes and the refusals in the audit log under their actors', async () => {
    const r = await call(`/organizations/${org}/audit-events?action=changeSubscription`, { token: owner.access_token });
    const seen = r.json.events.map((e: { outcome: string; actor: { id: string } }) => [e.actor.id, e.outcome]);
    expect(seen).toEqual(
      expect.arrayContaining([
        [billing.userId, 'success'],
        [admin.userId, 'denied'],
      ]),
    );
  });
});
