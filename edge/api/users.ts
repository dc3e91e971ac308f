// The signed-in user's own account: read it, change the display name or the password (under
// If-Match), list the organizations they belong to, and delete it. Accounts belong to the agents
// service (UsersService); these routes translate. Only a user's bearer token may call them (the
// matrix's `user` entries, access.ts). A change is recorded in the audit log of every organization
// the user belongs to (audit.ts), where their owners and admins see it.
import { timestampMs, type Timestamp } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import * as z from 'zod';
import type { User } from '../../gen/mindgate/agents/v1/users_pb.js';
import type { AppContext } from '../context.ts';
import { defineApiRoute, type AnyApiRouteContext } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { RequestValidationError } from '../http/validation.ts';
import { createUserSessions } from '../oauth/user-sessions.ts';
import { callerOf, ROLE_NAMES, roleName } from './access.ts';
import { setAuditOrganizations } from './audit.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import {
  errors,
  iso,
  json,
  listEnvelope,
  listing,
  notFoundAs404,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

const MIN_PASSWORD = 10;

export const UserSchema = z
  .object({
    id: z.string().meta({ example: 'usr_5f1c0a9e3b7d2c4a6e8f0b1d' }),
    email: z.string().meta({ description: 'The sign-in address (lower case); changed through requestEmailChange.' }),
    email_verified: z.boolean(),
    name: z.string().meta({ description: 'The display name.' }),
    has_password: z.boolean().meta({ description: 'False for accounts that sign in only through a social identity provider.' }),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ title: 'User' });

export const UpdateUserSchema = z
  .object({
    name: z
      .string({ error: 'must be a string' })
      .trim()
      .min(1, { error: 'must not be empty' })
      .max(200, { error: 'must be at most 200 characters' })
      .optional()
      .meta({ description: 'The display name.' }),
    new_password: z
      .string({ error: 'must be a string' })
      .min(MIN_PASSWORD, { error: `must be at least ${MIN_PASSWORD} characters` })
      .max(1_024, { error: 'must be at most 1024 characters' })
      .optional()
      .meta({ description: 'A new password; needs `current_password` when the account has one.' }),
    current_password: z.string({ error: 'must be a string' }).max(1_024).optional(),
  })
  .strict()
  .refine((b) => b.name !== undefined || b.new_password !== undefined, { error: 'give at least one of name, new_password' })
  // The document states what the refinement checks (found by the schema fuzzer).
  .meta({ title: 'UpdateUser', anyOf: [{ required: ['name'] }, { required: ['new_password'] }] });

export const DeleteUserSchema = z
  .object({
    confirm: z
      .string({ error: 'must be your e-mail address' })
      .max(254)
      .meta({ description: "The account's e-mail address, to confirm the deletion.", example: 'ada@example.com' }),
  })
  .strict()
  .meta({ title: 'DeleteUser' });

const DeletedUserSchema = z
  .object({
    id: z.string(),
    organizations_left: z.array(z.string()).meta({ description: 'The organizations the user was a member of.' }),
    team_memberships_removed: z.int(),
    social_identities_removed: z.int(),
    grants_revoked: z.int().meta({ description: "Applications' authorizations revoked, with their tokens." }),
    sessions_ended: z.int().meta({ description: 'Sign-in sessions ended at the authorization server.' }),
  })
  .meta({ title: 'DeletedUser' });

const UserMembershipSchema = z
  .object({
    organization_id: z.string(),
    organization_name: z.string(),
    organization_slug: z.string().nullable(),
    role: z.enum(ROLE_NAMES),
    current: z.boolean().meta({ description: 'True for the organization the token acts for.' }),
    operator: z.boolean().meta({
      description:
        "True for the operator's organization (OPERATOR_ORGANIZATION_ID), whose owners and admins manage the gateway's keys and shared MCP servers.",
    }),
    joined_at: z.string().nullable(),
  })
  .meta({ title: 'UserMembership' });

const UserMembershipListSchema = listEnvelope('memberships', UserMembershipSchema, 'UserMembershipList');

const ts = (t: Timestamp | undefined) => iso(t);
const userJson = (u: User) => ({
  id: u.userId,
  email: u.email,
  email_verified: u.emailVerified,
  name: u.name,
  has_password: u.hasPassword,
  created_at: ts(u.createTime),
  updated_at: ts(u.updateTime),
});

/** Every organization the user belongs to, each page read through. */
export async function organizationsOf(ctx: AppContext, userId: string): Promise<string[]> {
  const ids: string[] = [];
  let pageToken = '';
  do {
    const res = await ctx.clients.organizations.listOrganizations({ userId, pageSize: 100, pageToken });
    ids.push(...res.organizations.map((o) => o.organization!.organizationId));
    pageToken = res.nextPageToken;
  } while (pageToken !== '');
  return ids;
}

const me = (c: AnyApiRouteContext) => callerOf(c).subject;

function getCurrentUserRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/users/me',
    operationId: 'getCurrentUser',
    summary: 'Get my account',
    description: "The signed-in user's account. The ETag header is its version, for If-Match.",
    tags: ['Users'],
    responses: {
      '200': { ...json(UserSchema, 'The account.'), headers: ETAG_HEADER },
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
    },
    handler: async (c) => {
      const { user } = await notFoundAs404(() => ctx.clients.users.getUser({ userId: me(c) }));
      sendJson(c.res, 200, userJson(user!), { etag: quoteEtag(user!.etag) });
    },
  });
}

/** The service's refusal of a field, as a 422 on that field of the body. */
function fieldRefusal(err: unknown): never {
  if (err instanceof ConnectError && err.code === Code.InvalidArgument) {
    const [field, ...rest] = err.rawMessage.split(': ');
    if (field === 'current_password' || field === 'new_password' || field === 'name') {
      throw new RequestValidationError([{ type: 'value_error', loc: ['body', field], msg: rest.join(': ') }]);
    }
  }
  throw err;
}

function updateCurrentUserRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/users/me',
      operationId: 'updateCurrentUser',
      summary: 'Change my account',
      description:
        'Changes the display name, or the password (with `current_password` for an account that has one; wrong guesses count as failed sign-ins and are throttled, 429). With If-Match, only if the account is still at that ETag (412 otherwise). The e-mail address is changed through requestEmailChange. Recorded in the audit log of every organization the user belongs to.',
      tags: ['Users'],
      responses: {
        '200': { ...json(UserSchema, 'The account, as stored.'), headers: ETAG_HEADER },
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '412': 'PreconditionFailed',
        '422': errors['422'],
      },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, UpdateUserSchema, limit);
        const request = {
          userId: me(c),
          name: body.name,
          newPassword: body.new_password,
          currentPassword: body.current_password ?? '',
          etag,
        };
        const { user } = await notFoundAs404(() => ctx.clients.users.updateUser(request).catch(fieldRefusal));
        setAuditOrganizations(c, await organizationsOf(ctx, me(c)), '/users/me');
        sendJson(c.res, 200, userJson(user!), { etag: quoteEtag(user!.etag) });
      },
    }),
    body: UpdateUserSchema,
  };
}

function listMembershipsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/users/me/memberships',
    operationId: 'listCurrentUserMemberships',
    summary: 'List my organizations',
    description: "The organizations the signed-in user belongs to, in the order they joined, with the user's role in each.",
    tags: ['Users'],
    query: pageQuery,
    responses: {
      '200': json(UserMembershipListSchema, 'One page of memberships.'),
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const caller = callerOf(c);
      const res = await listing(() => ctx.clients.organizations.listOrganizations({ userId: caller.subject, ...pageArgs(c.input.query) }));
      const items = res.organizations.map((o) => ({
        organization_id: o.organization!.organizationId,
        organization_name: o.organization!.name,
        organization_slug: o.organization!.slug || null,
        role: roleName(o.role) ?? 'viewer',
        current: o.organization!.organizationId === caller.organizationId,
        operator: o.organization!.organizationId === ctx.config.api.operatorOrganizationId,
        joined_at: o.membership?.createTime ? new Date(timestampMs(o.membership.createTime)).toISOString() : null,
      }));
      sendPage(c, 'memberships', items, res.nextPageToken);
    },
  });
}

function deleteCurrentUserRoute({ ctx, limit }: RouteDeps): RestRoute {
  const sessions = createUserSessions(ctx.stores.records, ctx.keyEncryption, ctx.config, ctx.now);
  return {
    ...defineApiRoute({
      method: 'DELETE',
      path: '/users/me',
      operationId: 'deleteCurrentUser',
      summary: 'Delete my account',
      description:
        "Deletes the account, for good: its memberships and team memberships, its e-mail address, social identities, verification links and sign-in records; every application's authorization (grants with their refresh tokens at once, access tokens within about 2 s) and every sign-in session. `confirm` must be the account's e-mail address (422 otherwise). Refused with 409 `last-owner` while the user is the only owner of an organization: transfer the ownership, or delete the organization, first. Recorded in the audit log of every organization the user belonged to.",
      tags: ['Users'],
      responses: {
        '200': json(DeletedUserSchema, 'What was deleted.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '409': 'Conflict',
        '422': errors['422'],
      },
      handler: async (c) => {
        const body = await readJson(c, DeleteUserSchema, limit);
        const { user } = await notFoundAs404(() => ctx.clients.users.getUser({ userId: me(c) }));
        if (body.confirm.trim().toLowerCase() !== user!.email) {
          throw new RequestValidationError([{ type: 'value_error', loc: ['body', 'confirm'], msg: 'must be your e-mail address' }]);
        }
        const deleted = await notFoundAs404(() => ctx.clients.users.deleteUser({ userId: me(c) }));
        const ended = await sessions.endUser(me(c));
        setAuditOrganizations(c, deleted.organizationIds, '/users/me');
        sendJson(c.res, 200, {
          id: me(c),
          organizations_left: deleted.organizationIds,
          team_memberships_removed: deleted.teamMembershipsRemoved,
          social_identities_removed: deleted.socialIdentitiesRemoved,
          grants_revoked: ended.grantsRevoked,
          sessions_ended: ended.sessionsEnded,
        });
      },
    }),
    body: DeleteUserSchema,
  };
}

export function userRoutes(deps: RouteDeps): RestRoute[] {
  return [getCurrentUserRoute(deps), updateCurrentUserRoute(deps), listMembershipsRoute(deps), deleteCurrentUserRoute(deps)];
}
