// What each role may do, as the Agents API's matrix says (edge/api/access.ts; test/unit/
// dashboard-roles.test.ts keeps the two in step). The screens hide or disable what the role
// cannot do; the API still decides, and its 403 is shown like any other problem.
export const ROLES = ['viewer', 'member', 'admin', 'owner', 'billing_admin'] as const;
export type Role = (typeof ROLES)[number];
type LadderRole = Exclude<Role, 'billing_admin'>;
/** Each rung has the rights of those before it; a billing admin has a viewer's, plus BILLING. */
const LADDER: readonly LadderRole[] = ['viewer', 'member', 'admin', 'owner'];

/** The lowest role of the ladder allowed each operation the dashboard offers. */
export const NEEDS: Record<string, LadderRole> = {
  getOrganization: 'viewer',
  getOrganizationUsage: 'viewer',
  getSubscription: 'viewer',
  listPlans: 'viewer',
  changeSubscription: 'owner',
  cancelSubscription: 'owner',
  resumeSubscription: 'owner',
  createCheckout: 'owner',
  getCheckout: 'admin',
  listInvoices: 'admin',
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
  updateMemory: 'member',
  listContradictions: 'viewer',
  resolveContradiction: 'member',
  resolveQuestion: 'member',
  listOAuthClients: 'viewer',
  revokeOAuthClient: 'admin',
  revokeOAuthGrant: 'admin',
  listConfidentialClients: 'viewer',
  createConfidentialClient: 'admin',
  rotateConfidentialClientSecret: 'admin',
  deleteConfidentialClient: 'admin',
  // MCP servers, webhooks, billing, investigations, the graph, team membership.
  listMcpServers: 'viewer',
  getMcpServer: 'viewer',
  createMcpServer: 'admin',
  updateMcpServer: 'admin',
  deleteMcpServer: 'admin',
  testMcpServer: 'member',
  listIntegrations: 'viewer',
  installIntegration: 'admin',
  createWebhookEndpoint: 'admin',
  listWebhookEndpoints: 'admin',
  updateWebhookEndpoint: 'admin',
  deleteWebhookEndpoint: 'admin',
  rotateWebhookEndpointSecret: 'admin',
  sendWebhookTestEvent: 'admin',
  listWebhookDeliveries: 'admin',
  getWebhookDelivery: 'admin',
  redeliverWebhookDelivery: 'admin',
  listWebhookEventTypes: 'viewer',
  listThreads: 'viewer',
  getThread: 'viewer',
  createThread: 'member',
  updateThread: 'member',
  postThreadMessage: 'member',
  createRun: 'member',
  cancelRun: 'member',
  retryRun: 'member',
  listRunSteps: 'viewer',
  listEntities: 'viewer',
  searchEntities: 'viewer',
  getEntity: 'viewer',
  listRelationships: 'viewer',
  listTeamMembers: 'viewer',
  addTeamMember: 'admin',
  removeTeamMember: 'admin',
  // The graph's editing and path finder, and redelivering an endpoint's failures.
  updateEntity: 'member',
  mergeEntities: 'member',
  findEntityPaths: 'viewer',
  redeliverWebhookEndpoint: 'admin',
  // Playbooks, scheduled jobs, alerts and evaluation.
  listPlaybooks: 'viewer',
  getPlaybook: 'viewer',
  createPlaybook: 'member',
  updatePlaybook: 'member',
  publishPlaybook: 'member',
  listPlaybookVersions: 'viewer',
  validatePlaybook: 'viewer',
  importPlaybook: 'member',
  runPlaybook: 'member',
  listJobs: 'viewer',
  getJob: 'viewer',
  createJob: 'member',
  updateJob: 'member',
  deleteJob: 'member',
  pauseJob: 'member',
  resumeJob: 'member',
  triggerJob: 'member',
  listJobExecutions: 'viewer',
  listAlertEvents: 'viewer',
  getAlertEvent: 'viewer',
  acknowledgeAlertEvent: 'member',
  resolveAlertEvent: 'member',
  snoozeAlertEvent: 'member',
  listAlertSources: 'viewer',
  createAlertSource: 'admin',
  rotateAlertSourceSecret: 'admin',
  deleteAlertSource: 'admin',
  listAlertRules: 'viewer',
  createAlertRule: 'admin',
  updateAlertRule: 'admin',
  deleteAlertRule: 'admin',
  listEvaluationDatasets: 'viewer',
  getEvaluationDataset: 'viewer',
  createEvaluationDataset: 'member',
  deleteEvaluationDataset: 'member',
  listEvaluationCases: 'viewer',
  addEvaluationCase: 'member',
  importEvaluationCases: 'member',
  deleteEvaluationCase: 'member',
  listEvaluations: 'viewer',
  getEvaluation: 'viewer',
  createEvaluation: 'member',
  listEvaluationResults: 'viewer',
  compareEvaluations: 'viewer',
  // Rules in place, exports, dataset renames, the graph's relationships and impact, a thread's memories.
  getAlertRule: 'viewer',
  exportPlaybook: 'viewer',
  getPlaybookVersion: 'viewer',
  updateEvaluationDataset: 'member',
  exportEvaluationCases: 'viewer',
  getAffectedEntities: 'viewer',
  assertRelationship: 'member',
  retractRelationship: 'member',
  listThreadMemories: 'viewer',
  getMemory: 'viewer',
};

/** The billing operations, which billing admins may call too. */
export const BILLING: ReadonlySet<string> = new Set([
  'changeSubscription',
  'cancelSubscription',
  'resumeSubscription',
  'createCheckout',
  'getCheckout',
  'listInvoices',
]);

/** Roles only an owner grants or takes away. */
export const OWNER_GRANTED: ReadonlySet<Role> = new Set<Role>(['owner', 'billing_admin']);

export function can(role: Role | null | undefined, operation: keyof typeof NEEDS): boolean {
  const needed = NEEDS[operation];
  if (!role || !needed) return false;
  if (role === 'billing_admin') return needed === 'viewer' || BILLING.has(operation);
  return LADDER.indexOf(role) >= LADDER.indexOf(needed);
}

/** The roles a member with `role` may give (only an owner grants owner and billing_admin). */
export function grantable(role: Role | null | undefined): Role[] {
  return role === 'owner' ? [...ROLES] : ROLES.filter((r) => !OWNER_GRANTED.has(r));
}
