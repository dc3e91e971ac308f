// Reading and writing subscriptions: every read brings the record up to the present (advance() in
// subscription-record.ts) and writes the result back once, with a compare-and-set on `version`, so
// that replicas agree and each invoice is issued once; every write is a compare-and-set too, with
// the caller's etag when it gave one.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code } from '@connectrpc/connect';
import { SubscriptionSchema, SubscriptionStatus } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { failure, REASONS } from '../common/rpc/reasons.ts';
import { PLAN_ENUMS } from './catalogue.ts';
import { INTERVAL_ENUMS } from './checkout-record.ts';
import type { BillingContext } from './context.ts';
import type { InvoiceRecord } from './invoice-record.ts';
import { advance, starterRecord, statusOf, type SubscriptionRecord } from './subscription-record.ts';

export interface CurrentSubscription {
  record: SubscriptionRecord;
  /** False for an organization with no stored record (Starter by default). */
  stored: boolean;
}

/** Issues invoices; an invoice already issued (by another replica) is left as it is. */
export async function issueInvoices(ctx: BillingContext, invoices: InvoiceRecord[]): Promise<void> {
  for (const invoice of invoices) await ctx.invoices.put(invoice, { expect: null });
}

/** Stores `next` over `previous` (or over nothing) and returns it; undefined when someone else wrote first. */
export async function putSubscription(
  ctx: BillingContext,
  next: SubscriptionRecord,
  previous: CurrentSubscription,
): Promise<SubscriptionRecord | undefined> {
  const version = previous.stored ? (previous.record.version ?? 0) : 0;
  const expect = previous.stored ? { version: previous.record.version ?? null } : null;
  const stored = { ...next, version: version + 1, updatedAt: ctx.now() };
  return (await ctx.subscriptions.put(stored, { expect })) ? stored : undefined;
}

/** The organization's subscription as of now, written back when time moved it on. */
export async function currentSubscription(ctx: BillingContext, organizationId: string): Promise<CurrentSubscription> {
  for (let attempt = 0; ; attempt++) {
    const stored = await ctx.subscriptions.get(organizationId);
    const now = ctx.now();
    if (!stored) return { record: starterRecord(organizationId, now, ctx.catalogue), stored: false };
    const moved = advance(ctx, stored, now);
    if (moved.record === stored) return { record: stored, stored: true };
    await issueInvoices(ctx, moved.invoices);
    const next = { ...moved.record, version: (stored.version ?? 0) + 1 };
    if (await ctx.subscriptions.put(next, { expect: { version: stored.version ?? null } })) return { record: next, stored: true };
    // Another replica wrote first: read what it wrote (it moved the same way) and go on from there.
    if (attempt >= 3) return { record: moved.record, stored: true };
  }
}

/** Applies `change` to the current subscription until the compare-and-set holds. */
export async function updateSubscription(
  ctx: BillingContext,
  organizationId: string,
  etag: string,
  change: (current: CurrentSubscription) => Promise<SubscriptionRecord | undefined>,
): Promise<SubscriptionRecord> {
  for (let first = true; ; first = false) {
    const current = await currentSubscription(ctx, organizationId);
    if (first) checkEtag(current, etag);
    const next = await change(current);
    if (!next) return current.record;
    const stored = await putSubscription(ctx, next, current);
    if (stored) return stored;
    if (etag !== '') checkEtag(await currentSubscription(ctx, organizationId), etag);
  }
}

/** Refuses a change made against a version that is no longer current. */
export function checkEtag(current: CurrentSubscription, etag: string): void {
  if (etag !== '' && etag !== etagOf(current.record)) {
    throw failure('the subscription changed since it was read (If-Match): read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
}

export const etagOf = (record: SubscriptionRecord) => String(record.version ?? 0);

const STATUSES = {
  trialing: SubscriptionStatus.TRIALING,
  active: SubscriptionStatus.ACTIVE,
  past_due: SubscriptionStatus.PAST_DUE,
} as const;
const ts = (ms: number | undefined) => (ms === undefined ? undefined : timestampFromMs(ms));

export function toSubscription(record: SubscriptionRecord) {
  const trialing = record.trialEndsAt !== undefined;
  const paid = record.interval !== undefined && record.paymentMethodOnFile === true;
  return create(SubscriptionSchema, {
    organizationId: record._id,
    plan: PLAN_ENUMS[record.plan],
    trialEndTime: ts(record.trialEndsAt),
    currency: record.currency,
    status: STATUSES[statusOf(record)],
    interval: record.interval ? INTERVAL_ENUMS[record.interval] : undefined,
    entity: record.entity ?? '',
    country: record.country ?? '',
    provider: paid ? (record.provider ?? '') : '',
    currentPeriodStart: ts(trialing ? undefined : record.periodStart),
    currentPeriodEnd: ts(trialing ? record.trialEndsAt : record.periodEnd),
    cancelAtPeriodEnd: record.cancelAtPeriodEnd === true,
    paymentMethodOnFile: record.paymentMethodOnFile === true,
    catalogueVersion: record.catalogueVersion ?? '',
    etag: etagOf(record),
    unitAmount: BigInt(record.unitAmount ?? 0),
  });
}
