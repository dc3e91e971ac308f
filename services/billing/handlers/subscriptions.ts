import { create } from '@bufbuild/protobuf';
import { timestampFromMs, timestampMs } from '@bufbuild/protobuf/wkt';
import {
  EntitlementsSchema,
  DeleteSubscriptionResponseSchema,
  GetEntitlementsResponseSchema,
  Plan,
  SetPlanResponseSchema,
  SubscriptionSchema,
  type DeleteSubscriptionRequest,
  type GetEntitlementsRequest,
  type SetPlanRequest,
} from '../../../gen/mindgate/billing/v1/billing_pb.js';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { PLAN_ENTITLEMENTS } from '../plans.ts';

export interface SubscriptionRecord extends RecordDoc {
  plan: 'starter' | 'professional';
  trialEndsAt?: number;
  currency: string;
  updatedAt: number;
}

export interface BillingContext {
  subscriptions: RecordCollection<SubscriptionRecord>;
  now: () => number;
}

const PLAN_NAMES = { [Plan.STARTER]: 'starter', [Plan.PROFESSIONAL]: 'professional' } as const;

function planOf(record: SubscriptionRecord | undefined): Plan.STARTER | Plan.PROFESSIONAL {
  return record?.plan === 'professional' ? Plan.PROFESSIONAL : Plan.STARTER;
}

function toSubscription(organizationId: string, record: SubscriptionRecord | undefined) {
  return create(SubscriptionSchema, {
    organizationId,
    plan: planOf(record),
    trialEndTime: record?.trialEndsAt === undefined ? undefined : timestampFromMs(record.trialEndsAt),
    currency: record?.currency ?? '',
  });
}

export async function getEntitlements(ctx: BillingContext, req: GetEntitlementsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const record = await ctx.subscriptions.get(organizationId);
  const trialOver = record?.trialEndsAt !== undefined && record.trialEndsAt <= ctx.now();
  const effective = trialOver ? Plan.STARTER : planOf(record);
  const granted = PLAN_ENTITLEMENTS[effective];
  return create(GetEntitlementsResponseSchema, {
    subscription: toSubscription(organizationId, record),
    effectivePlan: effective,
    entitlements: create(EntitlementsSchema, {
      entityGraph: granted.entityGraph,
      webhookEventsPerMonth: BigInt(granted.webhookEventsPerMonth),
      maxMemories: BigInt(granted.maxMemories),
    }),
  });
}

export async function setPlan(ctx: BillingContext, req: SetPlanRequest) {
  const organizationId = requireOrganization(req.organizationId);
  if (req.plan !== Plan.STARTER && req.plan !== Plan.PROFESSIONAL) {
    invalid('plan', 'must be PLAN_STARTER or PLAN_PROFESSIONAL');
  }
  if (req.currency && !/^(EUR|USD)$/.test(req.currency)) invalid('currency', 'must be EUR or USD');
  const trialEndsAt = req.trialEndTime ? timestampMs(req.trialEndTime) : undefined;
  if (trialEndsAt !== undefined && trialEndsAt <= ctx.now()) invalid('trial_end_time', 'must be in the future');
  const record: SubscriptionRecord = {
    _id: organizationId,
    plan: PLAN_NAMES[req.plan],
    currency: req.currency,
    updatedAt: ctx.now(),
    ...(trialEndsAt === undefined ? {} : { trialEndsAt }),
  };
  await ctx.subscriptions.put(record);
  return create(SetPlanResponseSchema, { subscription: toSubscription(organizationId, record) });
}

/** Deletes the organization's subscription (its deletion). */
export async function deleteSubscription(ctx: BillingContext, req: DeleteSubscriptionRequest) {
  const organizationId = requireOrganization(req.organizationId);
  return create(DeleteSubscriptionResponseSchema, { existed: await ctx.subscriptions.delete(organizationId) });
}
