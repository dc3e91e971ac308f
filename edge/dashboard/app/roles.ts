// What each role may do, as the Agents API's matrix says (edge/api/access.ts; test/unit/
// dashboard-roles.test.ts keeps the two in step). The screens hide or disable what the role
// cannot do; the API still decides, and its 403 is shown like any other problem.
export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** The lowest role allowed each operation the dashboard offers. */
export const NEEDS: Record<string, Role> = {
  getOrganization: 'viewer',
  getOrganizationUsage: 'viewer',
  getSubscription: 'viewer',
  listMembers: 'viewer',
  updateMember: 'admin',
  removeMember: 'admin',
  createInvitation: 'admin',
  listInvitations: 'admin',
  revokeInvitation: 'admin',
  resendInvitation: 'admin',
  listTeams: 'viewer',
  createTeam: 'admin',
  deleteTeam: 'admin',
  listApiKeys: 'viewer',
  createApiKey: 'admin',
  rotateApiKey: 'admin',
  revokeApiKey: 'admin',
  listAuditEvents: 'admin',
  listMemories: 'viewer',
  searchMemories: 'viewer',
  createMemory: 'member',
  deleteMemory: 'member',
  listOAuthClients: 'viewer',
  revokeOAuthClient: 'admin',
  revokeOAuthGrant: 'admin',
  listConfidentialClients: 'viewer',
  createConfidentialClient: 'admin',
  rotateConfidentialClientSecret: 'admin',
  deleteConfidentialClient: 'admin',
};

export function can(role: Role | null | undefined, operation: keyof typeof NEEDS): boolean {
  const needed = NEEDS[operation];
  if (!role || !needed) return false;
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** The roles a member with `role` may give (only an owner grants owner). */
export function grantable(role: Role | null | undefined): Role[] {
  return role === 'owner' ? [...ROLES] : ROLES.filter((r) => r !== 'owner');
}
