// The organization operations of the REST API: listing and reading organizations here, and, each
// in its own module, creating and changing them (organization-changes.ts), usage (usage.ts),
// members (members.ts), API keys (api-keys.ts), the OAuth clients acting for an organization with
// revocation (oauth-clients.ts), confidential clients for client_credentials
// (confidential-clients.ts) and the audit log (audit.ts). Each route is declared once
// (api-route.ts): the same zod schemas validate requests and produce the OpenAPI document; every
// route then goes behind the guard (access.ts).
import * as z from 'zod';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { createOAuthManagement } from '../oauth/management.ts';
import { apiKeyRoutes } from './api-keys.ts';
import type { Organization } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import { callerOf, guardRoutes, ROLE_NAMES, roleName, type RoleName } from './access.ts';
import { auditRoutes, createAuditRecorder } from './audit.ts';
import { confidentialClientRoutes } from './confidential-clients.ts';
import { ETAG_HEADER, quoteEtag } from './etag.ts';
import { createIdempotency } from './idempotency.ts';
import { createInvitationMail, invitationRoutes } from './invitations.ts';
import { organizationChangeRoutes } from './organization-changes.ts';
import { teamBrainAccessRoutes } from './team-brain-access.ts';
import { teamRoutes } from './teams.ts';
import { threadMemoryRoutes } from './thread-memories.ts';
import { threadRoutes } from './threads.ts';
import { runRoutes } from './runs.ts';
import { jobRoutes } from './jobs.ts';
import { alertRoutes } from './alerts.ts';
import { evaluationDatasetRoutes } from './evaluation-datasets.ts';
import { evaluationRoutes } from './evaluations.ts';
import { runLeaseRoutes } from './run-leases.ts';
import { playbookRoutes } from './playbooks.ts';
import { playbookDocumentRoutes } from './playbook-documents.ts';
import { streamRunEventsRoute } from './run-events.ts';
import { userRoutes } from './users.ts';
import { requestEmailChangeRoute } from './email-change.ts';
import { graphRoutes } from './graph.ts';
import { memoryRoutes } from './memories.ts';
import { seedingRoutes } from './seeding.ts';
import { createApiCallCounter, usageRoute } from './usage.ts';
import { createApiRateLimits } from './rate-limits.ts';
import { memberRoutes } from './members.ts';
import { createEntitlementsCache } from '../../services/billing/entitlements-cache.ts';
import { billingCheckoutRoutes } from './billing-checkouts.ts';
import { billingInvoiceRoutes } from './billing-invoices.ts';
import { billingSubscriptionRoutes } from './billing-subscription.ts';
import { oauthClientRoutes } from './oauth-clients.ts';
import { webhookDeliveryRoutes } from './webhook-deliveries.ts';
import { webhookEndpointRoutes } from './webhook-endpoints.ts';
import { mcpServerRoutes } from './mcp-servers.ts';
import { gatewayKeyRoutes } from './gateway-keys.ts';
import { integrationRoutes } from './integrations/routes.ts';
import {
  errors,
  iso,
  json,
  listEnvelope,
  listing,
  pageArgs,
  sendPage,
  notFoundAs404,
  orgParams,
  pageQuery,
  type OrganizationRouteOptions,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

export const OrganizationSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string().nullable().meta({ description: 'Unique, URL-friendly name; null for organizations from before slugs.' }),
    brain_id: z.string().meta({ description: "The organization's brain (shared memory)." }),
    role: z.enum(ROLE_NAMES).nullable().meta({ description: "The caller's role, for user tokens." }),
    current: z.boolean().meta({ description: 'True for the organization the credentials act for.' }),
    settings: z.object({ audit_retention_days: z.int().meta({ description: 'How long audit events are kept.' }) }),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ title: 'Organization' });

export const OrganizationListSchema = listEnvelope('organizations', OrganizationSchema, 'OrganizationList');

type OrganizationJson = z.infer<typeof OrganizationSchema>;

export function organizationJson(o: Organization, role: RoleName | null, current: boolean): OrganizationJson {
  return {
    id: o.organizationId,
    name: o.name,
    slug: o.slug || null,
    brain_id: o.brainId,
    role,
    current,
    settings: { audit_retention_days: o.auditRetentionDays },
    created_at: iso(o.createTime),
    updated_at: iso(o.updateTime),
  };
}

function listOrganizationsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations',
    operationId: 'listOrganizations',
    summary: "List the caller's organizations",
    description:
      "With a user's access token: every organization the user belongs to, in the order they joined, with the user's role; `current` marks the one the token acts for. With an API key or a client_credentials token: the one organization it acts for.",
    tags: ['Organizations'],
    query: pageQuery,
    responses: { '200': json(OrganizationListSchema, 'One page of organizations.'), '401': errors['401'], '422': errors['422'] },
    handler: async (c) => {
      const caller = callerOf(c);
      if (caller.kind !== 'user') {
        const { organization } = await ctx.clients.organizations.getOrganization({ organizationId: caller.organizationId });
        sendJson(c.res, 200, { organizations: [organizationJson(organization!, null, true)], next_page_token: null });
        return;
      }
      const res = await listing(() => ctx.clients.organizations.listOrganizations({ userId: caller.subject, ...pageArgs(c.input.query) }));
      const current = (o: Organization) => o.organizationId === caller.organizationId;
      const items = res.organizations.map((o) => organizationJson(o.organization!, roleName(o.role), current(o.organization!)));
      sendPage(c, 'organizations', items, res.nextPageToken);
    },
  });
}

function getOrganizationRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id',
    operationId: 'getOrganization',
    summary: 'Get an organization',
    description: 'The organization the credentials act for; any other organization is 403. The ETag header is its version, for If-Match.',
    tags: ['Organizations'],
    params: orgParams,
    responses: {
      '200': { ...json(OrganizationSchema, 'The organization.'), headers: ETAG_HEADER },
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const { organization: o } = await notFoundAs404(() =>
        ctx.clients.organizations.getOrganization({ organizationId: c.input.params.organization_id }),
      );
      sendJson(c.res, 200, organizationJson(o!, callerOf(c).role, true), { etag: quoteEtag(o!.etag) });
    },
  });
}

export function organizationRoutes({ ctx, authenticate }: OrganizationRouteOptions, extra: RestRoute[] = []): RestRoute[] {
  const deps: RouteDeps = {
    ctx,
    authenticate,
    management: createOAuthManagement(ctx.stores.records, ctx.keyEncryption, ctx.config, ctx.now),
    limit: ctx.config.maxBodyBytes,
  };
  const calls = createApiCallCounter(ctx);
  const entitlements = createEntitlementsCache({ billing: () => ctx.clients.billing, now: () => ctx.now() });
  const routes = [
    listOrganizationsRoute(deps),
    getOrganizationRoute(deps),
    ...organizationChangeRoutes(deps),
    usageRoute(deps, calls),
    ...apiKeyRoutes(deps),
    ...oauthClientRoutes(deps),
    ...memberRoutes(deps),
    ...teamRoutes(deps),
    ...teamBrainAccessRoutes(deps),
    ...invitationRoutes(deps, createInvitationMail(ctx)),
    ...confidentialClientRoutes(deps),
    ...auditRoutes(deps),
    ...mcpServerRoutes(deps),
    ...gatewayKeyRoutes(deps),
    ...integrationRoutes(deps),
    ...userRoutes(deps),
    requestEmailChangeRoute(deps),
    ...threadRoutes(deps),
    ...threadMemoryRoutes(deps),
    ...runLeaseRoutes(deps),
    ...runRoutes(deps),
    ...jobRoutes(deps),
    // The documents' fixed paths (validate, import) before the playbook's own.
    ...playbookDocumentRoutes(deps),
    ...playbookRoutes(deps),
    streamRunEventsRoute(deps),
    ...alertRoutes(deps),
    ...evaluationDatasetRoutes(deps),
    ...evaluationRoutes(deps),
    ...webhookEndpointRoutes(deps),
    ...webhookDeliveryRoutes(deps),
    ...billingSubscriptionRoutes(deps),
    ...billingCheckoutRoutes(deps),
    ...billingInvoiceRoutes(deps),
    ...graphRoutes(deps),
    ...memoryRoutes(deps),
    ...seedingRoutes(deps),
    ...extra,
  ];
  guardRoutes(ctx, authenticate, routes, createAuditRecorder(ctx), createIdempotency(ctx), createApiRateLimits(ctx, calls, entitlements));
  return routes;
}
