// Ending an organization's billing when the organization is deleted (the purge job's billing step,
// edge/api/organization-deletion/steps.ts). A paid subscription is first cancelled at its provider,
// at the end of the period already paid, so nothing is charged again; then the subscription and
// the organization's checkouts and brain-pass term are deleted. Invoices stay: they are accounting records a business
// must keep, and hold no memory or member of the organization.
import { create } from '@bufbuild/protobuf';
import { DeleteSubscriptionResponseSchema, type DeleteSubscriptionRequest } from '../../../gen/mindgate/billing/v1/billing_pb.js';
import { requireOrganization } from '../../common/rpc/validate.ts';
import type { BillingContext } from '../context.ts';
import { paidProvider } from './plan-changes.ts';

export async function deleteSubscription(ctx: BillingContext, req: DeleteSubscriptionRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const record = await ctx.subscriptions.get(organizationId);
  const provider = record && paidProvider(ctx, record);
  // A provider that fails throws: the purge job retries the step, and nothing is deleted before.
  if (record && provider && !record.cancelAtPeriodEnd) await provider.setCancelAtPeriodEnd(record, true);
  await ctx.checkouts.deleteMany({ organizationId });
  await ctx.passTerms.delete(organizationId);
  return create(DeleteSubscriptionResponseSchema, { existed: await ctx.subscriptions.delete(organizationId) });
}
