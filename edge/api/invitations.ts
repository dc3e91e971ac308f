// The REST API's invitations: an owner or admin invites an e-mail address with a role; the
// address gets a link to `{auth_url}/invitations/<token>` (edge/oauth/interactions/
// invitation-routes.ts), which works once, for 7 days, and only for an account with that
// address. The token is never shown to the inviter, only sent to the address.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import { InvitationState, type Invitation } from '../../gen/mindgate/agents/v1/invitations_pb.js';
import type { AppContext } from '../context.ts';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf, ROLE_ENUM, ROLE_NAMES, roleName } from './access.ts';
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

const STATES: Record<number, 'pending' | 'accepted' | 'revoked' | 'expired'> = {
  [InvitationState.PENDING]: 'pending',
  [InvitationState.ACCEPTED]: 'accepted',
  [InvitationState.REVOKED]: 'revoked',
  [InvitationState.EXPIRED]: 'expired',
};

const InvitationId = z.string().regex(/^inv_[A-Za-z0-9]{1,60}$/, { error: 'must be an invitation id (inv_...)' });
const invitationParams = z.object({ organization_id: OrganizationId, invitation_id: InvitationId });

export const InvitationJsonSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    email: z.string(),
    role: z.enum(ROLE_NAMES),
    state: z.enum(['pending', 'accepted', 'revoked', 'expired']),
    invited_by: z.string(),
    created_at: z.string().nullable(),
    expires_at: z.string().nullable(),
    accepted_by: z.string().nullable(),
    accepted_at: z.string().nullable(),
    team_ids: z.array(z.string()).meta({ description: 'Teams the invitee joins on accepting.' }),
    email_delivery: z.enum(['sent', 'queued']).nullable().meta({
      description:
        'In the answer of createInvitation and resendInvitation: the e-mail went out (`sent`), or could not be delivered yet and will be retried (`queued`). Null in lists.',
    }),
  })
  .meta({ title: 'Invitation' });

const InvitationListSchema = listEnvelope('invitations', InvitationJsonSchema, 'InvitationList');

export const CreateInvitationSchema = z
  .object({
    email: z
      .email({ error: 'must be an e-mail address' })
      .max(254)
      .meta({ description: 'The address to invite.', example: 'ada@example.com' }),
    role: z.enum(ROLE_NAMES).meta({
      description:
        'The role on joining. Only an owner invites an owner or a billing admin (`billing_admin`: a viewer who also manages billing).',
    }),
    team_ids: z
      .array(z.string().regex(/^team_[A-Za-z0-9]{1,60}$/, { error: 'must be a team id (team_...)' }))
      .max(20, { error: 'must list at most 20 teams' })
      .default([])
      .meta({ description: 'Teams of the organization the invitee joins on accepting (404 for a team of another organization).' }),
  })
  .strict()
  .meta({ title: 'CreateInvitation' });

const invitationJson = (i: Invitation, delivery: 'sent' | 'queued' | null = null) => ({
  id: i.invitationId,
  organization_id: i.organizationId,
  email: i.email,
  role: roleName(i.role) ?? 'member',
  state: STATES[i.state] ?? 'pending',
  invited_by: i.invitedBy,
  created_at: iso(i.createTime as Timestamp | undefined),
  expires_at: iso(i.expireTime as Timestamp | undefined),
  accepted_by: i.acceptedBy || null,
  accepted_at: iso(i.acceptTime as Timestamp | undefined),
  team_ids: i.teamIds,
  email_delivery: delivery,
});

/** Sends the invitation's link to its address, through the mail queue: sent now, or queued for a retry. */
export type InvitationMail = (invitation: Invitation, token: string) => Promise<'sent' | 'queued'>;

export function createInvitationMail(ctx: AppContext): InvitationMail {
  return async (invitation, token) => {
    const { organization } = await ctx.clients.organizations.getOrganization({ organizationId: invitation.organizationId });
    const link = `${ctx.config.publicUrls.auth}/invitations/${token}`;
    const sent = await ctx.mail.send({
      purpose: 'invitation',
      to: invitation.email,
      subject: `You are invited to join ${organization!.name} on Mindgate`,
      text: `You are invited to join ${organization!.name} on Mindgate as ${roleName(invitation.role)}.\n\nAccept within 7 days: ${link}\n\nIf you did not expect this, ignore this message.\n`,
    });
    return sent.status;
  };
}

function createInvitationRoute({ ctx, limit }: RouteDeps, mail: InvitationMail): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/invitations',
      operationId: 'createInvitation',
      summary: 'Invite someone',
      description:
        'Invites the address with a role (and, optionally, teams) and e-mails it a link that works once, for 7 days, for an account with that address (signing up with it, or signing in). Accepting makes the account a member with the role and puts it in the teams that still exist. 409 when the address already has a pending invitation (resend it); 404 for a team of another organization. `email_delivery` says whether the e-mail went out or is queued for a retry.',
      tags: ['Invitations'],
      params: orgParams,
      responses: {
        '201': json(InvitationJsonSchema, 'The invitation.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '409': 'Conflict',
        '422': errors['422'],
      },
      handler: async (c) => {
        const caller = callerOf(c);
        const body = await readJson(c, CreateInvitationSchema, limit);
        const res = await notFoundAs404(() =>
          ctx.clients.invitations.createInvitation({
            organizationId: c.input.params.organization_id,
            email: body.email,
            role: ROLE_ENUM[body.role],
            invitedBy: caller.subject,
            actorRole: ROLE_ENUM[caller.role!],
            teamIds: body.team_ids,
          }),
        );
        sendJson(c.res, 201, invitationJson(res.invitation!, await mail(res.invitation!, res.token)));
      },
    }),
    body: CreateInvitationSchema,
    creates: true,
  };
}

function listInvitationsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/invitations',
    operationId: 'listInvitations',
    summary: 'List invitations',
    description: "The organization's invitations, newest first, with their state (pending, accepted, revoked, expired).",
    tags: ['Invitations'],
    params: orgParams,
    query: pageQuery,
    responses: {
      '200': json(InvitationListSchema, 'One page of invitations.'),
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const res = await listing(() =>
        ctx.clients.invitations.listInvitations({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
      );
      sendPage(
        c,
        'invitations',
        res.invitations.map((i) => invitationJson(i)),
        res.nextPageToken,
      );
    },
  });
}

function resendInvitationRoute({ ctx }: RouteDeps, mail: InvitationMail): RestRoute {
  return defineApiRoute({
    method: 'POST',
    path: '/organizations/:organization_id/invitations/:invitation_id/resend',
    operationId: 'resendInvitation',
    summary: 'Resend an invitation',
    description: 'E-mails a new link (the previous one stops working) valid for 7 more days. 412 once accepted or revoked.',
    tags: ['Invitations'],
    params: invitationParams,
    responses: {
      '200': json(InvitationJsonSchema, 'The invitation.'),
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '412': 'PreconditionFailed',
      '422': errors['422'],
    },
    handler: async (c) => {
      const res = await notFoundAs404(() =>
        ctx.clients.invitations.resendInvitation({
          organizationId: c.input.params.organization_id,
          invitationId: c.input.params.invitation_id,
          invitedBy: callerOf(c).subject,
        }),
      );
      sendJson(c.res, 200, invitationJson(res.invitation!, await mail(res.invitation!, res.token)));
    },
  });
}

function revokeInvitationRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/invitations/:invitation_id',
    operationId: 'revokeInvitation',
    summary: 'Revoke an invitation',
    description: 'The link stops working. 412 once accepted.',
    tags: ['Invitations'],
    params: invitationParams,
    responses: {
      '204': { description: 'Revoked.' },
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '412': 'PreconditionFailed',
      '422': errors['422'],
    },
    handler: async (c) => {
      await notFoundAs404(() =>
        ctx.clients.invitations.revokeInvitation({
          organizationId: c.input.params.organization_id,
          invitationId: c.input.params.invitation_id,
        }),
      );
      c.res.writeHead(204).end();
    },
  });
}

export function invitationRoutes(deps: RouteDeps, mail: InvitationMail): RestRoute[] {
  return [createInvitationRoute(deps, mail), listInvitationsRoute(deps), resendInvitationRoute(deps, mail), revokeInvitationRoute(deps)];
}
