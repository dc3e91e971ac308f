// Changes to an organization after it is created: its name, slug and settings (conditional on
// its etag), and handing ownership to another member.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  TransferOwnershipResponseSchema,
  UpdateOrganizationResponseSchema,
  type TransferOwnershipRequest,
  type UpdateOrganizationRequest,
} from '../../../gen/mindgate/agents/v1/organizations_pb.js';
import { putWithEvents } from '../../common/events/outbox.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { memberUpdated, membershipSubject } from '../events.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { UniqueViolationError } from '../../common/storage/records/errors.ts';
import { requireSlug } from './slug.ts';
import {
  requireUser,
  toMembership,
  toOrganization,
  type MembershipRecord,
  type OrganizationRecord,
  type OrganizationsContext,
} from './organizations.ts';

const STALE = 'the organization changed since it was read (If-Match): read it again';

function changes(req: UpdateOrganizationRequest): Partial<OrganizationRecord> {
  const out: Partial<OrganizationRecord> = {};
  if (req.name !== undefined) out.name = requireText('name', req.name.trim(), 200, { required: true }).trim();
  if (req.slug !== undefined) out.slug = requireSlug(req.slug);
  if (req.auditRetentionDays !== undefined) {
    const days = req.auditRetentionDays;
    if (!Number.isInteger(days) || days < 30 || days > 3_650) invalid('audit_retention_days', 'must be from 30 to 3650');
    out.settings = { auditRetentionDays: days };
  }
  return out;
}

export async function updateOrganization(ctx: OrganizationsContext, req: UpdateOrganizationRequest) {
  const id = requireOrganization(req.organizationId);
  const change = changes(req);
  if (req.etag !== '' && !/^[0-9]{1,15}$/.test(req.etag)) invalid('etag', 'is not an etag of an organization');
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await ctx.organizations.get(id);
    if (!current) throw new ConnectError(`organization "${id}" does not exist`, Code.NotFound);
    const version = current.version ?? 1;
    if (req.etag !== '' && req.etag !== String(version)) throw failure(STALE, Code.FailedPrecondition, REASONS.etagMismatch);
    const next: OrganizationRecord = {
      ...current,
      ...change,
      settings: { ...current.settings, ...change.settings },
      version: version + 1,
      updatedAt: ctx.now(),
    };
    let written: boolean;
    try {
      written = await ctx.organizations.put(next, { expect: { version: current.version ?? null } });
    } catch (err) {
      if (err instanceof UniqueViolationError) throw new ConnectError(`slug "${next.slug}" is taken`, Code.AlreadyExists);
      throw err;
    }
    if (written) return create(UpdateOrganizationResponseSchema, { organization: toOrganization(next) });
    if (req.etag !== '') throw failure(STALE, Code.FailedPrecondition, REASONS.etagMismatch);
  }
  throw new ConnectError('the organization keeps changing; try again', Code.Aborted);
}

async function member(ctx: OrganizationsContext, organizationId: string, userId: string): Promise<MembershipRecord> {
  const found = await ctx.memberships.get(`${organizationId}/${userId}`);
  if (!found) throw new ConnectError(`user "${userId}" is not a member of this organization`, Code.NotFound);
  return found;
}

export async function transferOwnership(ctx: OrganizationsContext, req: TransferOwnershipRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const fromId = requireUser(req.fromUserId, 'from_user_id');
  const toId = requireUser(req.toUserId, 'to_user_id');
  if (fromId === toId) invalid('to_user_id', 'must be another member');
  const from = await member(ctx, organizationId, fromId);
  if (from.role !== 'owner') throw new ConnectError('only an owner may hand over ownership', Code.PermissionDenied);
  const to = await member(ctx, organizationId, toId);
  const now = ctx.now();
  // The new owner first, so the organization is never without one.
  const promoted: MembershipRecord = { ...to, role: 'owner', version: (to.version ?? 1) + 1, updatedAt: now };
  await putWithEvents(ctx.events, membershipSubject(ctx.memberships), promoted, to, memberUpdated(promoted, to.role));
  const stepped: MembershipRecord = { ...from, role: 'admin', version: (from.version ?? 1) + 1, updatedAt: now };
  await putWithEvents(ctx.events, membershipSubject(ctx.memberships), stepped, from, memberUpdated(stepped, from.role));
  return create(TransferOwnershipResponseSchema, { from: toMembership(stepped), to: toMembership(promoted) });
}
