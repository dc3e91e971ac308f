// Plans and entitlements: what an organization has now (GetEntitlements, with time-driven changes
// such as a trial's end applied on read), the catalogue in a currency (ListPlans), who bills a
// country (ResolveRegion), the onboarding trial (StartTrial) and the operator's SetPlan.
import { create } from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import {
  EntitlementsSchema,
  GetEntitlementsResponseSchema,
  ListPlansResponseSchema,
  PlanOfferSchema,
  PriceSchema,
  ResolveRegionResponseSchema,
  SetPlanResponseSchema,
  StartTrialResponseSchema,
  type GetEntitlementsRequest,
  type ListPlansRequest,
  type ResolveRegionRequest,
  type SetPlanRequest,
  type StartTrialRequest,
} from '../../../gen/mindgate/billing/v1/billing_pb.js';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import { CURRENCIES, PLAN_ENUMS, planKeyOf, type Catalogue, type Currency, type PlanEntitlements, type PlanKey } from '../catalogue.ts';
import { INTERVAL_ENUMS } from '../checkout-record.ts';
import type { BillingContext } from '../context.ts';
import { regionOf, requireCountry } from '../regions.ts';
import { currentSubscription, putSubscription, toSubscription } from '../subscription-store.ts';
import { toStarter, type SubscriptionRecord } from '../subscription-record.ts';

export function toEntitlements(e: PlanEntitlements) {
  return create(EntitlementsSchema, {
    entityGraph: e.entity_graph,
    webhookEventsPerMonth: BigInt(e.webhook_events_per_month),
    maxMemories: BigInt(e.max_memories),
    maxMembers: BigInt(e.max_members),
    apiRequestsPerMinute: BigInt(e.api_requests_per_minute),
    runsPerMonth: BigInt(e.runs_per_month),
  });
}

export async function getEntitlements(ctx: BillingContext, req: GetEntitlementsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const { record } = await currentSubscription(ctx, organizationId);
  const plan = ctx.catalogue.plans[record.plan];
  return create(GetEntitlementsResponseSchema, {
    subscription: toSubscription(record),
    effectivePlan: PLAN_ENUMS[record.plan],
    entitlements: toEntitlements(plan.entitlements),
    planName: plan.name,
  });
}

function requireCurrency(value: string, fallback: Currency): Currency {
  if (value === '') return fallback;
  if (!(CURRENCIES as readonly string[]).includes(value)) invalid('currency', 'must be EUR or USD');
  return value as Currency;
}

export function planOffer(catalogue: Catalogue, key: PlanKey, currency: Currency) {
  const plan = catalogue.plans[key];
  const price = (interval: 'month' | 'year') =>
    create(PriceSchema, { currency, unitAmount: BigInt(plan.prices[currency][interval]), interval: INTERVAL_ENUMS[interval] });
  return create(PlanOfferSchema, {
    plan: PLAN_ENUMS[key],
    key,
    name: plan.name,
    description: plan.description,
    trialDays: plan.trial_days,
    monthly: price('month'),
    yearly: price('year'),
    entitlements: toEntitlements(plan.entitlements),
  });
}

export async function listPlans(ctx: BillingContext, req: ListPlansRequest) {
  const currency = requireCurrency(req.currency, 'USD');
  return create(ListPlansResponseSchema, {
    catalogueVersion: ctx.catalogue.version,
    currency,
    plans: (['starter', 'professional'] as const).map((key) => planOffer(ctx.catalogue, key, currency)),
  });
}

export async function resolveRegion(ctx: BillingContext, req: ResolveRegionRequest) {
  const region = regionOf(ctx.catalogue, requireCountry('country', req.country));
  return create(ResolveRegionResponseSchema, {
    country: region.country,
    currency: region.currency,
    entity: region.entity,
    entityName: region.entityName,
  });
}

/** Stores a plan outright (the operator's SetPlan, the onboarding trial): paid fields are cleared. */
async function storePlan(ctx: BillingContext, organizationId: string, plan: PlanKey, trialEndsAt: number | undefined, currency: string) {
  const now = ctx.now();
  for (;;) {
    const current = await currentSubscription(ctx, organizationId);
    const base = toStarter(current.record, now);
    const next: SubscriptionRecord = {
      ...base,
      plan,
      status: trialEndsAt === undefined ? 'active' : 'trialing',
      currency: currency || base.currency,
      catalogueVersion: ctx.catalogue.version,
      ...(trialEndsAt === undefined ? {} : { trialEndsAt, trialUsed: true }),
    };
    const stored = await putSubscription(ctx, next, current);
    if (stored) return stored;
  }
}

export async function setPlan(ctx: BillingContext, req: SetPlanRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const plan = planKeyOf(req.plan);
  if (!plan) invalid('plan', 'must be PLAN_STARTER or PLAN_PROFESSIONAL');
  if (req.currency && !/^(EUR|USD)$/.test(req.currency)) invalid('currency', 'must be EUR or USD');
  const trialEndsAt = req.trialEndTime ? timestampMs(req.trialEndTime) : undefined;
  if (trialEndsAt !== undefined && trialEndsAt <= ctx.now()) invalid('trial_end_time', 'must be in the future');
  const record = await storePlan(ctx, organizationId, plan, trialEndsAt, req.currency);
  return create(SetPlanResponseSchema, { subscription: toSubscription(record) });
}

export async function startTrial(ctx: BillingContext, req: StartTrialRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const plan = ctx.catalogue.trial_plan;
  const days = req.trialDays ?? ctx.catalogue.plans[plan].trial_days;
  if (days > 365) invalid('trial_days', 'must be at most 365');
  const record =
    days > 0
      ? await storePlan(ctx, organizationId, plan, ctx.now() + days * 86_400_000, '')
      : await storePlan(ctx, organizationId, 'starter', undefined, '');
  return create(StartTrialResponseSchema, { subscription: toSubscription(record) });
}
