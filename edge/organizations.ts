// Opening an organization, the same way from onboarding (edge/oauth/interactions/onboarding.ts)
// and from the Agents API (POST /organizations): the organization with its brain and its owner
// (agents service), then its plan (billing service): a Professional trial of AUTH_TRIAL_DAYS, or
// Starter. Should billing fail, the organization stands and is on Starter, billing's default.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { Organization } from '../gen/mindgate/agents/v1/organizations_pb.js';
import { Plan, SetPlanRequestSchema } from '../gen/mindgate/billing/v1/billing_pb.js';
import type { AppContext } from './context.ts';

export async function openOrganization(
  app: AppContext,
  input: { name: string; ownerUserId: string; slug?: string },
): Promise<Organization> {
  const created = await app.clients.organizations.createOrganization({
    name: input.name,
    ownerUserId: input.ownerUserId,
    slug: input.slug ?? '',
  });
  const organization = created.organization!;
  const trialDays = app.config.auth.trialDays;
  await app.clients.billing.setPlan(
    create(SetPlanRequestSchema, {
      organizationId: organization.organizationId,
      plan: trialDays > 0 ? Plan.PROFESSIONAL : Plan.STARTER,
      trialEndTime: trialDays > 0 ? timestampFromMs(app.now() + trialDays * 86_400_000) : undefined,
    }),
  );
  return organization;
}
