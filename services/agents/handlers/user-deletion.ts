// Deleting an account: refused while the user is the only owner of an organization (nothing is
// deleted then); otherwise their memberships and team memberships go first, then the sign-in
// records (verification tokens, social identities, the failed-attempt counter, the address), the
// account last, so a deletion cut short can simply be asked for again. The authorization server's
// grants and sessions of the user are revoked by the edge, which owns them.
import { create } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import { DeleteUserResponseSchema, type DeleteUserRequest } from '../../../gen/mindgate/agents/v1/users_pb.js';
import { deleteWithEvents, putWithEvents } from '../../common/events/outbox.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { memberAdded, memberRemoved, membershipSubject } from '../events.ts';
import { releaseAddress } from './email-index.ts';
import type { MembershipRecord } from './organizations.ts';
import { existingUser, signInCounterId, type UsersContext } from './users.ts';

const MAX_MEMBERSHIPS = 10_000;

function lastOwner(organizationIds: string[]) {
  return failure(
    `you are the only owner of ${organizationIds.join(', ')}: transfer the ownership (or delete the organization) first`,
    Code.FailedPrecondition,
    REASONS.lastOwner,
  );
}

/**
 * The memberships whose last owner must not leave: those of organizations that still exist. A
 * deleted organization is closed at once and keeps its memberships only until its purge.
 */
async function ownedLive(ctx: UsersContext, memberships: MembershipRecord[]): Promise<Set<string>> {
  const owned = memberships.filter((m) => m.role === 'owner').map((m) => m.organizationId);
  const live = owned.length ? await ctx.organizations.getMany(owned) : [];
  return new Set(live.map((o) => o._id));
}

/** The organizations where the user is the only owner. */
async function soleOwnerships(ctx: UsersContext, memberships: MembershipRecord[], live: Set<string>): Promise<string[]> {
  const sole: string[] = [];
  for (const m of memberships.filter((m) => m.role === 'owner' && live.has(m.organizationId))) {
    if ((await ctx.memberships.count({ organizationId: m.organizationId, role: 'owner' })) <= 1) sole.push(m.organizationId);
  }
  return sole;
}

/**
 * Removes the memberships. Two co-owners deleting their accounts at once both pass the first
 * check; checked again after each removal, the loser of that race finds no owner left, and every
 * membership removed so far is put back.
 */
async function removeMemberships(ctx: UsersContext, memberships: MembershipRecord[], live: Set<string>): Promise<void> {
  const removed: MembershipRecord[] = [];
  for (const m of memberships) {
    await deleteWithEvents(ctx.events, membershipSubject(ctx.memberships), m, [memberRemoved(m, 'account_deleted')]);
    removed.push(m);
    if (
      m.role === 'owner' &&
      live.has(m.organizationId) &&
      (await ctx.memberships.count({ organizationId: m.organizationId, role: 'owner' })) === 0
    ) {
      for (const r of removed)
        await putWithEvents(ctx.events, membershipSubject(ctx.memberships), r, undefined, [memberAdded(r, 'direct')]);
      throw lastOwner([m.organizationId]);
    }
  }
}

export async function deleteUser(ctx: UsersContext, req: DeleteUserRequest) {
  const user = await existingUser(ctx, req.userId);
  const memberships = await ctx.memberships.find({ userId: user._id }, { limit: MAX_MEMBERSHIPS });
  const live = await ownedLive(ctx, memberships);
  const sole = await soleOwnerships(ctx, memberships, live);
  if (sole.length > 0) throw lastOwner(sole);
  await removeMemberships(ctx, memberships, live);
  const teamMemberships = await ctx.teamMembers.deleteMany({ userId: user._id });
  const socialIdentities = await ctx.social.deleteMany({ userId: user._id });
  await ctx.emailTokens.deleteMany({ userId: user._id });
  await ctx.attempts.delete(signInCounterId(user.email));
  await releaseAddress(ctx, user.email, user._id);
  await ctx.users.delete(user._id);
  return create(DeleteUserResponseSchema, {
    organizationIds: memberships.map((m) => m.organizationId),
    teamMembershipsRemoved: teamMemberships,
    socialIdentitiesRemoved: socialIdentities,
  });
}
