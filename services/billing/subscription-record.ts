// An organization's subscription as stored, and how it moves with time. Time-driven changes (a
// trial ending, a cancelled plan reaching its period's end, a manual plan renewing) are evaluated
// lazily, on every read, from the record and the clock: every replica computes the same answer
// at the same instant, with no sweep to run or miss. The first read after such a moment writes the
// result back with a compare-and-set on `version`, and the invoices it issues have ids derived from
// the organization and the period, so replicas racing on it write each invoice once.
import { createHash } from 'node:crypto';
import type { RecordDoc } from '../common/storage/records/interface.ts';
import type { Catalogue, Currency, Interval, PlanKey } from './catalogue.ts';
import type { ProviderName } from './config.ts';
import type { InvoiceRecord } from './invoice-record.ts';
import type { EntityKey } from './regions.ts';

export interface SubscriptionRecord extends RecordDoc {
  plan: PlanKey;
  /** Absent on records from before statuses: derived (trialing with a trial end, else active). */
  status?: 'trialing' | 'active' | 'past_due';
  trialEndsAt?: number;
  /** '' when not known yet. */
  currency: string;
  interval?: Interval;
  entity?: EntityKey;
  country?: string;
  provider?: ProviderName;
  providerCustomerId?: string;
  providerSubscriptionId?: string;
  periodStart?: number;
  periodEnd?: number;
  cancelAtPeriodEnd?: boolean;
  /** A checkout completed: the trial continues as the paid plan. */
  paymentMethodOnFile?: boolean;
  /** Price per interval of the paid plan, minor units. */
  unitAmount?: number;
  catalogueVersion?: string;
  /** A trial was started once (a checkout offers the plan's trial only to those who never had one). */
  trialUsed?: boolean;
  /** Bumped by every write; absent on records from before it (version 0). */
  version?: number;
  updatedAt: number;
}

/** The record of an organization that has none: Starter, free. */
export function starterRecord(organizationId: string, now: number, catalogue: Catalogue): SubscriptionRecord {
  return { _id: organizationId, plan: 'starter', status: 'active', currency: '', updatedAt: now, catalogueVersion: catalogue.version };
}

export function addInterval(at: number, interval: Interval): number {
  const d = new Date(at);
  if (interval === 'year') d.setUTCFullYear(d.getUTCFullYear() + 1);
  else d.setUTCMonth(d.getUTCMonth() + 1);
  return d.getTime();
}

/** The paid fields cleared: what a subscription falls back to when a trial or a paid plan ends. */
export function toStarter(record: SubscriptionRecord, now: number): SubscriptionRecord {
  const {
    trialEndsAt: _t,
    interval: _i,
    periodStart: _ps,
    periodEnd: _pe,
    cancelAtPeriodEnd: _c,
    paymentMethodOnFile: _p,
    unitAmount: _u,
    providerSubscriptionId: _s,
    ...rest
  } = record;
  return { ...rest, plan: 'starter', status: 'active', updatedAt: now };
}

/** The id of the invoice of a period: the same on every replica. */
export function periodInvoiceId(organizationId: string, periodStart: number): string {
  return `in_${createHash('sha256').update(`${organizationId}|${periodStart}`).digest('base64url').slice(0, 24).replace(/[-_]/g, 'x')}`;
}

export interface InvoiceContext {
  catalogue: Catalogue;
  invoiceDueDays: number;
}

/** The invoice of one period of a manual subscription. */
export function periodInvoice(ctx: InvoiceContext, record: SubscriptionRecord, start: number, end: number, now: number): InvoiceRecord {
  const amount = record.unitAmount ?? 0;
  const plan = ctx.catalogue.plans[record.plan];
  return {
    _id: periodInvoiceId(record._id, start),
    organizationId: record._id,
    status: amount === 0 ? 'paid' : 'open',
    currency: record.currency as Currency,
    amountDue: amount,
    amountPaid: 0,
    entity: record.entity ?? 'us',
    provider: 'manual',
    lines: [{ description: `${plan.name}, ${record.interval === 'year' ? 'yearly' : 'monthly'}`, amount }],
    periodStart: start,
    periodEnd: end,
    createdAt: now,
    dueAt: now + ctx.invoiceDueDays * 86_400_000,
  };
}

/** Periods renewed by one read, at most: a subscription untouched for longer catches up over several reads. */
const MAX_RENEWALS = 120;

/**
 * The record as of `now`, and the invoices the moments passed since it was written issue. Returns
 * the record itself (same object) when nothing happened.
 */
export function advance(
  ctx: InvoiceContext,
  record: SubscriptionRecord,
  now: number,
): { record: SubscriptionRecord; invoices: InvoiceRecord[] } {
  let next = record;
  const invoices: InvoiceRecord[] = [];
  if (next.trialEndsAt !== undefined && next.trialEndsAt <= now) {
    if (next.paymentMethodOnFile && next.interval && !next.cancelAtPeriodEnd) {
      const start = next.trialEndsAt;
      const { trialEndsAt: _t, ...paid } = next;
      next = { ...paid, status: 'active', periodStart: start, periodEnd: addInterval(start, next.interval), updatedAt: now };
      if (next.provider === 'manual') invoices.push(periodInvoice(ctx, next, start, next.periodEnd!, now));
    } else {
      next = toStarter(next, now);
    }
  }
  if (next.periodEnd !== undefined && next.periodEnd <= now && next.interval) {
    if (next.cancelAtPeriodEnd) {
      next = toStarter(next, now);
    } else if (next.provider === 'manual') {
      // Stripe renews on its side and says so by webhook; the manual provider renews here.
      for (let i = 0; i < MAX_RENEWALS && next.periodEnd! <= now; i++) {
        const start = next.periodEnd!;
        next = { ...next, periodStart: start, periodEnd: addInterval(start, next.interval!), updatedAt: now };
        invoices.push(periodInvoice(ctx, next, start, next.periodEnd!, now));
      }
    }
  }
  return { record: next, invoices };
}

export function statusOf(record: SubscriptionRecord): 'trialing' | 'active' | 'past_due' {
  return record.status ?? (record.trialEndsAt !== undefined ? 'trialing' : 'active');
}
