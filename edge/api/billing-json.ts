// The billing resources of the Agents API as JSON: their zod schemas (which the OpenAPI document is
// built from) and the conversions from the billing service's messages. Amounts are integers in
// minor units of the currency (cents), as payment providers count them.
import * as z from 'zod';
import {
  BillingInterval,
  Plan,
  SubscriptionStatus,
  type Entitlements,
  type GetEntitlementsResponse,
  type PlanOffer,
} from '../../gen/mindgate/billing/v1/billing_pb.js';
import { CheckoutStatus, type Checkout } from '../../gen/mindgate/billing/v1/checkout_pb.js';
import { InvoiceStatus, type Invoice } from '../../gen/mindgate/billing/v1/invoices_pb.js';
import { iso } from './rest-route.ts';

export const PLAN_KEYS = ['starter', 'professional'] as const;
export const INTERVALS = ['month', 'year'] as const;
const Money = z.int().meta({ description: 'Minor units of the currency (cents).' });
const Time = z.string().nullable();

export const EntitlementsSchema = z
  .object({
    entity_graph: z.boolean().meta({ description: 'The Brain’s entity-graph tools and operations.' }),
    webhook_events_per_month: z.int(),
    max_memories: z.int(),
    max_members: z.int().nullable().meta({ description: 'Members, pending invitations included; null: no limit.' }),
    api_requests_per_minute: z.int(),
    runs_per_month: z.int(),
  })
  .meta({ title: 'Entitlements' });

const PriceSchema = z.object({ currency: z.enum(['EUR', 'USD']), unit_amount: Money }).meta({ title: 'Price' });

export const PlanSchema = z
  .object({
    key: z.enum(PLAN_KEYS),
    name: z.string(),
    description: z.string(),
    trial_days: z.int().meta({ description: 'Trial offered at checkout to an organization that never had one; 0: none.' }),
    prices: z.object({ month: PriceSchema, year: PriceSchema }),
    entitlements: EntitlementsSchema,
  })
  .meta({ title: 'Plan' });

export const SubscriptionSchema = z
  .object({
    organization_id: z.string(),
    plan: z.enum(PLAN_KEYS).meta({ description: 'The plan in force now (Starter once a trial or a cancelled plan ended).' }),
    plan_name: z.string(),
    status: z.enum(['trialing', 'active', 'past_due']),
    interval: z.enum(INTERVALS).nullable(),
    unit_amount: Money.nullable().meta({ description: 'Price per interval of the paid plan.' }),
    currency: z.enum(['EUR', 'USD']).nullable(),
    entity: z.string().nullable().meta({ description: 'The regional entity that bills the organization.' }),
    country: z.string().nullable().meta({ description: 'Billing address country (ISO 3166-1 alpha-2).' }),
    provider: z.enum(['manual', 'stripe']).nullable(),
    trial_end: Time,
    current_period_start: Time,
    current_period_end: Time,
    cancel_at_period_end: z.boolean(),
    payment_method_on_file: z.boolean().meta({ description: 'A checkout completed: a trial continues as the paid plan.' }),
    catalogue_version: z.string(),
    entitlements: EntitlementsSchema,
  })
  .meta({ title: 'Subscription' });

export const CheckoutSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    plan: z.enum(PLAN_KEYS),
    interval: z.enum(INTERVALS),
    status: z.enum(['open', 'complete', 'expired']),
    url: z.string().meta({ description: 'The hosted payment page: send the customer there.' }),
    provider: z.enum(['manual', 'stripe']),
    currency: z.enum(['EUR', 'USD']),
    entity: z.string(),
    entity_name: z.string(),
    country: z.string(),
    unit_amount: Money,
    trial_days: z.int().meta({ description: 'Days of trial before the first payment; 0: paid from now.' }),
    trial_end: Time,
    created_at: Time,
    expires_at: Time,
    completed_at: Time,
  })
  .meta({ title: 'Checkout' });

export const InvoiceSchema = z
  .object({
    id: z.string(),
    status: z.enum(['open', 'paid', 'void']),
    currency: z.enum(['EUR', 'USD']),
    amount_due: Money,
    amount_paid: Money,
    entity: z.string(),
    provider: z.enum(['manual', 'stripe']),
    lines: z.array(z.object({ description: z.string(), amount: Money.meta({ description: 'Negative for a credit (proration).' }) })),
    period_start: Time,
    period_end: Time,
    created_at: Time,
    due_at: Time,
    paid_at: Time,
    hosted_url: z.string().nullable(),
  })
  .meta({ title: 'Invoice' });

const planKey = (plan: Plan) => (plan === Plan.PROFESSIONAL ? 'professional' : 'starter');
const intervalKey = (i: BillingInterval) => (i === BillingInterval.YEAR ? 'year' : i === BillingInterval.MONTH ? 'month' : null);
const currency = (c: string): 'EUR' | 'USD' => (c === 'EUR' ? 'EUR' : 'USD');
const orNull = (s: string) => (s === '' ? null : s);

export function entitlementsJson(e: Entitlements | undefined): z.output<typeof EntitlementsSchema> {
  return {
    entity_graph: e?.entityGraph ?? false,
    webhook_events_per_month: Number(e?.webhookEventsPerMonth ?? 0n),
    max_memories: Number(e?.maxMemories ?? 0n),
    max_members: e?.maxMembers ? Number(e.maxMembers) : null,
    api_requests_per_minute: Number(e?.apiRequestsPerMinute ?? 0n),
    runs_per_month: Number(e?.runsPerMonth ?? 0n),
  };
}

export function planJson(p: PlanOffer): z.output<typeof PlanSchema> {
  const price = (x: PlanOffer['monthly']) => ({ currency: currency(x?.currency ?? ''), unit_amount: Number(x?.unitAmount ?? 0n) });
  return {
    key: planKey(p.plan),
    name: p.name,
    description: p.description,
    trial_days: p.trialDays,
    prices: { month: price(p.monthly), year: price(p.yearly) },
    entitlements: entitlementsJson(p.entitlements),
  };
}

const STATUS = { [SubscriptionStatus.TRIALING]: 'trialing', [SubscriptionStatus.PAST_DUE]: 'past_due' } as const;

export function subscriptionJson(res: GetEntitlementsResponse): z.output<typeof SubscriptionSchema> {
  const s = res.subscription!;
  const paid = s.interval !== BillingInterval.UNSPECIFIED && s.paymentMethodOnFile;
  return {
    organization_id: s.organizationId,
    plan: planKey(res.effectivePlan),
    plan_name: res.planName,
    status: STATUS[s.status as keyof typeof STATUS] ?? 'active',
    interval: intervalKey(s.interval),
    unit_amount: paid ? Number(s.unitAmount) : null,
    currency: s.currency ? currency(s.currency) : null,
    entity: orNull(s.entity),
    country: orNull(s.country),
    provider: s.provider === 'manual' || s.provider === 'stripe' ? s.provider : null,
    trial_end: iso(s.trialEndTime),
    current_period_start: iso(s.currentPeriodStart),
    current_period_end: iso(s.currentPeriodEnd),
    cancel_at_period_end: s.cancelAtPeriodEnd,
    payment_method_on_file: s.paymentMethodOnFile,
    catalogue_version: s.catalogueVersion,
    entitlements: entitlementsJson(res.entitlements),
  };
}

const CHECKOUT_STATUS = { [CheckoutStatus.COMPLETE]: 'complete', [CheckoutStatus.EXPIRED]: 'expired' } as const;

export function checkoutJson(c: Checkout): z.output<typeof CheckoutSchema> {
  return {
    id: c.checkoutId,
    organization_id: c.organizationId,
    plan: planKey(c.plan),
    interval: intervalKey(c.interval) ?? 'month',
    status: CHECKOUT_STATUS[c.status as keyof typeof CHECKOUT_STATUS] ?? 'open',
    url: c.url,
    provider: c.provider === 'stripe' ? 'stripe' : 'manual',
    currency: currency(c.currency),
    entity: c.entity,
    entity_name: c.entityName,
    country: c.country,
    unit_amount: Number(c.unitAmount),
    trial_days: c.trialDays,
    trial_end: iso(c.trialEndTime),
    created_at: iso(c.createTime),
    expires_at: iso(c.expireTime),
    completed_at: iso(c.completeTime),
  };
}

const INVOICE_STATUS = { [InvoiceStatus.PAID]: 'paid', [InvoiceStatus.VOID]: 'void' } as const;

export function invoiceJson(i: Invoice): z.output<typeof InvoiceSchema> {
  return {
    id: i.invoiceId,
    status: INVOICE_STATUS[i.status as keyof typeof INVOICE_STATUS] ?? 'open',
    currency: currency(i.currency),
    amount_due: Number(i.amountDue),
    amount_paid: Number(i.amountPaid),
    entity: i.entity,
    provider: i.provider === 'stripe' ? 'stripe' : 'manual',
    lines: i.lines.map((l) => ({ description: l.description, amount: Number(l.amount) })),
    period_start: iso(i.periodStart),
    period_end: iso(i.periodEnd),
    created_at: iso(i.createTime),
    due_at: iso(i.dueTime),
    paid_at: iso(i.paidTime),
    hosted_url: orNull(i.hostedUrl),
  };
}
