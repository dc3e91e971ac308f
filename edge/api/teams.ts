// The REST API's teams: groups of an organization's members, created, renamed (If-Match) and
// deleted by owners and admins, readable by every member. Each a call to the agents service's
// TeamsService.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import type { Team, TeamMember } from '../../gen/mindgate/agents/v1/teams_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import { UserId } from './members.ts';
import {
  errors,
  iso,
  json,
  listEnvelope,
  listing,
  pageArgs,
  sendPage,
  notFoundAs404,
  OrganizationId,
  orgParams,
  pageQuery,
  readJson,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

export const BrainAccessSchema = z
  .object({
    namespaces: z.array(z.enum(['knowledge', 'episodes'])).meta({ description: 'Empty: both namespaces.' }),
    key_prefixes: z.array(z.string()).meta({ description: 'Empty: every key.' }),
  })
  .meta({ title: 'BrainAccess' });

export const TeamId = z.string().regex(/^team_[A-Za-z0-9]{1,60}$/, { error: 'must be a team id (team_...)' });
export const teamParams = z.object({ organization_id: OrganizationId, team_id: TeamId });
const teamMemberParams = teamParams.extend({ user_id: UserId });

const TeamName = z.string().trim().min(1, { error: 'must not be empty' }).max(100, { error: 'must be at most 100 characters' });
const Description = z.string().max(1_000, { error: 'must be at most 1000 characters' });

export const TeamSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    description: z.string(),
    member_count: z.int(),
    brain_access: BrainAccessSchema.nullable().meta({
      description: 'What the team may reach in the Brain (setTeamBrainAccess); null: the team narrows nothing.',
    }),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ title: 'Team' });

const TeamMemberSchema = z
  .object({
    user_id: z.string(),
    name: z.string().nullable().meta({ description: "The member's name, from their account; null when unknown." }),
    email: z.string().nullable().meta({ description: "The member's e-mail address, from their account; null when unknown." }),
    added_at: z.string().nullable(),
  })
  .meta({ title: 'TeamMember' });

export const CreateTeamSchema = z.object({ name: TeamName, description: Description.optional() }).strict().meta({ title: 'CreateTeam' });
export const UpdateTeamSchema = z
  .object({ name: TeamName.optional(), description: Description.optional() })
  .strict()
  .refine((b) => b.name !== undefined || b.description !== undefined, { error: 'give name or description' })
  .meta({ title: 'UpdateTeam', minProperties: 1 });

export const teamJson = (t: Team) => ({
  id: t.teamId,
  organization_id: t.organizationId,
  name: t.name,
  description: t.description,
  member_count: t.memberCount,
  brain_access: t.brainAccess
    ? { namespaces: t.brainAccess.namespaces as BrainNamespace[], key_prefixes: t.brainAccess.keyPrefixes }
    : null,
  created_at: iso(t.createTime as Timestamp | undefined),
  updated_at: iso(t.updateTime as Timestamp | undefined),
});
const teamMemberJson = (m: TeamMember) => ({
  user_id: m.userId,
  name: m.userName || null,
  email: m.userEmail || null,
  added_at: iso(m.addTime as Timestamp | undefined),
});
type BrainNamespace = 'knowledge' | 'episodes';
export const withEtag = (description: string) => ({ ...json(TeamSchema, description), headers: ETAG_HEADER });
const tags = ['Teams'];

function createTeamRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/teams',
      operationId: 'createTeam',
      summary: 'Create a team',
      description: 'A team name is unique in the organization, without regard to case (409).',
      tags,
      params: orgParams,
      responses: { '201': withEtag('The team.'), '401': errors['401'], '403': errors['403'], '409': 'Conflict', '422': errors['422'] },
      handler: async (c) => {
        const body = await readJson(c, CreateTeamSchema, limit);
        const { team } = await ctx.clients.teams.createTeam({
          organizationId: c.input.params.organization_id,
          name: body.name,
          description: body.description ?? '',
        });
        sendJson(c.res, 201, teamJson(team!), { etag: quoteEtag(team!.etag) });
      },
    }),
    body: CreateTeamSchema,
    creates: true,
  };
}

function listTeamsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/teams',
    operationId: 'listTeams',
    summary: 'List teams',
    description: "The organization's teams, oldest first.",
    tags,
    params: orgParams,
    query: pageQuery,
    responses: {
      '200': json(listEnvelope('teams', TeamSchema, 'TeamList'), 'One page of teams.'),
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const res = await listing(() =>
        ctx.clients.teams.listTeams({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
      );
      sendPage(c, 'teams', res.teams.map(teamJson), res.nextPageToken);
    },
  });
}

function getTeamRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/teams/:team_id',
    operationId: 'getTeam',
    summary: 'Get a team',
    tags,
    params: teamParams,
    responses: { '200': withEtag('The team.'), '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
    handler: async (c) => {
      const { organization_id: organizationId, team_id: teamId } = c.input.params;
      const { team } = await notFoundAs404(() => ctx.clients.teams.getTeam({ organizationId, teamId }));
      sendJson(c.res, 200, teamJson(team!), { etag: quoteEtag(team!.etag) });
    },
  });
}

function updateTeamRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/organizations/:organization_id/teams/:team_id',
      operationId: 'updateTeam',
      summary: 'Change a team',
      description: 'Changes the name or description. With If-Match, only if the team is still at that ETag (412 otherwise).',
      tags,
      params: teamParams,
      responses: {
        '200': withEtag('The team, as stored.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '409': 'Conflict',
        '412': 'PreconditionFailed',
        '422': errors['422'],
      },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, UpdateTeamSchema, limit);
        const { organization_id: organizationId, team_id: teamId } = c.input.params;
        const { team } = await notFoundAs404(() =>
          ctx.clients.teams.updateTeam({ organizationId, teamId, name: body.name, description: body.description, etag }),
        );
        sendJson(c.res, 200, teamJson(team!), { etag: quoteEtag(team!.etag) });
      },
    }),
    body: UpdateTeamSchema,
  };
}

function deleteTeamRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/teams/:team_id',
    operationId: 'deleteTeam',
    summary: 'Delete a team',
    description: 'Deletes the team and who was in it; the members stay in the organization.',
    tags,
    params: teamParams,
    responses: { '204': { description: 'Deleted.' }, '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
    handler: async (c) => {
      const { organization_id: organizationId, team_id: teamId } = c.input.params;
      await notFoundAs404(() => ctx.clients.teams.deleteTeam({ organizationId, teamId }));
      c.res.writeHead(204).end();
    },
  });
}

function listTeamMembersRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/teams/:team_id/members',
    operationId: 'listTeamMembers',
    summary: "List a team's members",
    tags,
    params: teamParams,
    query: pageQuery,
    responses: {
      '200': json(listEnvelope('members', TeamMemberSchema, 'TeamMemberList'), 'One page of the members.'),
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '422': errors['422'],
    },
    handler: async (c) => {
      const { organization_id: organizationId, team_id: teamId } = c.input.params;
      const res = await listing(() =>
        notFoundAs404(() => ctx.clients.teams.listTeamMembers({ organizationId, teamId, ...pageArgs(c.input.query) })),
      );
      sendPage(c, 'members', res.members.map(teamMemberJson), res.nextPageToken);
    },
  });
}

function addTeamMemberRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'PUT',
    path: '/organizations/:organization_id/teams/:team_id/members/:user_id',
    operationId: 'addTeamMember',
    summary: 'Put a member in a team',
    description: 'No change when already in it. 412 when the user is not a member of the organization.',
    tags,
    params: teamMemberParams,
    responses: {
      '200': json(TeamMemberSchema, 'The team membership.'),
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '412': 'PreconditionFailed',
      '422': errors['422'],
    },
    handler: async (c) => {
      const { organization_id: organizationId, team_id: teamId, user_id: userId } = c.input.params;
      const { member } = await notFoundAs404(() => ctx.clients.teams.addTeamMember({ organizationId, teamId, userId }));
      sendJson(c.res, 200, teamMemberJson(member!));
    },
  });
}

function removeTeamMemberRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/teams/:team_id/members/:user_id',
    operationId: 'removeTeamMember',
    summary: 'Take a member out of a team',
    tags,
    params: teamMemberParams,
    responses: { '204': { description: 'Removed.' }, '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
    handler: async (c) => {
      const { organization_id: organizationId, team_id: teamId, user_id: userId } = c.input.params;
      await notFoundAs404(() => ctx.clients.teams.removeTeamMember({ organizationId, teamId, userId }));
      c.res.writeHead(204).end();
    },
  });
}

export function teamRoutes(deps: RouteDeps): RestRoute[] {
  return [
    createTeamRoute(deps),
    listTeamsRoute(deps),
    getTeamRoute(deps),
    updateTeamRoute(deps),
    deleteTeamRoute(deps),
    listTeamMembersRoute(deps),
    addTeamMemberRoute(deps),
    removeTeamMemberRoute(deps),
  ];
}
