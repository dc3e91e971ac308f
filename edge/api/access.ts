// The Agents API's authorization matrix: for every operation, the lowest role of a signed-in user
// that may call it (each higher role may too), and whether API keys and client_credentials tokens
// (machines, which have no role) may. Declared once here; `guardRoutes` applies it to every route,
// refuses to start when an operation has no entry, and the OpenAPI document states it
// (`x-mindgate-access`). test/integration/api-access.test.ts checks the whole table over HTTP.
// The guard also records every change, and every refused attempt at one, in the audit log.
import { Code, ConnectError } from '@connectrpc/connect';
import { Role } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import { scopesAllow, type ApiKeyScope } from '../../services/common/api-key-scopes.ts';
import type { AppContext } from '../context.ts';
import type { AnyApiRouteContext } from '../http/api-route.ts';
import { ForbiddenError, type Caller } from './auth.ts';
import type { AuditRecorder } from './audit.ts';
import type { IdempotentRun } from './idempotency.ts';
import type { RateLimitCheck } from './rate-limits.ts';
import { problemOf } from './problems.ts';
import type { RestRoute } from './rest-route.ts';

/**
 * The roles: a ladder (each has the rights of those before it), then `billing_admin`, who has a
 * viewer's rights and may also call the operations marked `billing` (Access.billing).
 */
export const ROLE_NAMES = ['viewer', 'member', 'admin', 'owner', 'billing_admin'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];
type LadderRole = Exclude<RoleName, 'billing_admin'>;
const LADDER: readonly LadderRole[] = ['viewer', 'member', 'admin', 'owner'];

const BY_ENUM: Record<number, RoleName> = {
  [Role.OWNER]: 'owner',
  [Role.ADMIN]: 'admin',
  [Role.MEMBER]: 'member',
  [Role.VIEWER]: 'viewer',
  [Role.BILLING_ADMIN]: 'billing_admin',
};
export const ROLE_ENUM: Record<RoleName, Role> = {
  owner: Role.OWNER,
  admin: Role.ADMIN,
  member: Role.MEMBER,
  viewer: Role.VIEWER,
  billing_admin: Role.BILLING_ADMIN,
};

export function roleName(role: Role): RoleName | null {
  return BY_ENUM[role] ?? null;
}

export interface Access {
  /** The lowest role of the ladder that may call the operation. */
  role: LadderRole;
  /** A billing operation: billing admins may call it too, whatever `role` says. */
  billing?: boolean;
  /**
   * API keys and client_credentials tokens may call it too, with the scope it needs
   * (machineScope): "admin" where the role is admin or owner, else "read" for GET, "write" otherwise.
   */
  machines: boolean;
  /** A user below `role` may still call it on themselves (`user_id` in the path is theirs). */
  self?: boolean;
  /** Only in the operator's organization (OPERATOR_ORGANIZATION_ID): the platform's own settings. */
  operator?: boolean;
  /**
   * About the caller's own account (`/users/me`), outside any organization: any signed-in user,
   * whatever their role; never a machine.
   */
  user?: boolean;
}

const read: Access = { role: 'viewer', machines: true };
/** Changes to the organization's memory: members and up, and keys with the write scope. */
const contribute: Access = { role: 'member', machines: true };
const admin: Access = { role: 'admin', machines: false };
/** Owner-and-admin work that automation may do too, with an "admin" key (teams, invitations, the audit log). */
const automatable: Access = { role: 'admin', machines: true };
/** The operator's own settings (gateway keys): signed-in owners and admins of the operator's organization. */
const operator: Access = { role: 'admin', machines: false, operator: true };
/** An investigation's work: members start and steer it, and so may automation with a "write" key. */
const work: Access = { role: 'member', machines: true };
/** A signed-in user's own account. */
const account: Access = { role: 'viewer', machines: false, user: true };
/** Spending the organization's money: owners and billing admins, signed in. */
const billing: Access = { role: 'owner', machines: false, billing: true };

/** operationId → who may call it. Operations outside an organization (health, metadata) are absent. */
export const ACCESS: Readonly<Record<string, Access>> = {
  listOrganizations: read,
  createOrganization: { role: 'viewer', machines: false },
  getOrganization: read,
  updateOrganization: admin,
  transferOrganizationOwnership: { role: 'owner', machines: false },
  deleteOrganization: { role: 'owner', machines: false },
  getOrganizationUsage: read,
  listMembers: read,
  getMember: read,
  updateMember: admin,
  removeMember: { ...admin, self: true },
  createTeam: automatable,
  listTeams: read,
  getTeam: read,
  updateTeam: automatable,
  deleteTeam: automatable,
  listTeamMembers: read,
  addTeamMember: automatable,
  removeTeamMember: automatable,
  setTeamBrainAccess: automatable,
  deleteTeamBrainAccess: automatable,
  createInvitation: automatable,
  listInvitations: automatable,
  resendInvitation: automatable,
  revokeInvitation: automatable,
  createApiKey: admin,
  listApiKeys: read,
  rotateApiKey: admin,
  revokeApiKey: admin,
  listOAuthClients: read,
  revokeOAuthClient: admin,
  revokeOAuthGrant: admin,
  createConfidentialClient: admin,
  listConfidentialClients: read,
  rotateConfidentialClientSecret: admin,
  deleteConfidentialClient: admin,
  listAuditEvents: automatable,
  exportAuditEvents: automatable,
  listMcpServers: read,
  getMcpServer: read,
  createMcpServer: automatable,
  updateMcpServer: automatable,
  deleteMcpServer: automatable,
  testMcpServer: { role: 'member', machines: true },
  listIntegrations: read,
  installIntegration: automatable,
  createGatewayKey: operator,
  listGatewayKeys: operator,
  rotateGatewayKey: operator,
  revokeGatewayKey: operator,
  createThread: work,
  listThreads: read,
  getThread: read,
  updateThread: work,
  postThreadMessage: work,
  listThreadMessages: read,
  listThreadMemories: read,
  createRun: work,
  listRuns: read,
  getRun: read,
  cancelRun: work,
  retryRun: work,
  listRunSteps: read,
  claimRun: work,
  heartbeatRun: work,
  reportRunStep: work,
  completeRun: work,
  // Scheduled jobs: members and up manage them (automation with a "write" key), viewers read.
  createJob: work,
  listJobs: read,
  getJob: read,
  updateJob: work,
  deleteJob: work,
  pauseJob: work,
  resumeJob: work,
  triggerJob: work,
  listJobExecutions: read,
  // Playbooks: members write, publish and run them, viewers read them.
  createPlaybook: work,
  listPlaybooks: read,
  getPlaybook: read,
  updatePlaybook: work,
  publishPlaybook: work,
  listPlaybookVersions: read,
  getPlaybookVersion: read,
  validatePlaybook: read,
  importPlaybook: work,
  exportPlaybook: read,
  runPlaybook: work,
  streamRunEvents: read,
  // Alerts: admins manage sources (their secrets are credentials) and rules; members handle
  // alert events; everyone reads. receiveAlerts (POST /alert-sources/{id}/alerts) is absent on
  // purpose: the source's secret authenticates it, not a user or a key (edge/api/alerts.ts).
  createAlertSource: admin,
  listAlertSources: read,
  getAlertSource: read,
  deleteAlertSource: admin,
  rotateAlertSourceSecret: admin,
  createAlertRule: automatable,
  listAlertRules: read,
  getAlertRule: read,
  updateAlertRule: automatable,
  deleteAlertRule: automatable,
  listAlertEvents: read,
  getAlertEvent: read,
  acknowledgeAlertEvent: work,
  resolveAlertEvent: work,
  snoozeAlertEvent: work,
  // Evaluation: members build datasets and start evaluations (so may "write" keys); viewers read.
  createEvaluationDataset: work,
  listEvaluationDatasets: read,
  getEvaluationDataset: read,
  updateEvaluationDataset: work,
  deleteEvaluationDataset: work,
  addEvaluationCase: work,
  listEvaluationCases: read,
  deleteEvaluationCase: work,
  importEvaluationCases: work,
  exportEvaluationCases: read,
  createEvaluation: work,
  listEvaluations: read,
  getEvaluation: read,
  listEvaluationResults: read,
  compareEvaluations: read,
  getCurrentUser: account,
  updateCurrentUser: account,
  requestEmailChange: account,
  deleteCurrentUser: account,
  listCurrentUserMemberships: account,
  // Webhooks: a signed-in owner or admin creates endpoints and rotates their secrets (credentials
  // of the receiving side); automation manages and redelivers with an "admin" key.
  createWebhookEndpoint: admin,
  listWebhookEndpoints: automatable,
  getWebhookEndpoint: automatable,
  updateWebhookEndpoint: automatable,
  deleteWebhookEndpoint: automatable,
  rotateWebhookEndpointSecret: admin,
  sendWebhookTestEvent: automatable,
  listWebhookDeliveries: automatable,
  getWebhookDelivery: automatable,
  redeliverWebhookDelivery: automatable,
  redeliverWebhookEndpoint: automatable,
  listWebhookEventTypes: read,
  getWebhookUsage: read,
  // Billing: anyone reads the plans and the subscription; only owners and billing admins spend the
  // organization's money, and billing admins see its checkouts and invoices as admins do.
  listPlans: read,
  getSubscription: read,
  changeSubscription: billing,
  cancelSubscription: billing,
  resumeSubscription: billing,
  createCheckout: billing,
  getCheckout: { ...admin, billing: true },
  listInvoices: { ...automatable, billing: true },
  // The memory graph: every member reads it; members and write keys change it, as they change memories.
  listEntities: read,
  searchEntities: read,
  getEntity: read,
  updateEntity: contribute,
  mergeEntities: contribute,
  getAffectedEntities: read,
  listRelationships: read,
  assertRelationship: contribute,
  retractRelationship: contribute,
  findEntityPaths: read,
  listMemories: read,
  searchMemories: read,
  getMemory: read,
  createMemory: contribute,
  updateMemory: contribute,
  deleteMemory: contribute,
  recordMemoryFeedback: contribute,
  listMemoryVersions: read,
  getMemoryVersion: read,
  listContradictions: read,
  flagContradiction: contribute,
  getContradiction: read,
  resolveContradiction: contribute,
  listQuestions: read,
  askQuestion: contribute,
  getQuestion: read,
  resolveQuestion: contribute,
  // Memory seeding (edge/api/seeding.ts): members start, cancel and review; viewers watch.
  createSeedingRun: contribute,
  listSeedingRuns: read,
  getSeedingRun: read,
  cancelSeedingRun: contribute,
  listSeedingItems: read,
  reviewSeedingItems: contribute,
  streamSeedingRun: read,
};

export function accessOf(operationId: string): Access {
  const access = ACCESS[operationId];
  if (!access) throw new Error(`operation ${operationId} has no entry in the authorization matrix (edge/api/access.ts)`);
  return access;
}

/** The API-key scope an operation needs of a machine (each scope includes the ones before it). */
export function machineScope(access: Access, method: string): ApiKeyScope {
  if (access.role === 'admin' || access.role === 'owner') return 'admin';
  return method === 'GET' ? 'read' : 'write';
}

/** Where a role stands on the ladder: a billing admin stands with viewers. */
const rank = (role: RoleName) => LADDER.indexOf(role === 'billing_admin' ? 'viewer' : role);

/** Whether a member with `role` may call the operation (leaving aside `self`). */
export function roleAllows(role: RoleName, access: Access): boolean {
  return rank(role) >= rank(access.role) || (access.billing === true && role === 'billing_admin');
}

/** The roles that may call an operation, the ladder highest first, as the OpenAPI document lists them. */
export function rolesAllowed(access: Access): RoleName[] {
  const order: RoleName[] = [...LADDER].reverse();
  return [...order, 'billing_admin' as const].filter((role) => roleAllows(role, access));
}

/** A caller that passed the matrix: its role in the organization (null for machines). */
export interface AuthorizedCaller extends Caller {
  role: RoleName | null;
}

/** The caller's role in the organization, or null when the user is not (or no longer) a member. */
export async function roleIn(ctx: AppContext, organizationId: string, userId: string): Promise<RoleName | null> {
  try {
    const { membership } = await ctx.clients.organizations.getMembership({ organizationId, userId });
    return membership ? roleName(membership.role) : null;
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.NotFound) return null;
    throw err;
  }
}

/**
 * Checks the caller against the operation's entry, for the organization in the path. A user's
 * role is read from the membership on every request, so a removed member or a lowered role takes
 * effect at once, whatever the token says.
 */
export async function authorize(
  ctx: AppContext,
  caller: Caller,
  access: Access,
  route: { organizationId?: string; userId?: string; method: string },
): Promise<AuthorizedCaller> {
  if (route.organizationId === undefined) {
    if (!access.machines && caller.kind !== 'user')
      throw new ForbiddenError('API keys and client credentials may not do this: sign in as a user');
    return { ...caller, role: null };
  }
  if (caller.organizationId !== route.organizationId) throw new ForbiddenError('these credentials act for another organization');
  if (access.operator && route.organizationId !== ctx.config.api.operatorOrganizationId) {
    throw new ForbiddenError("only the operator's organization does this (OPERATOR_ORGANIZATION_ID)");
  }
  if (caller.kind !== 'user') {
    if (!access.machines) throw new ForbiddenError('API keys and client credentials may not do this: sign in as a user');
    const needed = machineScope(access, route.method);
    if (!scopesAllow(caller.scopes ?? [], needed)) throw new ForbiddenError(`this needs an API key with the ${needed} scope`);
    return { ...caller, role: null };
  }
  const role = await roleIn(ctx, route.organizationId, caller.subject);
  if (!role) throw new ForbiddenError('you are not a member of this organization');
  const self = access.self === true && route.userId === caller.subject;
  if (!roleAllows(role, access) && !self) {
    const needed = access.billing ? `the ${access.role} role or higher, or billing_admin` : `the ${access.role} role or higher`;
    throw new ForbiddenError(`this needs ${needed}; you are ${role}`);
  }
  return { ...caller, role };
}

const callers = new WeakMap<AnyApiRouteContext, AuthorizedCaller>();

export function setCaller(c: AnyApiRouteContext, caller: AuthorizedCaller): void {
  callers.set(c, caller);
}

/** The caller the route's guard authorized; every secured handler runs after its guard. */
export function callerOf(c: AnyApiRouteContext): AuthorizedCaller {
  const caller = callers.get(c);
  if (!caller) throw new Error('callerOf: the route was not guarded');
  return caller;
}

/**
 * Puts every route behind the matrix: authenticate, then authorize for the organization (and
 * user) in the path, before the handler runs. A route whose operation has no entry stops the
 * start, so no operation can be added unguarded.
 */
export function guardRoutes(
  ctx: AppContext,
  authenticate: (c: AnyApiRouteContext) => Promise<Caller>,
  routes: Array<RestRoute>,
  audit: AuditRecorder,
  idempotent: IdempotentRun,
  rateLimit: RateLimitCheck,
): void {
  for (const route of routes) {
    const access = accessOf(route.operationId);
    const handler = route.handler;
    route.secured = true;
    route.access = access;
    route.handler = async (c: AnyApiRouteContext) => {
      const caller = await authenticate(c);
      if (!(await rateLimit(c, caller.organizationId))) return;
      const params = c.input.params as { organization_id?: string; user_id?: string };
      try {
        const target = { organizationId: params.organization_id, userId: params.user_id, method: route.method };
        setCaller(c, await authorize(ctx, caller, access, target));
        if (route.creates) await idempotent(c, route.operationId, caller, async () => handler(c), route.bodyLimit);
        else await handler(c);
      } catch (err) {
        await audit(c, route, caller, problemOf(err).status);
        throw err;
      }
      await audit(c, route, caller, c.res.statusCode);
    };
  }
}
