// Creating an organization (any signed-in user may own several), changing its name, slug and
// settings under If-Match, and handing its ownership to another member.
import * as z from 'zod';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { openOrganization } from '../organizations.ts';
import { callerOf } from './access.ts';
import { setAuditOrganization } from './audit.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import { MemberSchema, memberJson, UserId } from './members.ts';
import { organizationJson, OrganizationSchema } from './organizations.ts';
import { ConflictError, errors, json, Name, notFoundAs404, orgParams, readJson, type RestRoute, type RouteDeps } from './rest-route.ts';

const Slug = z
  .string()
  .regex(/^[a-z0-9](?:[a-z0-9-]{1,61})[a-z0-9]$/, {
    error: 'must be 3-63 characters of a-z, 0-9 and "-", starting and ending with a letter or digit',
  })
  .meta({ description: 'Unique, URL-friendly name.', example: 'acme-robotics' });

export const CreateOrganizationSchema = z
  .object({ name: Name, slug: Slug.optional().meta({ description: 'Derived from the name when left out.' }) })
  .strict()
  .meta({ title: 'CreateOrganization' });

export const UpdateOrganizationSchema = z
  .object({
    name: Name.optional(),
    slug: Slug.optional(),
    settings: z
      .object({
        audit_retention_days: z
          .int({ error: 'must be a whole number of days' })
          .min(30, { error: 'must be from 30 to 3650' })
          .max(3_650, { error: 'must be from 30 to 3650' })
          .optional(),
      })
      .strict()
      // The document says what the refinement below checks, so that no valid-looking body is refused.
      .meta({ minProperties: 1 })
      .optional(),
  })
  .strict()
  .refine((b) => b.name !== undefined || b.slug !== undefined || b.settings?.audit_retention_days !== undefined, {
    error: 'give at least one of name, slug, settings.audit_retention_days',
  })
  .meta({ title: 'UpdateOrganization', minProperties: 1 });

export const TransferOwnershipSchema = z
  .object({ user_id: UserId.meta({ description: 'The member who becomes an owner.' }) })
  .strict()
  .meta({ title: 'TransferOwnership' });

const OwnershipTransferSchema = z
  .object({ from: MemberSchema, to: MemberSchema })
  .meta({ title: 'OwnershipTransfer', description: 'The former owner (now admin) and the new owner.' });

function createOrganizationRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations',
      operationId: 'createOrganization',
      summary: 'Create an organization',
      description:
        'Creates an organization, with its brain, owned by the signed-in user, on the Professional trial new organizations get. The token keeps acting for its organization: sign in choosing the new one to act for it.',
      tags: ['Organizations'],
      responses: {
        '201': json(OrganizationSchema, 'The organization.'),
        '401': errors['401'],
        '403': errors['403'],
        '409': 'Conflict',
        '422': errors['422'],
      },
      handler: async (c) => {
        const body = await readJson(c, CreateOrganizationSchema, limit);
        const organization = await openOrganization(ctx, { name: body.name, ownerUserId: callerOf(c).subject, slug: body.slug });
        setAuditOrganization(c, organization.organizationId, `/organizations/${organization.organizationId}`);
        sendJson(c.res, 201, organizationJson(organization, 'owner', false), { etag: quoteEtag(organization.etag) });
      },
    }),
    body: CreateOrganizationSchema,
    creates: true,
  };
}

function updateOrganizationRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/organizations/:organization_id',
      operationId: 'updateOrganization',
      summary: 'Change an organization',
      description:
        'Changes the fields given. With If-Match, only if the organization is still at that ETag (412 otherwise); 409 when the slug is taken.',
      tags: ['Organizations'],
      params: orgParams,
      responses: {
        '200': { ...json(OrganizationSchema, 'The organization, as stored.'), headers: ETAG_HEADER },
        '401': errors['401'],
        '403': errors['403'],
        '409': 'Conflict',
        '412': 'PreconditionFailed',
        '422': errors['422'],
      },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, UpdateOrganizationSchema, limit);
        const { organization } = await notFoundAs404(() =>
          ctx.clients.organizations.updateOrganization({
            organizationId: c.input.params.organization_id,
            name: body.name,
            slug: body.slug,
            auditRetentionDays: body.settings?.audit_retention_days,
            etag,
          }),
        );
        sendJson(c.res, 200, organizationJson(organization!, callerOf(c).role, true), { etag: quoteEtag(organization!.etag) });
      },
    }),
    body: UpdateOrganizationSchema,
  };
}

function transferOwnershipRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/transfer-ownership',
      operationId: 'transferOrganizationOwnership',
      summary: 'Hand over ownership',
      description: 'Makes another member an owner and the calling owner an admin, in that order, so the organization always has an owner.',
      tags: ['Organizations'],
      params: orgParams,
      responses: {
        '200': json(OwnershipTransferSchema, 'Both memberships, as stored.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '409': 'Conflict',
        '422': errors['422'],
      },
      handler: async (c) => {
        const body = await readJson(c, TransferOwnershipSchema, limit);
        if (body.user_id === callerOf(c).subject) {
          throw new ConflictError('you are an owner already: name another member to hand the organization to');
        }
        const res = await notFoundAs404(() =>
          ctx.clients.organizations.transferOwnership({
            organizationId: c.input.params.organization_id,
            fromUserId: callerOf(c).subject,
            toUserId: body.user_id,
          }),
        );
        sendJson(c.res, 200, { from: memberJson(res.from!), to: memberJson(res.to!) });
      },
    }),
    body: TransferOwnershipSchema,
  };
}

export function organizationChangeRoutes(deps: RouteDeps): RestRoute[] {
  return [createOrganizationRoute(deps), updateOrganizationRoute(deps), transferOwnershipRoute(deps)];
}
