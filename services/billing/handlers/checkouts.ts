// Checkouts: opening the hosted payment page for a paid plan in the customer's region, reading it,
// and completing it (the manual provider's own page here; Stripe's through its webhook, which
// calls activate() as well). Completion is single-use: the checkout moves from open to complete
// with a compare-and-set, so a page submitted twice or a webhook redelivered activates once.
import { randomBytes } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CompleteManualCheckoutResponseSchema,
  CreateCheckoutResponseSchema,
  GetCheckoutResponseSchema,
  type CompleteManualCheckoutRequest,
  type CreateCheckoutRequest,
  type GetCheckoutRequest,
} from '../../../gen/mindgate/billing/v1/checkout_pb.js';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import { isPaid, planKeyOf } from '../catalogue.ts';
import { intervalOf, toCheckout, type CheckoutRecord } from '../checkout-record.ts';
import type { ProviderName } from '../config.ts';
import type { BillingContext } from '../context.ts';
import { normalizeCountry, regionOf, requireCountry, type Region } from '../regions.ts';
import { addInterval, periodInvoice, type SubscriptionRecord } from '../subscription-record.ts';
import { currentSubscription, issueInvoices, putSubscription, toSubscription } from '../subscription-store.ts';

const DAY = 86_400_000;
/** A checkout page stays open a day, as Stripe's do. */
const CHECKOUT_TTL_MS = DAY;
const CHECKOUT_ID = /^chk_[A-Za-z0-9]{24}$/;
const stateError = (message: string) => failure(message, Code.FailedPrecondition, REASONS.subscriptionState);

function requireUrl(field: string, value: string): string {
  if (value === '') return '';
  try {
    const url = new URL(value);
    if (url.protocol === 'https:' || url.protocol === 'http:') return url.href;
  } catch {}
  return invalid(field, 'must be an http(s) URL');
}

/** The trial a checkout carries: the rest of the current one, or the plan's for those who never had one. */
function trialOf(ctx: BillingContext, current: SubscriptionRecord, plan: CheckoutRecord['plan'], now: number) {
  if (current.trialEndsAt !== undefined && current.trialEndsAt > now) {
    return { trialDays: Math.ceil((current.trialEndsAt - now) / DAY), trialEndsAt: current.trialEndsAt };
  }
  const days = current.trialUsed ? 0 : ctx.catalogue.plans[plan].trial_days;
  return days > 0 ? { trialDays: days, trialEndsAt: now + days * DAY } : { trialDays: 0 };
}

export async function createCheckout(ctx: BillingContext, req: CreateCheckoutRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const plan = planKeyOf(req.plan);
  if (!plan || !isPaid(ctx.catalogue, plan)) invalid('plan', 'must be a paid plan (PLAN_PROFESSIONAL)');
  const interval = intervalOf(req.interval);
  if (!interval) invalid('interval', 'must be BILLING_INTERVAL_MONTH or BILLING_INTERVAL_YEAR');
  const country = req.billingCountry ? requireCountry('billing_country', req.billingCountry) : normalizeCountry(req.countryHint);
  if (!country) invalid('billing_country', 'is required: the request does not say which country it comes from');
  const { record: current } = await currentSubscription(ctx, organizationId);
  if (current.paymentMethodOnFile && current.interval && !current.cancelAtPeriodEnd) {
    throw stateError('the organization already has a paid subscription: change its plan instead');
  }
  const now = ctx.now();
  const region = regionOf(ctx.catalogue, country);
  const checkoutId = `chk_${randomBytes(18).toString('base64url').replace(/[-_]/g, 'x')}`;
  const unitAmount = ctx.catalogue.plans[plan].prices[region.currency][interval];
  const trial = trialOf(ctx, current, plan, now);
  const successUrl = requireUrl('success_url', req.successUrl);
  const cancelUrl = requireUrl('cancel_url', req.cancelUrl);
  const opened = await ctx.provider.openCheckout({
    checkoutId,
    organizationId,
    plan,
    planName: ctx.catalogue.plans[plan].name,
    interval,
    currency: region.currency,
    unitAmount,
    country,
    trialEndsAt: trial.trialEndsAt,
    successUrl: successUrl || `${req.pageBaseUrl}/${checkoutId}`,
    cancelUrl: cancelUrl || `${req.pageBaseUrl}/${checkoutId}`,
    pageBaseUrl: req.pageBaseUrl,
    customerId: current.provider === ctx.provider.name ? current.providerCustomerId : undefined,
  });
  const record: CheckoutRecord = {
    _id: checkoutId,
    organizationId,
    plan,
    interval,
    status: 'open',
    url: opened.url,
    provider: ctx.provider.name,
    providerRef: opened.reference,
    ...(opened.customerId ? { providerCustomerId: opened.customerId } : {}),
    ...regionFields(region),
    unitAmount,
    ...trial,
    successUrl,
    cancelUrl,
    createdAt: now,
    expiresAt: now + CHECKOUT_TTL_MS,
  };
  await ctx.checkouts.put(record, { expect: null });
  return create(CreateCheckoutResponseSchema, { checkout: toCheckout(record, now) });
}

const regionFields = (region: Region) => ({
  currency: region.currency,
  entity: region.entity,
  entityName: region.entityName,
  country: region.country,
});

async function findCheckout(ctx: BillingContext, organizationId: string, checkoutId: string): Promise<CheckoutRecord> {
  const checkout = CHECKOUT_ID.test(checkoutId) ? await ctx.checkouts.get(checkoutId) : undefined;
  if (!checkout || (organizationId !== '' && checkout.organizationId !== organizationId)) {
    throw new ConnectError(`no checkout ${checkoutId.slice(0, 40)}`, Code.NotFound);
  }
  return checkout;
}

export async function getCheckout(ctx: BillingContext, req: GetCheckoutRequest) {
  const organizationId = req.organizationId === '' ? '' : requireOrganization(req.organizationId);
  const checkout = await findCheckout(ctx, organizationId, req.checkoutId);
  return create(GetCheckoutResponseSchema, { checkout: toCheckout(checkout, ctx.now()) });
}

export interface Activation {
  provider: ProviderName;
  region: Region;
  providerSubscriptionId?: string;
  customerId?: string;
}

/**
 * Completes an open checkout once and activates its subscription: the paid plan from now, or at the
 * end of the trial it carries. Returns undefined when the checkout was already completed.
 */
export async function activate(ctx: BillingContext, checkout: CheckoutRecord, activation: Activation) {
  const now = ctx.now();
  const { region } = activation;
  const unitAmount = ctx.catalogue.plans[checkout.plan].prices[region.currency][checkout.interval];
  const completed: CheckoutRecord = { ...checkout, ...regionFields(region), unitAmount, status: 'complete', completedAt: now };
  if (!(await ctx.checkouts.put(completed, { expect: { status: 'open' } }))) return undefined;
  for (;;) {
    const current = await currentSubscription(ctx, checkout.organizationId);
    const trialing = checkout.trialEndsAt !== undefined && checkout.trialEndsAt > now;
    const { periodStart: _s, periodEnd: _e, ...base } = current.record;
    const next: SubscriptionRecord = {
      ...base,
      plan: checkout.plan,
      status: trialing ? 'trialing' : 'active',
      interval: checkout.interval,
      unitAmount,
      ...regionFields(region),
      provider: activation.provider,
      paymentMethodOnFile: true,
      cancelAtPeriodEnd: false,
      catalogueVersion: ctx.catalogue.version,
      ...(activation.customerId ? { providerCustomerId: activation.customerId } : {}),
      ...(activation.providerSubscriptionId ? { providerSubscriptionId: activation.providerSubscriptionId } : {}),
      ...(trialing
        ? { trialEndsAt: checkout.trialEndsAt, trialUsed: true }
        : { periodStart: now, periodEnd: addInterval(now, checkout.interval) }),
    };
    if (!trialing) delete next.trialEndsAt;
    const stored = await putSubscription(ctx, next, current);
    if (!stored) continue;
    if (!trialing && activation.provider === 'manual') await issueInvoices(ctx, [periodInvoice(ctx, stored, now, stored.periodEnd!, now)]);
    return { checkout: completed, subscription: stored };
  }
}

export async function completeManualCheckout(ctx: BillingContext, req: CompleteManualCheckoutRequest) {
  const checkout = await findCheckout(ctx, '', req.checkoutId);
  const country = requireCountry('billing_country', req.billingCountry);
  if (checkout.provider !== 'manual') throw stateError("this checkout is completed on its provider's page");
  if (checkout.status !== 'open' || checkout.expiresAt <= ctx.now()) throw stateError('this checkout is no longer open: start a new one');
  const done = await activate(ctx, checkout, { provider: 'manual', region: regionOf(ctx.catalogue, country) });
  if (!done) throw stateError('this checkout is no longer open: start a new one');
  return create(CompleteManualCheckoutResponseSchema, {
    checkout: toCheckout(done.checkout, ctx.now()),
    subscription: toSubscription(done.subscription),
  });
}
