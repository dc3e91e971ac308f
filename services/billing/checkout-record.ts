// A checkout as stored: one attempt to subscribe to a paid plan, open until its hosted page is
// completed (the manual provider's form, or Stripe's webhook) or it expires.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { BillingInterval } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { CheckoutSchema, CheckoutStatus } from '../../gen/mindgate/billing/v1/checkout_pb.js';
import type { RecordDoc } from '../common/storage/records/interface.ts';
import { PLAN_ENUMS, type Currency, type Interval, type PlanKey } from './catalogue.ts';
import type { ProviderName } from './config.ts';
import type { EntityKey } from './regions.ts';

export interface CheckoutRecord extends RecordDoc {
  organizationId: string;
  plan: PlanKey;
  interval: Interval;
  status: 'open' | 'complete';
  url: string;
  provider: ProviderName;
  /** The provider's id of the hosted page (Stripe's checkout session). */
  providerRef: string;
  providerCustomerId?: string;
  currency: Currency;
  entity: EntityKey;
  entityName: string;
  country: string;
  unitAmount: number;
  trialDays: number;
  trialEndsAt?: number;
  successUrl: string;
  cancelUrl: string;
  createdAt: number;
  expiresAt: number;
  completedAt?: number;
}

export const INTERVAL_ENUMS = { month: BillingInterval.MONTH, year: BillingInterval.YEAR } as const;

export function intervalOf(value: BillingInterval): Interval | undefined {
  if (value === BillingInterval.MONTH) return 'month';
  if (value === BillingInterval.YEAR) return 'year';
  return undefined;
}

const ts = (ms: number | undefined) => (ms === undefined ? undefined : timestampFromMs(ms));

export function checkoutStatus(r: CheckoutRecord, now: number): CheckoutStatus {
  if (r.status === 'complete') return CheckoutStatus.COMPLETE;
  return r.expiresAt <= now ? CheckoutStatus.EXPIRED : CheckoutStatus.OPEN;
}

export function toCheckout(r: CheckoutRecord, now: number) {
  return create(CheckoutSchema, {
    checkoutId: r._id,
    organizationId: r.organizationId,
    plan: PLAN_ENUMS[r.plan],
    interval: INTERVAL_ENUMS[r.interval],
    status: checkoutStatus(r, now),
    url: r.url,
    provider: r.provider,
    currency: r.currency,
    entity: r.entity,
    entityName: r.entityName,
    country: r.country,
    unitAmount: BigInt(r.unitAmount),
    trialDays: r.trialDays,
    trialEndTime: ts(r.trialEndsAt),
    createTime: ts(r.createdAt),
    expireTime: ts(r.expiresAt),
    completeTime: ts(r.completedAt),
    successUrl: r.successUrl,
    cancelUrl: r.cancelUrl,
  });
}
