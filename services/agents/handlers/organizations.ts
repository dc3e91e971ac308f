import { randomBytes } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AddMemberResponseSchema,
  CreateOrganizationResponseSchema,
  GetMembershipResponseSchema,
  GetOrganizationResponseSchema,
  ListOrganizationsResponseSchema,
  MembershipSchema,
  OrganizationSchema,
  OrganizationWithRoleSchema,
  Role,
  type AddMemberRequest,
  type CreateOrganizationRequest,
  type GetMembershipRequest,
  type GetOrganizationRequest,
  type ListOrganizationsRequest,
} from '../../../gen/mindgate/agents/v1/organizations_pb.js';
import { putWithEvents, type EventOutbox } from '../../common/events/outbox.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { UniqueViolationError } from '../../common/storage/records/errors.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { withAccounts } from './member-accounts.ts';
import type { UserRecord } from './users.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { memberAdded, memberUpdated, membershipSubject } from '../events.ts';
import { DEFAULT_AUDIT_RETENTION_DAYS } from './audit.ts';
import { randomSuffix, requireSlug, slugFrom } from './slug.ts';
import type { TeamMemberRecord } from './teams.ts';

export interface OrganizationSettings {
  /** How long audit events are kept (audit.ts has the default). */
  auditRetentionDays?: number;
}

export interface OrganizationRecord extends RecordDoc {
  name: string;
  brainId: string;
  createdAt: number;
  /** Absent on organizations created before slugs existed. */
  slug?: string;
  settings?: OrganizationSettings;
  /** Bumped by every change; absent before it existed (version 1). */
  version?: number;
  updatedAt?: number;
}

export type RoleName = 'owner' | 'admin' | 'member' | 'viewer' | 'billing_admin';

export interface MembershipRecord extends RecordDoc {
  organizationId: string;
  userId: string;
  role: RoleName;
  createdAt: number;
  /** Bumped by every change; absent on memberships written before it existed (version 1). */
  version?: number;
  updatedAt?: number;
}

export interface OrganizationsContext {
  organizations: RecordCollection<OrganizationRecord>;
  memberships: RecordCollection<MembershipRecord>;
  /** Team memberships, which a member leaving the organization leaves too (teams.ts). */
  teamMembers: RecordCollection<TeamMemberRecord>;
  /** The accounts, whose names and addresses reads of memberships join (member-accounts.ts). */
  users: RecordCollection<UserRecord>;
  /** The service's events, written with the changes that make them (../events.ts). */
  events: EventOutbox;
  now: () => number;
}

const USER_ID = /^[A-Za-z0-9_:.@-]{1,128}$/;
export const ROLE_NAMES: Record<number, RoleName> = {
  [Role.OWNER]: 'owner',
  [Role.ADMIN]: 'admin',
  [Role.MEMBER]: 'member',
  [Role.VIEWER]: 'viewer',
  [Role.BILLING_ADMIN]: 'billing_admin',
};
export const ROLES: Record<RoleName, Role> = {
  owner: Role.OWNER,
  admin: Role.ADMIN,
  member: Role.MEMBER,
  viewer: Role.VIEWER,
  billing_admin: Role.BILLING_ADMIN,
};
/** What a role field accepts, for the error that refuses anything else. */
export const ROLE_CHOICES = 'must be ROLE_OWNER, ROLE_ADMIN, ROLE_MEMBER, ROLE_VIEWER or ROLE_BILLING_ADMIN';
/**
 * Roles only an owner grants or takes away: the organization itself, and its money (a billing
 * admin changes the plan, which an admin may not, so an admin may not make one either).
 */
export const OWNER_GRANTED: ReadonlySet<RoleName> = new Set<RoleName>(['owner', 'billing_admin']);

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
}

export function requireUser(value: string, field = 'user_id'): string {
  if (!value) invalid(field, 'is required');
  if (!USER_ID.test(value)) invalid(field, 'must be 1-128 characters of [A-Za-z0-9_:.@-]');
  return value;
}

export function toOrganization(r: OrganizationRecord) {
  return create(OrganizationSchema, {
    organizationId: r._id,
    name: r.name,
    brainId: r.brainId,
    createTime: timestampFromMs(r.createdAt),
    slug: r.slug ?? '',
    etag: String(r.version ?? 1),
    updateTime: timestampFromMs(r.updatedAt ?? r.createdAt),
    auditRetentionDays: r.settings?.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS,
  });
}

/** Inserts the organization under its slug, or a suffixed one when a derived slug is taken. */
async function insertOrganization(ctx: OrganizationsContext, organization: OrganizationRecord, derived: boolean): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await ctx.organizations.put(organization, { expect: null });
      return;
    } catch (err) {
      if (!(err instanceof UniqueViolationError)) throw err;
      if (!derived || attempt >= 5) throw new ConnectError(`slug "${organization.slug}" is taken`, Code.AlreadyExists);
      organization.slug = `${organization.slug!.slice(0, 56)}-${randomSuffix()}`;
    }
  }
}

export function toMembership(r: MembershipRecord) {
  return create(MembershipSchema, {
    organizationId: r.organizationId,
    userId: r.userId,
    role: ROLES[r.role],
    createTime: timestampFromMs(r.createdAt),
    etag: String(r.version ?? 1),
    updateTime: timestampFromMs(r.updatedAt ?? r.createdAt),
  });
}

export async function createOrganization(ctx: OrganizationsContext, req: CreateOrganizationRequest) {
  const name = requireText('name', req.name.trim(), 200, { required: true });
  const owner = requireUser(req.ownerUserId, 'owner_user_id');
  const slug = req.slug === '' ? slugFrom(name) : requireSlug(req.slug);
  const id = newId('org');
  const now = ctx.now();
  const organization: OrganizationRecord = {
    _id: id,
    name,
    brainId: `brain_${id.slice(4)}`,
    slug,
    createdAt: now,
    version: 1,
    updatedAt: now,
  };
  await insertOrganization(ctx, organization, req.slug === '');
  const membership: MembershipRecord = {
    _id: `${id}/${owner}`,
    organizationId: id,
    userId: owner,
    role: 'owner',
    createdAt: organization.createdAt,
    version: 1,
    updatedAt: organization.createdAt,
  };
  await putWithEvents(ctx.events, membershipSubject(ctx.memberships), membership, undefined, [
    memberAdded(membership, 'organization_created'),
  ]);
  return create(CreateOrganizationResponseSchema, {
    organization: toOrganization(organization),
    membership: toMembership(membership),
  });
}

export async function getOrganization(ctx: OrganizationsContext, req: GetOrganizationRequest) {
  const id = requireOrganization(req.organizationId);
  const organization = await ctx.organizations.get(id);
  if (!organization) throw new ConnectError(`organization "${id}" does not exist`, Code.NotFound);
  return create(GetOrganizationResponseSchema, { organization: toOrganization(organization) });
}

export async function listOrganizations(ctx: OrganizationsContext, req: ListOrganizationsRequest) {
  const userId = requireUser(req.userId);
  const page = await findPage(
    ctx.memberships,
    { userId },
    { pageSize: req.pageSize, pageToken: req.pageToken },
    { field: 'createdAt', scope: `organizations:${userId}` },
  );
  const organizations = await ctx.organizations.getMany(page.items.map((m) => m.organizationId));
  const byId = new Map(organizations.map((o) => [o._id, o]));
  return create(ListOrganizationsResponseSchema, {
    organizations: page.items
      .filter((m) => byId.has(m.organizationId))
      .map((m) =>
        create(OrganizationWithRoleSchema, {
          organization: toOrganization(byId.get(m.organizationId)!),
          role: ROLES[m.role],
          membership: toMembership(m),
        }),
      ),
    nextPageToken: page.nextPageToken,
  });
}

export async function getMembership(ctx: OrganizationsContext, req: GetMembershipRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const userId = requireUser(req.userId);
  const membership = await ctx.memberships.get(`${organizationId}/${userId}`);
  if (!membership) throw new ConnectError('not a member of this organization', Code.NotFound);
  const [named] = await withAccounts(ctx.users, [toMembership(membership)]);
  return create(GetMembershipResponseSchema, { membership: named });
}

export async function addMember(ctx: OrganizationsContext, req: AddMemberRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const userId = requireUser(req.userId);
  const role = ROLE_NAMES[req.role];
  if (!role) invalid('role', ROLE_CHOICES);
  if (!(await ctx.organizations.get(organizationId))) {
    throw new ConnectError(`organization "${organizationId}" does not exist`, Code.NotFound);
  }
  const id = `${organizationId}/${userId}`;
  const existing = await ctx.memberships.get(id);
  const membership: MembershipRecord = {
    _id: id,
    organizationId,
    userId,
    role,
    createdAt: existing?.createdAt ?? ctx.now(),
    version: (existing?.version ?? (existing ? 1 : 0)) + 1,
    updatedAt: ctx.now(),
  };
  const events = existing ? memberUpdated(membership, existing.role) : [memberAdded(membership, 'direct')];
  await putWithEvents(ctx.events, membershipSubject(ctx.memberships), membership, existing, events);
  return create(AddMemberResponseSchema, { membership: toMembership(membership) });
}
