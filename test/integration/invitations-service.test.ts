// The invitations service's clock-bound rules, on the embedded records store with a clock the
// test moves: a link stops working after 7 days and the invitation is listed as expired; a resend
// gives 7 more days; a link is accepted once even when two accept at the same moment.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create } from '@bufbuild/protobuf';
import {
  AcceptInvitationRequestSchema,
  CreateInvitationRequestSchema,
  GetInvitationByTokenRequestSchema,
  InvitationState,
  ListInvitationsRequestSchema,
  ReplaceInvitationLinkRequestSchema,
  ResendInvitationRequestSchema,
} from '../../gen/mindgate/agents/v1/invitations_pb.js';
import { CreateOrganizationRequestSchema, Role } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import {
  acceptInvitation,
  createInvitation,
  getInvitationByToken,
  INVITATION_TTL_MS,
  listInvitations,
  replaceInvitationLink,
  resendInvitation,
  type InvitationRecord,
  type InvitationsContext,
} from '../../services/agents/handlers/invitations.ts';
import { createOrganization, type MembershipRecord, type OrganizationRecord } from '../../services/agents/handlers/organizations.ts';
import type { TeamMemberRecord, TeamRecord } from '../../services/agents/handlers/teams.ts';
import { createEventOutbox } from '../../services/common/events/outbox.ts';
import { createLogger } from '../../services/common/log.ts';
import type { RecordStore } from '../../services/common/storage/records/interface.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';

let dir: string;
let store: RecordStore;
let clock = Date.UTC(2026, 0, 5, 9, 0, 0);
let ctx: InvitationsContext;
let org: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-invitations-'));
  store = createSqliteRecordStore({ path: path.join(dir, 'records.sqlite'), now: () => clock });
  const memberships = store.collection<MembershipRecord>('memberships');
  const invitations = store.collection<InvitationRecord>('invitations');
  ctx = {
    organizations: store.collection<OrganizationRecord>('organizations'),
    memberships,
    invitations,
    teamMembers: store.collection<TeamMemberRecord>('team_members'),
    users: store.collection('auth_users'),
    teams: store.collection<TeamRecord>('teams'),
    events: createEventOutbox({
      records: store,
      collection: 'agents_event_outbox',
      subjects: { memberships, invitations },
      logger: createLogger({ level: 'silent' }),
      now: () => clock,
    }),
    now: () => clock,
  };
  org = (await createOrganization(ctx, create(CreateOrganizationRequestSchema, { name: 'Clockwork', ownerUserId: 'usr_owner' })))
    .organization!.organizationId;
});

afterAll(async () => {
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const invite = (email: string) =>
  createInvitation(
    ctx,
    create(CreateInvitationRequestSchema, { organizationId: org, email, role: Role.MEMBER, invitedBy: 'usr_owner', actorRole: Role.OWNER }),
  );

describe('invitations and time', () => {
  it('expires a link after 7 days and lists the invitation as expired', async () => {
    const { token } = await invite('late@example.test');
    clock += INVITATION_TTL_MS - 1_000;
    expect((await getInvitationByToken(ctx, create(GetInvitationByTokenRequestSchema, { token }))).invitation!.state).toBe(
      InvitationState.PENDING,
    );
    clock += 2_000;
    await expect(getInvitationByToken(ctx, create(GetInvitationByTokenRequestSchema, { token }))).rejects.toThrow(/not valid/);
    await expect(
      acceptInvitation(ctx, create(AcceptInvitationRequestSchema, { token, userId: 'usr_late', userEmail: 'late@example.test' })),
    ).rejects.toThrow(/not valid/);
    const listed = await listInvitations(ctx, create(ListInvitationsRequestSchema, { organizationId: org }));
    expect(listed.invitations.find((i) => i.email === 'late@example.test')!.state).toBe(InvitationState.EXPIRED);
    // An expired invitation no longer blocks a new one for the address.
    expect((await invite('late@example.test')).token).not.toBe(token);
  });

  it('gives a resent invitation 7 more days', async () => {
    const created = await invite('resend@example.test');
    clock += INVITATION_TTL_MS - 60_000;
    const resent = await resendInvitation(
      ctx,
      create(ResendInvitationRequestSchema, {
        organizationId: org,
        invitationId: created.invitation!.invitationId,
        invitedBy: 'usr_owner',
      }),
    );
    clock += 2 * 60_000;
    expect((await getInvitationByToken(ctx, create(GetInvitationByTokenRequestSchema, { token: resent.token }))).invitation!.state).toBe(
      InvitationState.PENDING,
    );
  });

  it('lets exactly one of two simultaneous accepts through', async () => {
    const { token } = await invite('race@example.test');
    const results = await Promise.allSettled([
      acceptInvitation(ctx, create(AcceptInvitationRequestSchema, { token, userId: 'usr_a', userEmail: 'race@example.test' })),
      acceptInvitation(ctx, create(AcceptInvitationRequestSchema, { token, userId: 'usr_b', userEmail: 'race@example.test' })),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it('replaces a link without moving its expiry or who invited, and races an acceptance fairly', async () => {
    const created = await invite('replaced@example.test');
    clock += 60_000;
    const replaced = await replaceInvitationLink(ctx, create(ReplaceInvitationLinkRequestSchema, { token: created.token }));
    expect(replaced.token).not.toBe(created.token);
    expect(replaced.invitation).toMatchObject({
      state: InvitationState.PENDING,
      invitedBy: 'usr_owner',
      expireTime: created.invitation!.expireTime,
    });
    const read = (token: string) => getInvitationByToken(ctx, create(GetInvitationByTokenRequestSchema, { token }));
    await expect(read(created.token)).rejects.toThrow(/not valid/);
    expect((await read(replaced.token)).invitation!.invitationId).toBe(created.invitation!.invitationId);
    await expect(replaceInvitationLink(ctx, create(ReplaceInvitationLinkRequestSchema, { token: created.token }))).rejects.toThrow(
      /not valid/,
    );
    // Of a replacement and an acceptance of the same link, exactly one goes through.
    const results = await Promise.allSettled([
      replaceInvitationLink(ctx, create(ReplaceInvitationLinkRequestSchema, { token: replaced.token })),
      acceptInvitation(
        ctx,
        create(AcceptInvitationRequestSchema, { token: replaced.token, userId: 'usr_replaced', userEmail: 'replaced@example.test' }),
      ),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });
});
