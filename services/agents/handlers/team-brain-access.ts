// Team access to the Brain: a team may be narrowed to namespaces and/or key prefixes of the
// organization's memory. A member of one or more narrowed teams reaches what one of those teams
// allows (the union); a member of no narrowed team reaches everything; an API key naming a team
// reaches what that team allows (everything when the team is not narrowed, nothing once the team
// is deleted). The Brain enforces the answer of ResolveBrainAccess (services/brain/access.ts).
import { create } from '@bufbuild/protobuf';
import {
  BrainAccessRuleSchema,
  ResolveBrainAccessResponseSchema,
  SetTeamBrainAccessResponseSchema,
  TeamBrainAccessSchema,
  type ResolveBrainAccessRequest,
  type SetTeamBrainAccessRequest,
  type TeamBrainAccess,
} from '../../../gen/mindgate/agents/v1/teams_pb.js';
import { Code } from '@connectrpc/connect';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import { requireUser } from './organizations.ts';
import { ownedTeam, toTeam, type TeamRecord, type TeamsContext } from './teams.ts';

const NAMESPACES = ['knowledge', 'episodes'];
const KEY_PREFIX = /^[A-Za-z0-9._:/-]{1,200}$/;
const MAX_PREFIXES = 50;

function requireBrainAccess(access: TeamBrainAccess): { namespaces: string[]; keyPrefixes: string[] } {
  const namespaces = [...new Set(access.namespaces)];
  namespaces.forEach((n, i) => {
    if (!NAMESPACES.includes(n)) invalid(`brain_access.namespaces[${i}]`, 'must be "knowledge" or "episodes"');
  });
  const keyPrefixes = [...new Set(access.keyPrefixes)];
  if (keyPrefixes.length > MAX_PREFIXES) invalid('brain_access.key_prefixes', `must have at most ${MAX_PREFIXES} items`);
  keyPrefixes.forEach((p, i) => {
    if (!KEY_PREFIX.test(p)) invalid(`brain_access.key_prefixes[${i}]`, 'must be 1-200 characters of [A-Za-z0-9._:/-]');
  });
  if (!namespaces.length && !keyPrefixes.length) {
    invalid('brain_access', 'must name namespaces or key_prefixes; unset it to lift the restriction');
  }
  return { namespaces, keyPrefixes };
}

export async function setTeamBrainAccess(ctx: TeamsContext, req: SetTeamBrainAccessRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const current = await ownedTeam(ctx, organizationId, req.teamId);
  if (req.etag !== '' && req.etag !== String(current.version)) {
    throw failure('the team changed since it was read (If-Match): read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
  const { brainAccess: _previous, ...rest } = current;
  const next: TeamRecord = { ...rest, updatedAt: ctx.now(), version: current.version + 1 };
  if (req.brainAccess) next.brainAccess = requireBrainAccess(req.brainAccess);
  if (!(await ctx.teams.put(next, { expect: { version: current.version } }))) {
    throw failure('the team changed since it was read: read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
  return create(SetTeamBrainAccessResponseSchema, { team: await toTeam(ctx, next) });
}

const rule = (team: TeamRecord) =>
  create(BrainAccessRuleSchema, { teamId: team._id, teamName: team.name, access: create(TeamBrainAccessSchema, team.brainAccess) });

export async function resolveBrainAccess(ctx: TeamsContext, req: ResolveBrainAccessRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const holder = req.holder;
  if (holder.case === 'teamId') {
    const team = await ctx.teams.get(holder.value);
    if (!team || team.organizationId !== organizationId) return create(ResolveBrainAccessResponseSchema, { restricted: true });
    return create(ResolveBrainAccessResponseSchema, { restricted: Boolean(team.brainAccess), rules: team.brainAccess ? [rule(team)] : [] });
  }
  if (holder.case !== 'userId') invalid('holder', 'must name a user_id or a team_id');
  const userId = requireUser(holder.value);
  const memberships = await ctx.teamMembers.find({ organizationId, userId }, { limit: 1_000 });
  const teams = (await ctx.teams.getMany(memberships.map((m) => m.teamId))).filter((t) => t.brainAccess);
  return create(ResolveBrainAccessResponseSchema, { restricted: teams.length > 0, rules: teams.map(rule) });
}
