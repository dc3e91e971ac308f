// The agents service: agents, their investigations (threads and runs), and identity — users
// (accounts and how they sign in), organizations and their members, teams, invitations, API keys
// and the audit log. One process
// owns all of these collections; the edge reaches them only through the services below.
import type { ConnectRouter } from '@connectrpc/connect';
import { AgentsService } from '../../gen/mindgate/agents/v1/agents_pb.js';
import { AuditService } from '../../gen/mindgate/agents/v1/audit_pb.js';
import { InvitationsService } from '../../gen/mindgate/agents/v1/invitations_pb.js';
import { TeamsService } from '../../gen/mindgate/agents/v1/teams_pb.js';
import { ApiKeysService } from '../../gen/mindgate/agents/v1/api_keys_pb.js';
import { OrganizationsService } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import { UsersService } from '../../gen/mindgate/agents/v1/users_pb.js';
import { RunsService } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { ThreadsService } from '../../gen/mindgate/agents/v1/threads_pb.js';
import { EventOutboxService } from '../../gen/mindgate/events/v1/outbox_pb.js';
import type { ModuleConfig } from '../common/config.ts';
import { outboxRoutes } from '../common/events/outbox-routes.ts';
import { createEventOutbox, type EventOutbox } from '../common/events/outbox.ts';
import { loadKeyEncryption } from '../common/key-encryption.ts';
import { resealAtStart } from '../common/key-encryption-reseal.ts';
import type { ServiceDeps } from '../modules.ts';
import { withMemberLimit } from './handlers/member-limit.ts';
import { sealedEndpointSecrets, sealedSourceSecrets } from './sealed-records.ts';
import { withRunLimit } from './handlers/run-limit.ts';
import type { Logger } from '../common/log.ts';
import type { RpcServiceModule } from '../common/rpc/server.ts';
import type { RecordStores } from '../common/stores.ts';
import { listAgents, recordActivity, registerAgent, type AgentRecord, type AgentsContext } from './handlers/agents.ts';
import {
  createApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
  verifyApiKey,
  type ApiKeyRecord,
  type ApiKeysContext,
} from './handlers/api-keys.ts';
import {
  addMember,
  createOrganization,
  getMembership,
  getOrganization,
  listOrganizations,
  type MembershipRecord,
  type OrganizationRecord,
  type OrganizationsContext,
} from './handlers/organizations.ts';
import { countMembers, listMembers, removeMember, updateMemberRole } from './handlers/members.ts';
import { transferOwnership, updateOrganization } from './handlers/organization-updates.ts';
import {
  addTeamMember,
  createTeam,
  deleteTeam,
  getTeam,
  listTeamMembers,
  listTeams,
  removeTeamMember,
  updateTeam,
  type TeamMemberRecord,
  type TeamRecord,
  type TeamsContext,
} from './handlers/teams.ts';
import { resolveBrainAccess, setTeamBrainAccess } from './handlers/team-brain-access.ts';
import {
  acceptInvitation,
  createInvitation,
  getInvitationByToken,
  replaceInvitationLink,
  listInvitations,
  resendInvitation,
  revokeInvitation,
  type InvitationRecord,
  type InvitationsContext,
} from './handlers/invitations.ts';
import { listEvents, recordEvent, type AuditContext, type AuditRecord } from './handlers/audit.ts';
import { authenticateUser, createUser, getUser, updateUser, type UserRecord, type UsersContext } from './handlers/users.ts';
import { createEmailChange } from './handlers/email-change.ts';
import { createEmailVerification, signInWithSocialIdentity, verifyEmail } from './handlers/user-identities.ts';
import { deleteUser } from './handlers/user-deletion.ts';
import { gatewayModule } from './gateway-module.ts';
import {
  createThread,
  getThread,
  listMessages,
  listThreads,
  postMessage,
  updateThread,
  type CounterRecord,
  type MessageRecord,
  type ThreadRecord,
  type ThreadsContext,
} from './handlers/threads.ts';
import {
  cancelRun,
  createRun,
  getRun,
  listRuns,
  listSteps,
  retryRun,
  type RunRecord,
  type RunsContext,
  type StepRecord,
} from './handlers/runs.ts';
import { claimRun, completeRun, heartbeatRun, reportStep } from './handlers/run-leases.ts';
import { listThreadMemories, type ThreadMemoryRecord } from './handlers/thread-memories.ts';
import { startRunTimeouts } from './handlers/run-timeouts.ts';
import { RunUsageService, runUsageRoutes } from './handlers/run-usage.ts';
import { SUBJECTS } from './events.ts';
import { webhooksModule } from './webhooks/module.ts';
import { jobsModule } from './jobs/module.ts';
import { openJobCollections } from './jobs/records.ts';
import { playbooksModule } from './playbooks-module.ts';
import { alertRoutes, AlertsService } from './alerts/module.ts';
import { openAlertCollections } from './alerts/records.ts';
import { evaluationModule } from './handlers/evaluation/module.ts';
import { openWebhookCollections, type WebhookCollections } from './webhooks/records.ts';
import { deleteOrganization, purgeOrganizationData, type OrganizationDeletionContext } from './handlers/organization-deletion.ts';
import type { RecordCollection, RecordDoc } from '../common/storage/records/interface.ts';

interface Contexts {
  agents: AgentsContext;
  orgs: OrganizationsContext;
  audit: AuditContext;
  invitations: InvitationsContext;
  teams: TeamsContext;
  keys: ApiKeysContext;
  users: UsersContext;
  runs: RunsContext;
  /** The service's events (members, invitations, API keys, endpoints disabled), relayed to webhooks. */
  events: EventOutbox;
  webhooks: WebhookCollections;
  deletion: OrganizationDeletionContext;
}

/** Opens every collection of the service, with its indexes, once. */
function openContexts(stores: RecordStores, config: ModuleConfig, logger: Logger, now: () => number): Contexts {
  const records = stores.records;
  const memberships = records.collection<MembershipRecord>('memberships', {
    indexes: [{ fields: ['userId', 'createdAt'] }, { fields: ['organizationId'] }, { fields: ['organizationId', 'createdAt'] }],
  });
  const invitations = records.collection<InvitationRecord>('invitations', {
    indexes: [{ fields: ['tokenHash'] }, { fields: ['organizationId', 'createdAt'] }, { fields: ['organizationId', 'email', 'state'] }],
  });
  const apiKeys = records.collection<ApiKeyRecord>('api_keys', { indexes: [{ fields: ['organizationId', 'createdAt'] }] });
  const webhooks = openWebhookCollections(records);
  const investigations = openInvestigations(stores);
  const subjects = {
    [SUBJECTS.memberships]: memberships,
    [SUBJECTS.invitations]: invitations,
    [SUBJECTS.apiKeys]: apiKeys,
    [SUBJECTS.webhookEndpoints]: webhooks.endpoints,
    [SUBJECTS.runs]: investigations.runs,
    [SUBJECTS.threads]: investigations.threads,
  };
  const events = openOutbox(records, subjects, logger, now);
  const teamMembers = records.collection<TeamMemberRecord>('team_members', {
    indexes: [{ fields: ['teamId', 'addedAt'] }, { fields: ['organizationId', 'userId'] }, { fields: ['userId'] }],
  });
  const orgs: OrganizationsContext = {
    teamMembers,
    users: records.collection<UserRecord>('auth_users'),
    organizations: records.collection<OrganizationRecord>('organizations', { indexes: [{ fields: ['slug'], unique: true }] }),
    memberships,
    events,
    now,
  };
  const teams: TeamsContext = {
    teams: records.collection<TeamRecord>('teams', {
      indexes: [{ fields: ['organizationId', 'nameKey'], unique: true }, { fields: ['organizationId', 'createdAt'] }],
    }),
    teamMembers,
    memberships: orgs.memberships,
    users: orgs.users,
    now,
  };
  const agents: AgentsContext = {
    agents: records.collection<AgentRecord>('agents', { indexes: [{ fields: ['organizationId', 'createdAt'] }] }),
    now,
  };
  const audit: AuditContext = {
    events: records.collection<AuditRecord>('audit_events', {
      indexes: [{ fields: ['organizationId', 'createdAt'] }, { fields: ['organizationId', 'actorId', 'createdAt'] }],
    }),
    organizations: orgs.organizations,
    now,
  };
  const keys: ApiKeysContext = { apiKeys, teams: teams.teams, events, now };
  // What an organization's deletion purges: investigations (steps before their runs, messages
  // before their threads), team members before teams and memberships, its webhooks (deliveries
  // and their log before the endpoints), the audit log last.
  const runs = runsContext(investigations, events, now);
  const owned = [
    runs.steps,
    runs.runs,
    ...threadCollections(runs.threads),
    teamMembers,
    teams.teams,
    invitations,
    orgs.memberships,
    agents.agents,
    webhooks.attempts,
    webhooks.deliveries,
    webhooks.events,
    webhooks.endpoints,
    audit.events,
  ];
  const deletion: OrganizationDeletionContext = {
    organizations: orgs.organizations as RecordCollection<RecordDoc>,
    apiKeys: keys.apiKeys as RecordCollection<RecordDoc>,
    owned: owned as RecordCollection<RecordDoc>[],
  };
  return {
    agents,
    orgs,
    audit,
    invitations: { ...orgs, teams: teams.teams, invitations },
    teams,
    keys,
    users: openUsers(stores, config, orgs, now),
    runs,
    events,
    webhooks,
    deletion,
  };
}

/** The service's outbox, over the collections its events are about (those of its modules too). */
function openOutbox(
  records: RecordStores['records'],
  subjects: Record<string, RecordCollection<RecordDoc>>,
  logger: Logger,
  now: () => number,
) {
  const jobCollections = openJobCollections(records);
  return createEventOutbox({
    records,
    collection: 'agents_event_outbox',
    subjects: {
      ...subjects,
      [SUBJECTS.alertEvents]: openAlertCollections(records).events,
      [SUBJECTS.jobs]: jobCollections.jobs,
      [SUBJECTS.jobExecutions]: jobCollections.executions,
    },
    logger,
    now,
  });
}

/** Investigations: threads, their messages, and the runs working on them with their steps. */
function openInvestigations(stores: RecordStores) {
  const records = stores.records;
  return {
    threads: records.collection<ThreadRecord>('threads', {
      indexes: [{ fields: ['organizationId', 'createdAt'] }, { fields: ['organizationId', 'status', 'createdAt'] }],
    }),
    messages: records.collection<MessageRecord>('thread_messages', {
      indexes: [{ fields: ['threadId', 'seq'] }, { fields: ['organizationId'] }],
    }),
    counters: records.collection<CounterRecord>('thread_message_counters', { indexes: [{ fields: ['organizationId'] }] }),
    memories: records.collection<ThreadMemoryRecord>('thread_memories', {
      indexes: [{ fields: ['threadId', 'createdAt'] }, { fields: ['organizationId'] }],
    }),
    runs: records.collection<RunRecord>('runs', {
      indexes: [
        { fields: ['executor', 'dueAt'] },
        { fields: ['executor', 'organizationId', 'dueAt'] },
        { fields: ['organizationId', 'createdAt'] },
        { fields: ['organizationId', 'threadId', 'createdAt'] },
        { fields: ['organizationId', 'status', 'createdAt'] },
        // The sweep of runs past their timeout (run-timeouts.ts).
        { fields: ['dueAt'] },
      ],
    }),
    steps: records.collection<StepRecord>('run_steps', { indexes: [{ fields: ['runId', 'index'] }, { fields: ['organizationId'] }] }),
  };
}

/** A thread's collections in the order an organization's deletion purges them (the threads last). */
const threadCollections = (t: ThreadsContext) => [t.messages, t.memories, t.counters, t.threads];

/** Threads and runs write their lifecycle events (thread.*, run.*) to the service's outbox. */
function runsContext(c: ReturnType<typeof openInvestigations>, events: EventOutbox, now: () => number): RunsContext {
  const threads: ThreadsContext = { threads: c.threads, messages: c.messages, counters: c.counters, memories: c.memories, events, now };
  return { runs: c.runs, steps: c.steps, threads, events, now };
}

function investigationRoutes(router: ConnectRouter, c: Contexts): void {
  const t = c.runs.threads;
  router.service(ThreadsService, {
    createThread: (req) => createThread(t, req),
    getThread: (req) => getThread(t, req),
    listThreads: (req) => listThreads(t, req),
    updateThread: (req) => updateThread(t, req),
    postMessage: (req) => postMessage(t, req),
    listMessages: (req) => listMessages(t, req),
    listThreadMemories: (req) => listThreadMemories(t, req),
  });
  router.service(RunsService, {
    createRun: (req) => createRun(c.runs, req),
    getRun: (req) => getRun(c.runs, req),
    listRuns: (req) => listRuns(c.runs, req),
    cancelRun: (req) => cancelRun(c.runs, req),
    retryRun: (req) => retryRun(c.runs, req),
    claimRun: (req) => claimRun(c.runs, req),
    heartbeatRun: (req) => heartbeatRun(c.runs, req),
    reportStep: (req) => reportStep(c.runs, req),
    completeRun: (req) => completeRun(c.runs, req),
    listSteps: (req) => listSteps(c.runs, req),
  });
}

/** The account collections, under the names the authorization server gave them when it wrote them itself. */
function openUsers(stores: RecordStores, config: ModuleConfig, orgs: OrganizationsContext, now: () => number): UsersContext {
  const records = stores.records;
  return {
    users: orgs.users,
    emails: records.collection('auth_user_emails'),
    social: records.collection('auth_social_identities', { indexes: [{ fields: ['userId'] }] }),
    emailTokens: records.collection('auth_email_tokens', { indexes: [{ fields: ['userId'] }] }),
    attempts: records.collection('auth_sign_in_attempts'),
    organizations: orgs.organizations as RecordCollection<RecordDoc>,
    memberships: orgs.memberships,
    teamMembers: orgs.teamMembers,
    events: orgs.events,
    signInAttempts: config.accounts.signInAttempts,
    signInWindowMs: config.accounts.signInWindowSeconds * 1000,
    now,
  };
}

function identityRoutes(router: ConnectRouter, c: Contexts): void {
  router.service(UsersService, {
    createUser: (req) => createUser(c.users, req),
    authenticateUser: (req) => authenticateUser(c.users, req),
    getUser: (req) => getUser(c.users, req),
    updateUser: (req) => updateUser(c.users, req),
    deleteUser: (req) => deleteUser(c.users, req),
    createEmailVerification: (req) => createEmailVerification(c.users, req),
    verifyEmail: (req) => verifyEmail(c.users, req),
    createEmailChange: (req) => createEmailChange(c.users, req),
    signInWithSocialIdentity: (req) => signInWithSocialIdentity(c.users, req),
  });
  router.service(OrganizationsService, {
    createOrganization: (req) => createOrganization(c.orgs, req),
    getOrganization: (req) => getOrganization(c.orgs, req),
    listOrganizations: (req) => listOrganizations(c.orgs, req),
    getMembership: (req) => getMembership(c.orgs, req),
    addMember: (req) => addMember(c.orgs, req),
    listMembers: (req) => listMembers(c.orgs, req),
    updateMemberRole: (req) => updateMemberRole(c.orgs, req),
    removeMember: (req) => removeMember(c.orgs, req),
    updateOrganization: (req) => updateOrganization(c.orgs, req),
    transferOwnership: (req) => transferOwnership(c.orgs, req),
    countMembers: (req) => countMembers(c.orgs, req),
    deleteOrganization: (req) => deleteOrganization(c.deletion, req),
    purgeOrganizationData: (req) => purgeOrganizationData(c.deletion, req),
  });
  router.service(InvitationsService, {
    createInvitation: (req) => createInvitation(c.invitations, req),
    listInvitations: (req) => listInvitations(c.invitations, req),
    resendInvitation: (req) => resendInvitation(c.invitations, req),
    revokeInvitation: (req) => revokeInvitation(c.invitations, req),
    getInvitationByToken: (req) => getInvitationByToken(c.invitations, req),
    acceptInvitation: (req) => acceptInvitation(c.invitations, req),
    replaceInvitationLink: (req) => replaceInvitationLink(c.invitations, req),
  });
  router.service(TeamsService, {
    createTeam: (req) => createTeam(c.teams, req),
    getTeam: (req) => getTeam(c.teams, req),
    listTeams: (req) => listTeams(c.teams, req),
    updateTeam: (req) => updateTeam(c.teams, req),
    deleteTeam: (req) => deleteTeam(c.teams, req),
    addTeamMember: (req) => addTeamMember(c.teams, req),
    removeTeamMember: (req) => removeTeamMember(c.teams, req),
    listTeamMembers: (req) => listTeamMembers(c.teams, req),
    setTeamBrainAccess: (req) => setTeamBrainAccess(c.teams, req),
    resolveBrainAccess: (req) => resolveBrainAccess(c.teams, req),
  });
}

function otherRoutes(router: ConnectRouter, c: Contexts): void {
  router.service(AgentsService, {
    registerAgent: (req) => registerAgent(c.agents, req),
    listAgents: (req) => listAgents(c.agents, req),
    recordActivity: (req) => recordActivity(c.agents, req),
  });
  router.service(AuditService, {
    recordEvent: (req) => recordEvent(c.audit, req),
    listEvents: (req) => listEvents(c.audit, req),
  });
  router.service(ApiKeysService, {
    createApiKey: (req) => createApiKey(c.keys, req),
    listApiKeys: (req) => listApiKeys(c.keys, req),
    rotateApiKey: (req) => rotateApiKey(c.keys, req),
    revokeApiKey: (req) => revokeApiKey(c.keys, req),
    verifyApiKey: (req) => verifyApiKey(c.keys, req),
  });
}

export function createAgentsModule(
  stores: RecordStores,
  logger: Logger,
  config: ModuleConfig,
  deps?: Pick<ServiceDeps, 'now' | 'billing' | 'seeding'>,
): RpcServiceModule {
  const now = deps?.now ?? Date.now;
  const contexts = openContexts(stores, config, logger, now);
  // The plan's max_members, asked of the billing service (none for a module built without it).
  contexts.invitations = withMemberLimit(contexts.invitations, deps, logger);
  contexts.runs = withRunLimit(contexts.runs, deps, logger);
  const kek = loadKeyEncryption(config.keyEncryption);
  const webhooks = webhooksModule({
    collections: contexts.webhooks,
    outbox: contexts.events,
    kek,
    config: config.webhooks,
    logger,
    now,
  });
  const timeouts = startRunTimeouts(contexts.runs, logger.child({ component: 'runs' }));
  // The gateway's registry (MCP servers, gateway keys) that the Agents API manages.
  const gateway = gatewayModule(stores.records, now);
  const playbooks = playbooksModule(stores.records, () => contexts.runs, now);
  // Scheduled jobs: their runs go through the runs' context, with the plan's run limit; playbook
  // targets through the playbooks', seeding targets to the brain's SeedingService.
  const jobs = jobsModule({
    records: stores.records,
    runs: contexts.runs,
    playbooks: playbooks.context,
    seeding: deps?.seeding,
    seedingConfig: config.seeding,
    outbox: contexts.events,
    config: config.jobs,
    logger,
    now,
  });
  contexts.deletion.owned.unshift(...(jobs.owned as RecordCollection<RecordDoc>[]));
  // Playbooks go with their organization, before the runs that name them.
  contexts.deletion.owned.unshift(...(playbooks.owned as RecordCollection<RecordDoc>[]));
  // Alert sources, rules and events (alerts/), which open investigations; purged with the rest.
  const alerts = openAlertCollections(stores.records);
  contexts.deletion.owned.unshift(...(Object.values(alerts) as RecordCollection<RecordDoc>[]));
  // Evaluation datasets and runs (handlers/evaluation/), a playbook's cases run through the runs
  // queue; an organization's deletion purges them.
  const evaluation = evaluationModule(stores.records, now, { playbooks: playbooks.context, runs: () => contexts.runs });
  contexts.deletion.owned.push(...evaluation.owned);
  contexts.deletion.closeWith = [(organizationId) => gateway.closeOrganization(organizationId)];
  return {
    services: [
      AgentsService,
      UsersService,
      OrganizationsService,
      ApiKeysService,
      AuditService,
      InvitationsService,
      TeamsService,
      ...gateway.services,
      ThreadsService,
      RunsService,
      RunUsageService,
      ...playbooks.services,
      AlertsService,
      EventOutboxService,
      ...webhooks.services,
      ...jobs.services,
      ...evaluation.services,
    ],
    routes: (router) => {
      gateway.routes(router);
      identityRoutes(router, contexts);
      otherRoutes(router, contexts);
      investigationRoutes(router, contexts);
      runUsageRoutes(router, contexts.runs);
      playbooks.routes(router);
      alertRoutes(router, {
        ...alerts,
        kek,
        outbox: contexts.events,
        runs: contexts.runs,
        playbooks: playbooks.context,
        endpoints: contexts.webhooks.endpoints,
        now,
      });
      // The service's events, taken by the webhooks relay (edge/webhooks/relay.ts).
      outboxRoutes(router, contexts.events);
      webhooks.routes(router);
      jobs.routes(router);
      evaluation.routes(router);
    },
    // Before it serves, every secret it keeps is sealed again under the current key-encryption
    // key (a rotation), as the edge does with its own; a key that opens none of them stops the start.
    start: async () => {
      await resealAtStart(logger, 'agents', kek, [
        sealedEndpointSecrets(contexts.webhooks.endpoints, kek),
        sealedSourceSecrets(alerts.sources, kek),
        gateway.sealedRecords(kek),
      ]);
    },
    close: async () => {
      await Promise.all([webhooks.close(), timeouts.stop(), jobs.close()]);
    },
    // Only the records store: this service keeps no vectors.
    probe: () => stores.probe(['records']),
  };
}
