import { AgentsService } from '../../gen/mindgate/agents/v1/agents_pb.js';
import { AuditService } from '../../gen/mindgate/agents/v1/audit_pb.js';
import { InvitationsService } from '../../gen/mindgate/agents/v1/invitations_pb.js';
import { TeamsService } from '../../gen/mindgate/agents/v1/teams_pb.js';
import { ApiKeysService } from '../../gen/mindgate/agents/v1/api_keys_pb.js';
import { OrganizationsService } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import type { Logger } from '../common/log.ts';
import type { RpcServiceModule } from '../common/rpc/server.ts';
import type { Stores } from '../common/stores.ts';
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
import {
  acceptInvitation,
  createInvitation,
  getInvitationByToken,
  listInvitations,
  resendInvitation,
  revokeInvitation,
  type InvitationRecord,
  type InvitationsContext,
} from './handlers/invitations.ts';
import { listEvents, recordEvent, type AuditContext, type AuditRecord } from './handlers/audit.ts';
import { gatewayModule } from './gateway-module.ts';

export function createAgentsModule(stores: Stores, _logger: Logger, now: () => number = Date.now): RpcServiceModule {
  const ctx: AgentsContext = {
    agents: stores.records.collection<AgentRecord>('agents', { indexes: [{ fields: ['organizationId', 'createdAt'] }] }),
    now,
  };
  const teamMembers = stores.records.collection<TeamMemberRecord>('team_members', {
    indexes: [{ fields: ['teamId', 'addedAt'] }, { fields: ['organizationId', 'userId'] }],
  });
  const orgs: OrganizationsContext = {
    teamMembers,
    organizations: stores.records.collection<OrganizationRecord>('organizations', { indexes: [{ fields: ['slug'], unique: true }] }),
    memberships: stores.records.collection<MembershipRecord>('memberships', {
      indexes: [{ fields: ['userId', 'createdAt'] }, { fields: ['organizationId'] }, { fields: ['organizationId', 'createdAt'] }],
    }),
    now,
  };

  const audit: AuditContext = {
    events: stores.records.collection<AuditRecord>('audit_events', {
      indexes: [{ fields: ['organizationId', 'createdAt'] }, { fields: ['organizationId', 'actorId', 'createdAt'] }],
    }),
    organizations: orgs.organizations,
    now,
  };
  const invitations: InvitationsContext = {
    ...orgs,
    invitations: stores.records.collection<InvitationRecord>('invitations', {
      indexes: [{ fields: ['tokenHash'] }, { fields: ['organizationId', 'createdAt'] }, { fields: ['organizationId', 'email', 'state'] }],
    }),
  };
  const teams: TeamsContext = {
    teams: stores.records.collection<TeamRecord>('teams', {
      indexes: [{ fields: ['organizationId', 'nameKey'], unique: true }, { fields: ['organizationId', 'createdAt'] }],
    }),
    teamMembers,
    memberships: orgs.memberships,
    now,
  };
  const keys: ApiKeysContext = {
    apiKeys: stores.records.collection<ApiKeyRecord>('api_keys', { indexes: [{ fields: ['organizationId', 'createdAt'] }] }),
    teams: teams.teams,
    now,
  };
  // The gateway's registry (MCP servers, gateway keys) that the Agents API manages.
  const gateway = gatewayModule(stores.records, now);
  return {
    services: [AgentsService, OrganizationsService, ApiKeysService, AuditService, InvitationsService, TeamsService, ...gateway.services],
    routes: (router) => {
      gateway.routes(router);
      router.service(AgentsService, {
        registerAgent: (req) => registerAgent(ctx, req),
        listAgents: (req) => listAgents(ctx, req),
        recordActivity: (req) => recordActivity(ctx, req),
      });
      router.service(OrganizationsService, {
        createOrganization: (req) => createOrganization(orgs, req),
        getOrganization: (req) => getOrganization(orgs, req),
        listOrganizations: (req) => listOrganizations(orgs, req),
        getMembership: (req) => getMembership(orgs, req),
        addMember: (req) => addMember(orgs, req),
        listMembers: (req) => listMembers(orgs, req),
        updateMemberRole: (req) => updateMemberRole(orgs, req),
        removeMember: (req) => removeMember(orgs, req),
        updateOrganization: (req) => updateOrganization(orgs, req),
        transferOwnership: (req) => transferOwnership(orgs, req),
        countMembers: (req) => countMembers(orgs, req),
      });
      router.service(AuditService, {
        recordEvent: (req) => recordEvent(audit, req),
        listEvents: (req) => listEvents(audit, req),
      });
      router.service(InvitationsService, {
        createInvitation: (req) => createInvitation(invitations, req),
        listInvitations: (req) => listInvitations(invitations, req),
        resendInvitation: (req) => resendInvitation(invitations, req),
        revokeInvitation: (req) => revokeInvitation(invitations, req),
        getInvitationByToken: (req) => getInvitationByToken(invitations, req),
        acceptInvitation: (req) => acceptInvitation(invitations, req),
      });
      router.service(TeamsService, {
        createTeam: (req) => createTeam(teams, req),
        getTeam: (req) => getTeam(teams, req),
        listTeams: (req) => listTeams(teams, req),
        updateTeam: (req) => updateTeam(teams, req),
        deleteTeam: (req) => deleteTeam(teams, req),
        addTeamMember: (req) => addTeamMember(teams, req),
        removeTeamMember: (req) => removeTeamMember(teams, req),
        listTeamMembers: (req) => listTeamMembers(teams, req),
      });
      router.service(ApiKeysService, {
        createApiKey: (req) => createApiKey(keys, req),
        listApiKeys: (req) => listApiKeys(keys, req),
        rotateApiKey: (req) => rotateApiKey(keys, req),
        revokeApiKey: (req) => revokeApiKey(keys, req),
        verifyApiKey: (req) => verifyApiKey(keys, req),
      });
    },
    probe: async () => {
      await stores.records.ping();
      return true;
    },
  };
}
