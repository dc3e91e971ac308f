// Opening an organization, the same way from onboarding (edge/oauth/interactions/onboarding.ts)
// and from the Agents API (POST /organizations): the organization with its brain and its owner
// (agents service), then its trial (billing service): the catalogue's trial plan for its trial
// length, or TRIAL_DAYS (0: Starter). Should billing fail, the organization stands and is on
// Starter, billing's default.
import type { Organization } from '../gen/mindgate/agents/v1/organizations_pb.js';
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
  await app.clients.billing.startTrial({ organizationId: organization.organizationId, trialDays: app.config.auth.trialDays });
  return organization;
}
