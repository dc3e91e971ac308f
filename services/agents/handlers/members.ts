// Members of an organization: list, change a role, remove. The rules that keep an organization
// governable live here, with its data: there is always an owner, and only an owner grants, takes
// away or removes the owner role. Which roles may call these operations at all is the Agents
// API's authorization matrix (edge/api/access.ts); `actor_role` carries the caller's role for the
// owner rule.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CountMembersResponseSchema,
  ListMembersResponseSchema,
  RemoveMemberResponseSchema,
  type Role,
  UpdateMemberRoleResponseSchema,
  type CountMembersRequest,
  type ListMembersRequest,
  type RemoveMemberRequest,
  type UpdateMemberRoleRequest,
} from '../../../gen/mindgate/agents/v1/organizations_pb.js';
import { deleteWithEvents, putWithEvents } from '../../common/events/outbox.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { memberAdded, memberRemoved, memberUpdated, membershipSubject } from '../events.ts';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { withAccounts } from './member-accounts.ts';
import { leaveTeams } from './teams.ts';
import {
  OWNER_GRANTED,
  requireUser,
  ROLE_CHOICES,
  ROLE_NAMES,
  toMembership,
  type MembershipRecord,
  type OrganizationsContext,
  type RoleName,
} from './organizations.ts';

/** How many times a change is retried when another one to the same membership lands first. */
const CONFLICT_RETRIES = 5;

function requireRole(field: string, role: Role): RoleName {
  const name = ROLE_NAMES[role];
  if (!name) invalid(field, ROLE_CHOICES);
  return name;
}

async function memberOf(ctx: OrganizationsContext, organizationId: string, userId: string): Promise<MembershipRecord> {
  const membership = await ctx.memberships.get(`${organizationId}/${userId}`);
  if (!membership) throw new ConnectError('not a member of this organization', Code.NotFound);
  return membership;
}

const STALE = 'the membership changed since it was read (If-Match): read it again';
const LAST_OWNER = 'the organization must keep an owner: make another member owner first';

async function requireAnotherOwner(ctx: OrganizationsContext, organizationId: string): Promise<void> {
  const owners = await ctx.memberships.count({ organizationId, role: 'owner' });
  if (owners <= 1) throw failure(LAST_OWNER, Code.FailedPrecondition, REASONS.lastOwner);
}

/**
 * Two owners demoting or removing each other at once both pass requireAnotherOwner. Checked again
 * after the write, the loser of that race finds no owner left and puts the owner back.
 */
async function restoreIfOwnerless(ctx: OrganizationsContext, previous: MembershipRecord): Promise<void> {
  if (previous.role !== 'owner') return;
  if ((await ctx.memberships.count({ organizationId: previous.organizationId, role: 'owner' })) > 0) return;
  const current = await ctx.memberships.get(previous._id);
  const restored = { ...previous, version: (previous.version ?? 1) + 2, updatedAt: ctx.now() };
  const events = current ? memberUpdated(restored, current.role) : [memberAdded(restored, 'direct')];
  await putWithEvents(ctx.events, membershipSubject(ctx.memberships), restored, current, events);
  throw failure(LAST_OWNER, Code.FailedPrecondition, REASONS.lastOwner);
}

export async function listMembers(ctx: OrganizationsContext, req: ListMembersRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(
    ctx.memberships,
    { organizationId },
    { pageSize: req.pageSize, pageToken: req.pageToken },
    { field: 'createdAt', scope: `members:${organizationId}` },
  );
  const members = await withAccounts(ctx.users, page.items.map(toMembership));
  return create(ListMembersResponseSchema, { members, nextPageToken: page.nextPageToken });
}

export async function updateMemberRole(ctx: OrganizationsContext, req: UpdateMemberRoleRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const userId = requireUser(req.userId);
  const role = requireRole('role', req.role);
  const actor = requireRole('actor_role', req.actorRole);
  if (req.etag !== '' && !/^[0-9]{1,15}$/.test(req.etag)) invalid('etag', 'is not an etag of a membership');
  for (let attempt = 0; attempt < CONFLICT_RETRIES; attempt++) {
    const current = await memberOf(ctx, organizationId, userId);
    const version = current.version ?? 1;
    if (req.etag !== '' && req.etag !== String(version)) {
      throw failure(STALE, Code.FailedPrecondition, REASONS.etagMismatch);
    }
    const guarded = OWNER_GRANTED.has(current.role) ? current.role : OWNER_GRANTED.has(role) ? role : undefined;
    if (guarded && actor !== 'owner') {
      throw new ConnectError(`only an owner may grant or take away the ${guarded} role`, Code.PermissionDenied);
    }
    if (current.role === role)
      return create(UpdateMemberRoleResponseSchema, { membership: (await withAccounts(ctx.users, [toMembership(current)]))[0] });
    if (current.role === 'owner') await requireAnotherOwner(ctx, organizationId);
    const next: MembershipRecord = { ...current, role, version: version + 1, updatedAt: ctx.now() };
    const events = memberUpdated(next, current.role);
    if (
      await putWithEvents(ctx.events, membershipSubject(ctx.memberships), next, current, events, {
        expect: { version: current.version ?? null },
      })
    ) {
      await restoreIfOwnerless(ctx, current);
      return create(UpdateMemberRoleResponseSchema, { membership: (await withAccounts(ctx.users, [toMembership(next)]))[0] });
    }
    if (req.etag !== '') {
      throw failure(STALE, Code.FailedPrecondition, REASONS.etagMismatch);
    }
  }
  throw new ConnectError('the membership keeps changing; try again', Code.Aborted);
}

export async function removeMember(ctx: OrganizationsContext, req: RemoveMemberRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const userId = requireUser(req.userId);
  const actor = requireRole('actor_role', req.actorRole);
  const current = await memberOf(ctx, organizationId, userId);
  const leaving = req.actorUserId === userId;
  if (current.role === 'owner' && actor !== 'owner') {
    throw new ConnectError('only an owner may remove an owner', Code.PermissionDenied);
  }
  if (!leaving && actor !== 'owner' && actor !== 'admin') {
    throw new ConnectError('only an owner or admin may remove another member', Code.PermissionDenied);
  }
  if (current.role === 'owner') await requireAnotherOwner(ctx, organizationId);
  await deleteWithEvents(ctx.events, membershipSubject(ctx.memberships), current, [memberRemoved(current, leaving ? 'left' : 'removed')]);
  await restoreIfOwnerless(ctx, current);
  await leaveTeams(ctx.teamMembers, organizationId, userId);
  return create(RemoveMemberResponseSchema, {});
}

export async function countMembers(ctx: OrganizationsContext, req: CountMembersRequest) {
  const organizationId = requireOrganization(req.organizationId);
  return create(CountMembersResponseSchema, { count: await ctx.memberships.count({ organizationId }) });
}
