// The dashboard's copy of the authorization matrix (edge/dashboard/app/roles.ts, bundled for
// the browser without the matrix's protobuf imports) must say what edge/api/access.ts says, or
// the screens would offer what the API refuses, or hide what it allows.
import { describe, expect, it } from 'vitest';
import { ACCESS, ROLE_NAMES, roleAllows } from '../../edge/api/access.ts';
import { BILLING, can, grantable, NEEDS, ROLES } from '../../edge/dashboard/app/roles.ts';

describe('the dashboard role matrix', () => {
  it('names the roles in the API order', () => {
    expect(ROLES).toEqual(ROLE_NAMES);
  });

  it.each(Object.entries(NEEDS))('%s needs %s, as the API matrix says', (operation, role) => {
    expect(ACCESS[operation]?.role).toBe(role);
    expect(BILLING.has(operation)).toBe(ACCESS[operation]?.billing === true);
  });

  it('lets every role do, on every operation it offers, exactly what the API lets it do', () => {
    for (const operation of Object.keys(NEEDS)) {
      for (const role of ROLES)
        expect([operation, role, can(role, operation)]).toEqual([operation, role, roleAllows(role, ACCESS[operation]!)]);
    }
  });

  it('offers every billing operation of the API', () => {
    const billing = Object.entries(ACCESS)
      .filter(([, a]) => a.billing)
      .map(([operation]) => operation);
    expect([...BILLING].sort()).toEqual(billing.sort());
  });

  it('answers each role what it may do', () => {
    expect(can('viewer', 'listMembers')).toBe(true);
    expect(can('member', 'createApiKey')).toBe(false);
    expect(can('admin', 'createApiKey')).toBe(true);
    expect(can('admin', 'listAuditEvents')).toBe(true);
    expect(can(null, 'listMembers')).toBe(false);
    expect(can('billing_admin', 'changeSubscription')).toBe(true);
    expect(can('billing_admin', 'listInvoices')).toBe(true);
    expect(can('billing_admin', 'listMembers')).toBe(true);
    expect(can('billing_admin', 'createMemory')).toBe(false);
    expect(can('billing_admin', 'createApiKey')).toBe(false);
    expect(can('admin', 'changeSubscription')).toBe(false);
    expect(grantable('admin')).toEqual(['viewer', 'member', 'admin']);
    expect(grantable('owner')).toEqual(['viewer', 'member', 'admin', 'owner', 'billing_admin']);
  });
});
