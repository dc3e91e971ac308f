// Invitations into an organization. The token in the e-mailed link is 256 random bits; only its
// SHA-256 is stored (looked up by it), a resend replaces it, and accepting uses it up with a
// compare-and-set, so a link works once. Only an account with the invited address may accept.
import { createHash, randomBytes } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AcceptInvitationResponseSchema,
  CreateInvitationResponseSchema,
  GetInvitationByTokenResponseSchema,
  InvitationSchema,
  InvitationState,
  ListInvitationsResponseSchema,
  ReplaceInvitationLinkResponseSchema,
  ResendInvitationResponseSchema,
  RevokeInvitationResponseSchema,
  type AcceptInvitationRequest,
  type CreateInvitationRequest,
  type GetInvitationByTokenRequest,
  type ListInvitationsRequest,
  type ReplaceInvitationLinkRequest,
  type ResendInvitationRequest,
  type RevokeInvitationRequest,
} from '../../../gen/mindgate/agents/v1/invitations_pb.js';
import { putWithEvents } from '../../common/events/outbox.ts';
import { invalid, requireList, requireOrganization } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import type { MemberLimit } from './member-limit.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import {
  newId,
  OWNER_GRANTED,
  requireUser,
  ROLE_CHOICES,
  ROLE_NAMES,
  ROLES,
  toMembership,
  type MembershipRecord,
  type OrganizationRecord,
  type OrganizationsContext,
  type RoleName,
} from './organizations.ts';
import { invitationEvent, invitationSubject, memberAdded, memberUpdated, membershipSubject } from '../events.ts';
import type { TeamMemberRecord, TeamRecord } from './teams.ts';

export const INVITATION_TTL_MS = 7 * 86_400_000;
const LADDER: RoleName[] = ['viewer', 'member', 'admin', 'owner'];

/**
 * Whether a member's role already gives what an invitation would: a rung of the ladder gives
 * those below it, a billing admin a viewer's rights, an owner everything. Otherwise accepting the
 * invitation gives its role.
 */
function covers(held: RoleName, invited: RoleName): boolean {
  if (held === invited || held === 'owner') return true;
  if (held === 'billing_admin' || invited === 'billing_admin') return invited === 'viewer';
  return LADDER.indexOf(held) >= LADDER.indexOf(invited);
}
const EMAIL =
  /^[^\s@<>()[\]\\,;:"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
const INVITATION_ID = /^inv_[A-Za-z0-9]{1,60}$/;
const MAX_TEAMS = 20;

export interface InvitationRecord extends RecordDoc {
  organizationId: string;
  email: string;
  role: RoleName;
  invitedBy: string;
  tokenHash: string;
  state: 'pending' | 'accepted' | 'revoked';
  createdAt: number;
  /** Epoch ms after which a pending invitation no longer works (the record stays, listed as expired). */
  expireAt: number;
  acceptedBy?: string;
  acceptedAt?: number;
  /** Teams the invitee joins on accepting; absent on invitations from before teams. */
  teamIds?: string[];
}

export interface InvitationsContext extends OrganizationsContext {
  invitations: RecordCollection<InvitationRecord>;
  teams: RecordCollection<TeamRecord>;
  /** The plan's max_members (member-limit.ts); absent: no limit. */
  memberLimit?: MemberLimit;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
const newToken = () => randomBytes(32).toString('base64url');

function stateOf(r: InvitationRecord, now: number): InvitationState {
  if (r.state === 'accepted') return InvitationState.ACCEPTED;
  if (r.state === 'revoked') return InvitationState.REVOKED;
  return r.expireAt <= now ? InvitationState.EXPIRED : InvitationState.PENDING;
}

function toInvitation(r: InvitationRecord, now: number) {
  return create(InvitationSchema, {
    invitationId: r._id,
    organizationId: r.organizationId,
    email: r.email,
    role: ROLES[r.role],
    state: stateOf(r, now),
    invitedBy: r.invitedBy,
    createTime: timestampFromMs(r.createdAt),
    expireTime: timestampFromMs(r.expireAt),
    acceptedBy: r.acceptedBy ?? '',
    acceptTime: r.acceptedAt === undefined ? undefined : timestampFromMs(r.acceptedAt),
    teamIds: r.teamIds ?? [],
  });
}

function requireEmail(value: string): string {
  const email = value.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) invalid('email', 'must be an e-mail address');
  return email;
}

function requireRole(role: number): RoleName {
  const name = ROLE_NAMES[role];
  if (!name) invalid('role', ROLE_CHOICES);
  return name;
}

/** The invitation's teams: each a team of the organization (NOT_FOUND naming the first that is not). */
async function requireTeams(ctx: InvitationsContext, organizationId: string, teamIds: string[]): Promise<string[]> {
  const ids = requireList('team_ids', teamIds, MAX_TEAMS, 100);
  const found = new Map((await ctx.teams.getMany(ids)).map((t) => [t._id, t]));
  const missing = ids.find((id) => found.get(id)?.organizationId !== organizationId);
  if (missing !== undefined) throw new ConnectError(`team "${missing}" is not a team of this organization`, Code.NotFound);
  return ids;
}

async function owned(ctx: InvitationsContext, organizationId: string, invitationId: string): Promise<InvitationRecord> {
  if (!INVITATION_ID.test(invitationId)) invalid('invitation_id', 'is not an invitation id');
  const record = await ctx.invitations.get(invitationId);
  if (!record || record.organizationId !== organizationId)
    throw new ConnectError(`invitation "${invitationId}" does not exist`, Code.NotFound);
  return record;
}

export async function createInvitation(ctx: InvitationsContext, req: CreateInvitationRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const email = requireEmail(req.email);
  const role = requireRole(req.role);
  const invitedBy = requireUser(req.invitedBy, 'invited_by');
  if (OWNER_GRANTED.has(role) && ROLE_NAMES[req.actorRole] !== 'owner') {
    throw new ConnectError(`only an owner may invite an ${role === 'owner' ? 'owner' : 'billing admin'}`, Code.PermissionDenied);
  }
  if (!(await ctx.organizations.get(organizationId)))
    throw new ConnectError(`organization "${organizationId}" does not exist`, Code.NotFound);
  const teamIds = await requireTeams(ctx, organizationId, req.teamIds);
  const now = ctx.now();
  const pending = await ctx.invitations.find({ organizationId, email, state: 'pending', expireAt: { $gt: now } }, { limit: 1 });
  if (pending.length > 0) throw new ConnectError(`${email} already has a pending invitation: resend it instead`, Code.AlreadyExists);
  await ctx.memberLimit?.(organizationId, 'invite');
  const token = newToken();
  const record: InvitationRecord = {
    _id: newId('inv'),
    organizationId,
    email,
    role,
    invitedBy,
    tokenHash: hashOf(token),
    state: 'pending',
    createdAt: now,
    expireAt: now + INVITATION_TTL_MS,
    teamIds,
  };
  await putWithEvents(ctx.events, invitationSubject(ctx.invitations), record, undefined, [invitationEvent('invitation.created', record)], {
    expect: null,
  });
  return create(CreateInvitationResponseSchema, { invitation: toInvitation(record, now), token });
}

export async function listInvitations(ctx: InvitationsContext, req: ListInvitationsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(
    ctx.invitations,
    { organizationId },
    { pageSize: req.pageSize, pageToken: req.pageToken },
    { field: 'createdAt', direction: 'desc', scope: `invitations:${organizationId}` },
  );
  const now = ctx.now();
  return create(ListInvitationsResponseSchema, {
    invitations: page.items.map((r) => toInvitation(r, now)),
    nextPageToken: page.nextPageToken,
  });
}

export async function resendInvitation(ctx: InvitationsContext, req: ResendInvitationRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const invitedBy = requireUser(req.invitedBy, 'invited_by');
  const current = await owned(ctx, organizationId, req.invitationId);
  if (current.state !== 'pending') throw new ConnectError(`the invitation was ${current.state}`, Code.FailedPrecondition);
  const token = newToken();
  const now = ctx.now();
  const next: InvitationRecord = { ...current, tokenHash: hashOf(token), invitedBy, expireAt: now + INVITATION_TTL_MS };
  const resent = [invitationEvent('invitation.resent', next)];
  const expect = { tokenHash: current.tokenHash, state: 'pending' };
  if (!(await putWithEvents(ctx.events, invitationSubject(ctx.invitations), next, current, resent, { expect }))) {
    throw new ConnectError('the invitation changed concurrently; try again', Code.Aborted);
  }
  return create(ResendInvitationResponseSchema, { invitation: toInvitation(next, now), token });
}

export async function revokeInvitation(ctx: InvitationsContext, req: RevokeInvitationRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const current = await owned(ctx, organizationId, req.invitationId);
  if (current.state === 'accepted') throw new ConnectError('the invitation was already accepted', Code.FailedPrecondition);
  const next: InvitationRecord = { ...current, state: 'revoked' };
  const revoked = [invitationEvent('invitation.revoked', next)];
  const subject = invitationSubject(ctx.invitations);
  if (
    current.state === 'pending' &&
    !(await putWithEvents(ctx.events, subject, next, current, revoked, { expect: { state: 'pending' } }))
  ) {
    throw new ConnectError('the invitation changed concurrently; try again', Code.Aborted);
  }
  return create(RevokeInvitationResponseSchema, { invitation: toInvitation(next, ctx.now()) });
}

/** The pending, unexpired invitation of a token, with its organization; NOT_FOUND otherwise. */
async function live(ctx: InvitationsContext, token: string): Promise<{ invitation: InvitationRecord; organization: OrganizationRecord }> {
  const gone = () => new ConnectError('this invitation link is not valid: it was used, replaced, withdrawn or has expired', Code.NotFound);
  if (!TOKEN.test(token)) throw gone();
  const [invitation] = await ctx.invitations.find({ tokenHash: hashOf(token) }, { limit: 1 });
  if (invitation?.state !== 'pending' || invitation.expireAt <= ctx.now()) throw gone();
  const organization = await ctx.organizations.get(invitation.organizationId);
  if (!organization) throw gone();
  return { invitation, organization };
}

export async function getInvitationByToken(ctx: InvitationsContext, req: GetInvitationByTokenRequest) {
  const { invitation, organization } = await live(ctx, req.token);
  return create(GetInvitationByTokenResponseSchema, {
    invitation: toInvitation(invitation, ctx.now()),
    organizationName: organization.name,
  });
}

/**
 * A new token for the pending invitation of `token`, which stops working; who invited and the
 * expiry stay, and no event is recorded: nothing an organization sees changes. For the invitation
 * page ("I am new" that does not join at once), whose old link must end as an accepted one does.
 */
export async function replaceInvitationLink(ctx: InvitationsContext, req: ReplaceInvitationLinkRequest) {
  const { invitation } = await live(ctx, req.token);
  const token = newToken();
  const next: InvitationRecord = { ...invitation, tokenHash: hashOf(token) };
  // The same compare-and-set as accepting: of a replacement and an acceptance, one wins.
  if (!(await ctx.invitations.put(next, { expect: { tokenHash: invitation.tokenHash, state: 'pending' } }))) {
    throw new ConnectError('this invitation link is not valid: it was used, replaced, withdrawn or has expired', Code.NotFound);
  }
  return create(ReplaceInvitationLinkResponseSchema, { invitation: toInvitation(next, ctx.now()), token });
}

export async function acceptInvitation(ctx: InvitationsContext, req: AcceptInvitationRequest) {
  const userId = requireUser(req.userId);
  const { invitation } = await live(ctx, req.token);
  if (req.userEmail.trim().toLowerCase() !== invitation.email) {
    throw new ConnectError('this invitation is for another e-mail address', Code.PermissionDenied);
  }
  const id = `${invitation.organizationId}/${userId}`;
  const existing = await ctx.memberships.get(id);
  // Checked before the link is used up, so a refused link still works after an upgrade.
  if (!existing) await ctx.memberLimit?.(invitation.organizationId, 'accept');
  const now = ctx.now();
  const accepted: InvitationRecord = { ...invitation, state: 'accepted', acceptedBy: userId, acceptedAt: now };
  // The compare-and-set on the token hash and state is what makes the link single-use.
  const events = [invitationEvent('invitation.accepted', accepted)];
  const expect = { tokenHash: invitation.tokenHash, state: 'pending' };
  if (!(await putWithEvents(ctx.events, invitationSubject(ctx.invitations), accepted, invitation, events, { expect }))) {
    throw new ConnectError('this invitation link is not valid: it was used, replaced, withdrawn or has expired', Code.NotFound);
  }
  const role = existing && covers(existing.role, invitation.role) ? existing.role : invitation.role;
  const membership: MembershipRecord = {
    _id: id,
    organizationId: invitation.organizationId,
    userId,
    role,
    createdAt: existing?.createdAt ?? now,
    version: (existing?.version ?? (existing ? 1 : 0)) + 1,
    updatedAt: now,
  };
  const joined = existing ? memberUpdated(membership, existing.role) : [memberAdded(membership, 'invitation')];
  await putWithEvents(ctx.events, membershipSubject(ctx.memberships), membership, existing, joined);
  const teamIds = await joinTeams(ctx, invitation, userId, now);
  return create(AcceptInvitationResponseSchema, {
    invitation: toInvitation(accepted, now),
    membership: toMembership(membership),
    teamIds,
  });
}

/** Puts the new member in the invitation's teams that still exist; returns those teams. */
async function joinTeams(ctx: InvitationsContext, invitation: InvitationRecord, userId: string, now: number): Promise<string[]> {
  const teams = (await ctx.teams.getMany(invitation.teamIds ?? [])).filter((t) => t.organizationId === invitation.organizationId);
  for (const team of teams) {
    const member: TeamMemberRecord = {
      _id: `${team._id}/${userId}`,
      organizationId: team.organizationId,
      teamId: team._id,
      userId,
      addedAt: now,
    };
    await ctx.teamMembers.put(member, { expect: null });
  }
  return teams.map((t) => t._id);
}
