// Changing a subscription: another plan or interval (prorated by the provider, docs/billing.md),
// cancelling at the period's end, and resuming before it. Every change is a compare-and-set on the
// subscription's version, with the caller's etag when given.
import { create } from '@bufbuild/protobuf';
import { Code } from '@connectrpc/connect';
import {
  CancelSubscriptionResponseSchema,
  ChangePlanResponseSchema,
  ResumeSubscriptionResponseSchema,
  type CancelSubscriptionRequest,
  type ChangePlanRequest,
  type ResumeSubscriptionRequest,
} from '../../../gen/mindgate/billing/v1/billing_pb.js';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import { isPaid, planKeyOf, type Currency } from '../catalogue.ts';
import { intervalOf } from '../checkout-record.ts';
import type { BillingContext } from '../context.ts';
import type { PaymentProvider } from '../providers/interface.ts';
import { addInterval, toStarter, type SubscriptionRecord } from '../subscription-record.ts';
import { issueInvoices, toSubscription, updateSubscription as update } from '../subscription-store.ts';

const stateError = (message: string) => failure(message, Code.FailedPrecondition, REASONS.subscriptionState);

/** A subscription someone pays for (a checkout completed), and its provider. */
export function paidProvider(ctx: BillingContext, record: SubscriptionRecord): PaymentProvider | undefined {
  if (!record.paymentMethodOnFile || !record.interval || !record.provider) return undefined;
  return ctx.providers[record.provider];
}

export async function changePlan(ctx: BillingContext, req: ChangePlanRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const plan = planKeyOf(req.plan);
  if (!plan) invalid('plan', 'must be PLAN_STARTER or PLAN_PROFESSIONAL');
  const paidTarget = isPaid(ctx.catalogue, plan);
  const interval = intervalOf(req.interval);
  if (paidTarget && !interval)
    invalid('interval', `is required for ${ctx.catalogue.plans[plan].name}: BILLING_INTERVAL_MONTH or BILLING_INTERVAL_YEAR`);
  const at = ctx.now();
  const record = await update(ctx, organizationId, req.etag, async ({ record: current }) => {
    const provider = paidProvider(ctx, current);
    if (!paidTarget) {
      if (!provider) return current.plan === plan && current.trialEndsAt === undefined ? undefined : { ...toStarter(current, at), plan };
      if (current.cancelAtPeriodEnd) return undefined;
      await provider.setCancelAtPeriodEnd(current, true);
      return { ...current, cancelAtPeriodEnd: true };
    }
    if (!provider) {
      throw stateError(
        `${ctx.catalogue.plans[plan].name} is paid: start a checkout (POST /organizations/${organizationId}/checkouts) to subscribe`,
      );
    }
    if (current.plan === plan && current.interval === interval && !current.cancelAtPeriodEnd) return undefined;
    const currency = current.currency as Currency;
    const unitAmount = ctx.catalogue.plans[plan].prices[currency][interval!];
    const invoice = await provider.changePlan(current, {
      plan,
      planName: ctx.catalogue.plans[plan].name,
      interval: interval!,
      currency,
      unitAmount,
      at,
    });
    if (invoice) await issueInvoices(ctx, [invoice]);
    const restart = provider.name === 'manual' && current.trialEndsAt === undefined;
    return {
      ...current,
      plan,
      interval,
      unitAmount,
      cancelAtPeriodEnd: false,
      catalogueVersion: ctx.catalogue.version,
      ...(restart ? { periodStart: at, periodEnd: addInterval(at, interval!) } : {}),
    };
  });
  return create(ChangePlanResponseSchema, { subscription: toSubscription(record) });
}

export async function cancelSubscription(ctx: BillingContext, req: CancelSubscriptionRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const record = await update(ctx, organizationId, req.etag, async ({ record: current }) => {
    const provider = paidProvider(ctx, current);
    if (!provider) throw stateError('there is no paid subscription to cancel');
    if (current.cancelAtPeriodEnd) return undefined;
    await provider.setCancelAtPeriodEnd(current, true);
    return { ...current, cancelAtPeriodEnd: true };
  });
  return create(CancelSubscriptionResponseSchema, { subscription: toSubscription(record) });
}

export async function resumeSubscription(ctx: BillingContext, req: ResumeSubscriptionRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const record = await update(ctx, organizationId, req.etag, async ({ record: current }) => {
    const provider = paidProvider(ctx, current);
    if (!provider || !current.cancelAtPeriodEnd) throw stateError('the subscription is not being cancelled: nothing to resume');
    await provider.setCancelAtPeriodEnd(current, false);
    return { ...current, cancelAtPeriodEnd: false };
  });
  return create(ResumeSubscriptionResponseSchema, { subscription: toSubscription(record) });
}
