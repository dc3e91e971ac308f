// What Stripe's webhook events do to subscriptions and invoices. Each handler is a state sync that
// can run twice without harm (a redelivery, or two replicas receiving the same event): it sets
// fields to what the event says rather than adding to them.
import type Stripe from 'stripe';
import type { Interval } from '../catalogue.ts';
import type { BillingContext } from '../context.ts';
import type { InvoiceRecord } from '../invoice-record.ts';
import { normalizeCountry, regionOf } from '../regions.ts';
import { toStarter, type SubscriptionRecord } from '../subscription-record.ts';
import { updateSubscription } from '../subscription-store.ts';
import { activate } from './checkouts.ts';

const ms = (seconds: number | null | undefined) => (typeof seconds === 'number' ? seconds * 1000 : undefined);
const idOf = (value: string | { id: string } | null | undefined) => (typeof value === 'string' ? value : value?.id);

async function checkoutCompleted(ctx: BillingContext, session: Stripe.Checkout.Session): Promise<boolean> {
  const byMetadata = session.metadata?.checkout_id ? await ctx.checkouts.get(session.metadata.checkout_id) : undefined;
  const checkout = byMetadata ?? (await ctx.checkouts.find({ providerRef: session.id }, { limit: 1 }))[0];
  if (checkout?.provider !== 'stripe') {
    ctx.logger.warn({ session: session.id }, 'Stripe checkout session of no checkout of ours: ignored');
    return false;
  }
  // The region is the billing address's, when Stripe collected one in the currency charged.
  const collected = normalizeCountry(session.customer_details?.address?.country ?? undefined);
  const region =
    collected && regionOf(ctx.catalogue, collected).currency === checkout.currency
      ? regionOf(ctx.catalogue, collected)
      : regionOf(ctx.catalogue, checkout.country);
  if (collected && region.country !== collected) {
    ctx.logger.warn(
      { checkout: checkout._id, collected, charged: checkout.currency },
      'billing country is in another region than the currency charged',
    );
  }
  const done = await activate(ctx, checkout, {
    provider: 'stripe',
    region,
    providerSubscriptionId: idOf(session.subscription),
    customerId: idOf(session.customer),
  });
  return done !== undefined;
}

async function organizationOfSubscription(ctx: BillingContext, subscriptionId: string | undefined, metadata?: Stripe.Metadata | null) {
  if (metadata?.organization_id) return metadata.organization_id;
  if (!subscriptionId) return undefined;
  return (await ctx.subscriptions.find({ providerSubscriptionId: subscriptionId }, { limit: 1 }))[0]?._id;
}

const STATUS: Partial<Record<Stripe.Subscription.Status, SubscriptionRecord['status']>> = {
  trialing: 'trialing',
  active: 'active',
  past_due: 'past_due',
  unpaid: 'past_due',
};

async function subscriptionChanged(ctx: BillingContext, sub: Stripe.Subscription, deleted: boolean): Promise<boolean> {
  const organizationId = await organizationOfSubscription(ctx, sub.id, sub.metadata);
  if (!organizationId) return false;
  const item = sub.items?.data?.[0] as
    | (Stripe.SubscriptionItem & { current_period_start?: number; current_period_end?: number })
    | undefined;
  await updateSubscription(ctx, organizationId, '', async ({ record }) => {
    if (record.providerSubscriptionId !== undefined && record.providerSubscriptionId !== sub.id) return undefined;
    if (deleted || sub.status === 'canceled' || sub.status === 'incomplete_expired') return toStarter(record, ctx.now());
    const status = STATUS[sub.status];
    if (!status) return undefined;
    const plan = sub.metadata?.plan === 'starter' || sub.metadata?.plan === 'professional' ? sub.metadata.plan : record.plan;
    const recurring = item?.price?.recurring?.interval;
    const interval: Interval | undefined = recurring === 'month' || recurring === 'year' ? (recurring as Interval) : undefined;
    const trialEnd = status === 'trialing' ? ms(sub.trial_end) : undefined;
    const { trialEndsAt: _t, ...rest } = record;
    return {
      ...rest,
      plan,
      status,
      providerSubscriptionId: sub.id,
      cancelAtPeriodEnd: sub.cancel_at_period_end,
      ...(interval ? { interval } : {}),
      ...(typeof item?.price?.unit_amount === 'number' ? { unitAmount: item.price.unit_amount } : {}),
      ...(trialEnd ? { trialEndsAt: trialEnd } : {}),
      periodStart: ms(item?.current_period_start) ?? record.periodStart,
      periodEnd: ms(item?.current_period_end) ?? record.periodEnd,
    };
  });
  return true;
}

const INVOICE_STATUS: Record<string, InvoiceRecord['status'] | undefined> = {
  open: 'open',
  paid: 'paid',
  void: 'void',
  uncollectible: 'open',
};

async function invoiceChanged(ctx: BillingContext, invoice: Stripe.Invoice, failed: boolean): Promise<boolean> {
  const parent = (invoice as { parent?: { subscription_details?: { subscription?: string; metadata?: Stripe.Metadata } } }).parent;
  const legacy = (invoice as { subscription?: string | { id: string } }).subscription;
  const subscriptionId = parent?.subscription_details?.subscription ?? idOf(legacy);
  const organizationId = await organizationOfSubscription(
    ctx,
    subscriptionId,
    invoice.metadata?.organization_id ? invoice.metadata : parent?.subscription_details?.metadata,
  );
  const status = INVOICE_STATUS[invoice.status ?? ''];
  if (!organizationId || !invoice.id || !status) return false;
  const current = await ctx.subscriptions.get(organizationId);
  const record: InvoiceRecord = {
    _id: invoice.id,
    organizationId,
    status,
    currency: invoice.currency.toUpperCase() === 'EUR' ? 'EUR' : 'USD',
    amountDue: invoice.amount_due,
    amountPaid: invoice.amount_paid,
    entity: current?.entity ?? 'us',
    provider: 'stripe',
    lines: (invoice.lines?.data ?? []).map((l) => ({ description: l.description ?? '', amount: l.amount })),
    periodStart: ms(invoice.period_start) ?? ctx.now(),
    periodEnd: ms(invoice.period_end) ?? ctx.now(),
    createdAt: ms(invoice.created) ?? ctx.now(),
    ...(invoice.due_date ? { dueAt: invoice.due_date * 1000 } : {}),
    ...(status === 'paid' ? { paidAt: ms(invoice.status_transitions?.paid_at) ?? ctx.now() } : {}),
    ...(invoice.hosted_invoice_url ? { hostedUrl: invoice.hosted_invoice_url } : {}),
  };
  await ctx.invoices.put(record);
  await updateSubscription(ctx, organizationId, '', async ({ record: sub }) => {
    if (failed && sub.status !== 'past_due') return { ...sub, status: 'past_due' };
    if (status === 'paid' && sub.status === 'past_due') return { ...sub, status: 'active' };
    return undefined;
  });
  return true;
}

/** Applies one verified event; false for an event the platform does not use. */
export async function applyStripeEvent(ctx: BillingContext, event: Stripe.Event): Promise<boolean> {
  switch (event.type) {
    case 'checkout.session.completed':
      return checkoutCompleted(ctx, event.data.object);
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
      return subscriptionChanged(ctx, event.data.object, false);
    case 'customer.subscription.deleted':
      return subscriptionChanged(ctx, event.data.object, true);
    case 'invoice.finalized':
    case 'invoice.paid':
    case 'invoice.voided':
    case 'invoice.marked_uncollectible':
      return invoiceChanged(ctx, event.data.object, false);
    case 'invoice.payment_failed':
      return invoiceChanged(ctx, event.data.object, true);
    default:
      return false;
  }
}
