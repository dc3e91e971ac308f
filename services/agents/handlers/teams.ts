// Teams of an organization and who is in them. A team name is unique in its organization without
// regard to case (a unique index on the lower-cased name); a team member must be a member of the
// organization, and leaving the organization leaves its teams (members.ts calls leaveTeams).
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AddTeamMemberResponseSchema,
  TeamBrainAccessSchema,
  CreateTeamResponseSchema,
  DeleteTeamResponseSchema,
  GetTeamResponseSchema,
  ListTeamMembersResponseSchema,
  ListTeamsResponseSchema,
  RemoveTeamMemberResponseSchema,
  TeamMemberSchema,
  TeamSchema,
  UpdateTeamResponseSchema,
  type AddTeamMemberRequest,
  type CreateTeamRequest,
  type DeleteTeamRequest,
  type GetTeamRequest,
  type ListTeamMembersRequest,
  type ListTeamsRequest,
  type RemoveTeamMemberRequest,
  type UpdateTeamRequest,
} from '../../../gen/mindgate/agents/v1/teams_pb.js';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { UniqueViolationError } from '../../common/storage/records/errors.ts';
import { withAccounts } from './member-accounts.ts';
import type { UserRecord } from './users.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { newId, requireUser, type MembershipRecord } from './organizations.ts';

const TEAM_ID = /^team_[A-Za-z0-9]{1,60}$/;

export interface TeamRecord extends RecordDoc {
  organizationId: string;
  name: string;
  /** The name lower-cased, for the unique index. */
  nameKey: string;
  description: string;
  createdAt: number;
  updatedAt: number;
  version: number;
  /** What the team may reach in the Brain (team-brain-access.ts); absent: no restriction. */
  brainAccess?: { namespaces: string[]; keyPrefixes: string[] };
}

export interface TeamMemberRecord extends RecordDoc {
  organizationId: string;
  teamId: string;
  userId: string;
  addedAt: number;
}

export interface TeamsContext {
  teams: RecordCollection<TeamRecord>;
  teamMembers: RecordCollection<TeamMemberRecord>;
  memberships: RecordCollection<MembershipRecord>;
  /** The accounts, whose names and addresses team member answers join (member-accounts.ts). */
  users: RecordCollection<UserRecord>;
  now: () => number;
}

export async function toTeam(ctx: TeamsContext, r: TeamRecord) {
  return create(TeamSchema, {
    teamId: r._id,
    organizationId: r.organizationId,
    name: r.name,
    description: r.description,
    memberCount: await ctx.teamMembers.count({ teamId: r._id }),
    etag: String(r.version),
    createTime: timestampFromMs(r.createdAt),
    updateTime: timestampFromMs(r.updatedAt),
    brainAccess: r.brainAccess ? create(TeamBrainAccessSchema, r.brainAccess) : undefined,
  });
}

const toTeamMember = (r: TeamMemberRecord) =>
  create(TeamMemberSchema, { teamId: r.teamId, userId: r.userId, addTime: timestampFromMs(r.addedAt) });

const requireName = (value: string) => requireText('name', value.trim(), 100, { required: true }).trim();
const requireDescription = (value: string) => requireText('description', value, 1_000);

export async function ownedTeam(ctx: TeamsContext, organizationId: string, teamId: string): Promise<TeamRecord> {
  if (!TEAM_ID.test(teamId)) invalid('team_id', 'is not a team id');
  const team = await ctx.teams.get(teamId);
  if (!team || team.organizationId !== organizationId) throw new ConnectError(`team "${teamId}" does not exist`, Code.NotFound);
  return team;
}

async function putTeam(ctx: TeamsContext, team: TeamRecord, expect: null | { version: number }): Promise<boolean> {
  try {
    return await ctx.teams.put(team, { expect });
  } catch (err) {
    if (err instanceof UniqueViolationError) throw new ConnectError(`a team named "${team.name}" exists`, Code.AlreadyExists);
    throw err;
  }
}

export async function createTeam(ctx: TeamsContext, req: CreateTeamRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const name = requireName(req.name);
  const now = ctx.now();
  const team: TeamRecord = {
    _id: newId('team'),
    organizationId,
    name,
    nameKey: name.toLowerCase(),
    description: requireDescription(req.description),
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  await putTeam(ctx, team, null);
  return create(CreateTeamResponseSchema, { team: await toTeam(ctx, team) });
}

export async function getTeam(ctx: TeamsContext, req: GetTeamRequest) {
  const team = await ownedTeam(ctx, requireOrganization(req.organizationId), req.teamId);
  return create(GetTeamResponseSchema, { team: await toTeam(ctx, team) });
}

export async function listTeams(ctx: TeamsContext, req: ListTeamsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(ctx.teams, { organizationId }, req, { field: 'createdAt', scope: `teams:${organizationId}` });
  return create(ListTeamsResponseSchema, {
    teams: await Promise.all(page.items.map((t) => toTeam(ctx, t))),
    nextPageToken: page.nextPageToken,
  });
}

export async function updateTeam(ctx: TeamsContext, req: UpdateTeamRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const current = await ownedTeam(ctx, organizationId, req.teamId);
  if (req.etag !== '' && req.etag !== String(current.version)) {
    throw failure('the team changed since it was read (If-Match): read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
  const name = req.name === undefined ? current.name : requireName(req.name);
  const next: TeamRecord = {
    ...current,
    name,
    nameKey: name.toLowerCase(),
    description: req.description === undefined ? current.description : requireDescription(req.description),
    updatedAt: ctx.now(),
    version: current.version + 1,
  };
  if (!(await putTeam(ctx, next, { version: current.version }))) {
    throw failure('the team changed since it was read: read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
  return create(UpdateTeamResponseSchema, { team: await toTeam(ctx, next) });
}

export async function deleteTeam(ctx: TeamsContext, req: DeleteTeamRequest) {
  const team = await ownedTeam(ctx, requireOrganization(req.organizationId), req.teamId);
  await ctx.teams.delete(team._id);
  await ctx.teamMembers.deleteMany({ teamId: team._id });
  return create(DeleteTeamResponseSchema, {});
}

export async function addTeamMember(ctx: TeamsContext, req: AddTeamMemberRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const team = await ownedTeam(ctx, organizationId, req.teamId);
  const userId = requireUser(req.userId);
  if (!(await ctx.memberships.get(`${organizationId}/${userId}`))) {
    throw new ConnectError(`user "${userId}" is not a member of the organization: invite them first`, Code.FailedPrecondition);
  }
  const id = `${team._id}/${userId}`;
  const existing = await ctx.teamMembers.get(id);
  const member = existing ?? { _id: id, organizationId, teamId: team._id, userId, addedAt: ctx.now() };
  if (!existing) await ctx.teamMembers.put(member);
  const [named] = await withAccounts(ctx.users, [toTeamMember(member)]);
  return create(AddTeamMemberResponseSchema, { member: named });
}

export async function removeTeamMember(ctx: TeamsContext, req: RemoveTeamMemberRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const team = await ownedTeam(ctx, organizationId, req.teamId);
  const userId = requireUser(req.userId);
  if (!(await ctx.teamMembers.delete(`${team._id}/${userId}`))) {
    throw new ConnectError(`user "${userId}" is not in the team`, Code.NotFound);
  }
  return create(RemoveTeamMemberResponseSchema, {});
}

export async function listTeamMembers(ctx: TeamsContext, req: ListTeamMembersRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const team = await ownedTeam(ctx, organizationId, req.teamId);
  const page = await findPage(ctx.teamMembers, { teamId: team._id }, req, { field: 'addedAt', scope: `team-members:${team._id}` });
  const members = await withAccounts(ctx.users, page.items.map(toTeamMember));
  return create(ListTeamMembersResponseSchema, { members, nextPageToken: page.nextPageToken });
}

/** Takes a user who leaves the organization out of all its teams. */
export async function leaveTeams(teamMembers: RecordCollection<TeamMemberRecord>, organizationId: string, userId: string): Promise<void> {
  await teamMembers.deleteMany({ organizationId, userId });
}
