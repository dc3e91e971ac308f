import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';

export interface PlanEntitlements {
  entityGraph: boolean;
  webhookEventsPerMonth: number;
  maxMemories: number;
}

/** What each plan grants. A trial of a plan grants that plan's entitlements until it ends. */
export const PLAN_ENTITLEMENTS: Record<Plan.STARTER | Plan.PROFESSIONAL, PlanEntitlements> = {
  [Plan.STARTER]: { entityGraph: false, webhookEventsPerMonth: 1_000, maxMemories: 100_000 },
  [Plan.PROFESSIONAL]: { entityGraph: true, webhookEventsPerMonth: 100_000, maxMemories: 2_000_000 },
};

/** Trial length offered at checkout. */
export const TRIAL_DAYS = 14;
