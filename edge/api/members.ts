// The REST API's members of an organization: list, get, change a role, remove. Each a call to the
// agents service's OrganizationsService, which owns memberships and keeps an owner in every
// organization. Updates are conditional with If-Match on the membership's ETag.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import type { Membership } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { callerOf, ROLE_ENUM, ROLE_NAMES, roleName } from './access.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
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

export const UserId = z
  .string()
  .regex(/^[A-Za-z0-9_:.@-]{1,128}$/, { error: 'must be a user id' })
  .meta({ description: 'User id.', example: 'usr_5f1c0a9e3b7d2c4a6e8f0b1d' });
const memberParams = z.object({ organization_id: OrganizationId, user_id: UserId });

export const MemberSchema = z
  .object({
    user_id: z.string(),
    name: z.string().nullable().meta({ description: "The member's name, from their account; null when unknown." }),
    email: z.string().nullable().meta({ description: "The member's e-mail address, from their account; null when unknown." }),
    organization_id: z.string(),
    role: z.enum(ROLE_NAMES),
    created_at: z.string().nullable().meta({ description: 'When the user joined.' }),
    updated_at: z.string().nullable(),
  })
  .meta({ title: 'Member' });

export const MemberListSchema = listEnvelope('members', MemberSchema, 'MemberList');

export const UpdateMemberSchema = z
  .object({
    role: z.enum(ROLE_NAMES).meta({
      description: 'The new role. Only an owner grants or takes away `owner` and `billing_admin` (a viewer who also manages billing).',
    }),
  })
  .strict()
  .meta({ title: 'UpdateMember' });

const withEtag = (description: string) => ({ ...json(MemberSchema, description), headers: ETAG_HEADER });

export const memberJson = (m: Membership) => ({
  user_id: m.userId,
  name: m.userName || null,
  email: m.userEmail || null,
  organization_id: m.organizationId,
  role: roleName(m.role) ?? 'viewer',
  created_at: iso(m.createTime as Timestamp | undefined),
  updated_at: iso(m.updateTime as Timestamp | undefined),
});

function listMembersRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/members',
    operationId: 'listMembers',
    summary: 'List members',
    description: "The organization's members and their roles, in the order they joined.",
    tags: ['Members'],
    params: orgParams,
    query: pageQuery,
    responses: { '200': json(MemberListSchema, 'One page of members.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
    handler: async (c) => {
      const res = await listing(() =>
        ctx.clients.organizations.listMembers({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
      );
      sendPage(c, 'members', res.members.map(memberJson), res.nextPageToken);
    },
  });
}

function getMemberRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/members/:user_id',
    operationId: 'getMember',
    summary: 'Get a member',
    description: 'One member and their role; the ETag header is the version to send as If-Match when updating.',
    tags: ['Members'],
    params: memberParams,
    responses: {
      '200': withEtag('The member.'),
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '422': errors['422'],
    },
    handler: async (c) => {
      const { membership } = await notFoundAs404(() =>
        ctx.clients.organizations.getMembership({ organizationId: c.input.params.organization_id, userId: c.input.params.user_id }),
      );
      sendJson(c.res, 200, memberJson(membership!), { etag: quoteEtag(membership!.etag) });
    },
  });
}

function updateMemberRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/organizations/:organization_id/members/:user_id',
      operationId: 'updateMember',
      summary: "Change a member's role",
      description:
        'Changes the role. With If-Match, only if the membership is still at that ETag (412 otherwise). 409 when the change would leave the organization without an owner; only an owner grants or takes away `owner` and `billing_admin` (403 otherwise).',
      tags: ['Members'],
      params: memberParams,
      responses: {
        '200': withEtag('The member, as stored.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '409': 'Conflict',
        '412': 'PreconditionFailed',
        '422': errors['422'],
      },
      handler: async (c) => {
        const caller = callerOf(c);
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, UpdateMemberSchema, limit);
        const { membership } = await notFoundAs404(() =>
          ctx.clients.organizations.updateMemberRole({
            organizationId: c.input.params.organization_id,
            userId: c.input.params.user_id,
            role: ROLE_ENUM[body.role],
            etag,
            actorRole: ROLE_ENUM[caller.role!],
          }),
        );
        sendJson(c.res, 200, memberJson(membership!), { etag: quoteEtag(membership!.etag) });
      },
    }),
    body: UpdateMemberSchema,
  };
}

function removeMemberRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/members/:user_id',
    operationId: 'removeMember',
    summary: 'Remove a member',
    description:
      'Removes the user from the organization; their tokens stop working here at once. Any member may remove themselves (leave); only an owner removes an owner; 409 for the last owner.',
    tags: ['Members'],
    params: memberParams,
    responses: {
      '204': { description: 'Removed.' },
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '409': 'Conflict',
      '422': errors['422'],
    },
    handler: async (c) => {
      const caller = callerOf(c);
      await notFoundAs404(() =>
        ctx.clients.organizations.removeMember({
          organizationId: c.input.params.organization_id,
          userId: c.input.params.user_id,
          actorRole: ROLE_ENUM[caller.role!],
          actorUserId: caller.subject,
        }),
      );
      c.res.writeHead(204).end();
    },
  });
}

export function memberRoutes(deps: RouteDeps): RestRoute[] {
  return [listMembersRoute(deps), getMemberRoute(deps), updateMemberRoute(deps), removeMemberRoute(deps)];
}
