// The dashboard's copy of the authorization matrix (edge/dashboard/app/roles.ts, bundled for
// the browser without the matrix's protobuf imports) must say what edge/api/access.ts says, or
// the screens would offer what the API refuses, or hide what it allows.
import { describe, expect, it } from 'vitest';
import { ACCESS, ROLE_NAMES } from '../../edge/api/access.ts';
import { can, grantable, NEEDS, ROLES } from '../../edge/dashboard/app/roles.ts';

describe('the dashboard role matrix', () => {
  it('names the roles in the API order', () => {
    expect(ROLES).toEqual(ROLE_NAMES);
  });

  it.each(Object.entries(NEEDS))('%s needs %s, as the API matrix says', (operation, role) => {
    expect(ACCESS[operation]?.role).toBe(role);
  });

  it('answers each role what it may do', () => {
    expect(can('viewer', 'listMembers')).toBe(true);
    expect(can('member', 'createApiKey')).toBe(false);
    expect(can('admin', 'createApiKey')).toBe(true);
    expect(can('admin', 'listAuditEvents')).toBe(true);
    expect(can(null, 'listMembers')).toBe(false);
    expect(grantable('admin')).toEqual(['viewer', 'member', 'admin']);
    expect(grantable('owner')).toContain('owner');
  });
});
