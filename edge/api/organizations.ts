// The organization operations of the REST API: the caller's organizations here, and, each in its
// own module, API keys (api-keys.ts), the OAuth clients acting for an organization with
// revocation (oauth-clients.ts), and confidential clients for client_credentials
// (confidential-clients.ts). Each route is declared once (api-route.ts): the same zod schemas
// validate requests and produce the OpenAPI document.
import * as z from 'zod';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { createOAuthManagement } from '../oauth/management.ts';
import { apiKeyRoutes } from './api-keys.ts';
import { callerOf, guardRoutes, ROLE_NAMES, roleName, type AuthorizedCaller } from './access.ts';
import { auditRoutes, createAuditRecorder } from './audit.ts';
import { confidentialClientRoutes } from './confidential-clients.ts';
import { createIdempotency } from './idempotency.ts';
import { createApiRateLimits } from './rate-limits.ts';
import { memberRoutes } from './members.ts';
import { oauthClientRoutes } from './oauth-clients.ts';
import {
  errors,
  iso,
  json,
  notFoundAs404,
  orgParams,
  type OrganizationRouteOptions,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

export const OrganizationSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    brain_id: z.string().meta({ description: "The organization's brain (shared memory)." }),
    role: z.enum(ROLE_NAMES).nullable().meta({ description: "The caller's role, for user tokens." }),
    current: z.boolean().meta({ description: 'True for the organization the credentials act for.' }),
    created_at: z.string().nullable(),
  })
  .meta({ title: 'Organization' });

export const OrganizationListSchema = z.object({ organizations: z.array(OrganizationSchema) }).meta({ title: 'OrganizationList' });

type Organization = z.infer<typeof OrganizationSchema>;

/** A user's organizations with the user's role in each; a key or client acts for its one organization. */
async function callersOrganizations({ ctx }: RouteDeps, caller: AuthorizedCaller): Promise<Organization[]> {
  if (caller.kind !== 'user') {
    const { organization: o } = await ctx.clients.organizations.getOrganization({ organizationId: caller.organizationId });
    return [{ id: o!.organizationId, name: o!.name, brain_id: o!.brainId, role: null, current: true, created_at: iso(o!.createTime) }];
  }
  const res = await ctx.clients.organizations.listOrganizations({ userId: caller.subject });
  return res.organizations.map((o) => ({
    id: o.organization!.organizationId,
    name: o.organization!.name,
    brain_id: o.organization!.brainId,
    role: roleName(o.role),
    current: o.organization!.organizationId === caller.organizationId,
    created_at: iso(o.organization!.createTime),
  }));
}

function listOrganizationsRoute(deps: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations',
    operationId: 'listOrganizations',
    summary: "List the caller's organizations",
    description:
      "With a user's access token: every organization the user belongs to, with the user's role; `current` marks the one the token acts for. With an API key or a client_credentials token: the one organization it acts for.",
    tags: ['Organizations'],
    responses: { '200': json(OrganizationListSchema, 'The organizations.'), '401': errors['401'] },
    handler: async (c) => {
      sendJson(c.res, 200, { organizations: await callersOrganizations(deps, callerOf(c)) });
    },
  });
}

function getOrganizationRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id',
    operationId: 'getOrganization',
    summary: 'Get an organization',
    description: 'The organization the credentials act for; any other organization is 403.',
    tags: ['Organizations'],
    params: orgParams,
    responses: { '200': json(OrganizationSchema, 'The organization.'), '401': errors['401'], '403': errors['403'], '422': errors['422'] },
    handler: async (c) => {
      const caller = callerOf(c);
      const { organization: o } = await notFoundAs404(() =>
        ctx.clients.organizations.getOrganization({ organizationId: c.input.params.organization_id }),
      );
      sendJson(c.res, 200, {
        id: o!.organizationId,
        name: o!.name,
        brain_id: o!.brainId,
        role: caller.role,
        current: true,
        created_at: iso(o!.createTime),
      });
    },
  });
}

export function organizationRoutes({ ctx, authenticate }: OrganizationRouteOptions): RestRoute[] {
  const deps: RouteDeps = {
    ctx,
    authenticate,
    management: createOAuthManagement(ctx.stores.records, ctx.keyEncryption, ctx.config, ctx.now),
    limit: ctx.config.maxBodyBytes,
  };
  const routes = [
    listOrganizationsRoute(deps),
    getOrganizationRoute(deps),
    ...apiKeyRoutes(deps),
    ...oauthClientRoutes(deps),
    ...memberRoutes(deps),
    ...confidentialClientRoutes(deps),
    ...auditRoutes(deps),
  ];
  guardRoutes(ctx, authenticate, routes, createAuditRecorder(ctx), createIdempotency(ctx), createApiRateLimits(ctx));
  return routes;
}
