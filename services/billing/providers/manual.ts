// The built-in manual provider, the embedded default for a single machine: the checkout page is the
// platform's own ({web_url}/checkout/<id>, edge/web/checkout-page.ts), invoices are issued here
// and an operator marks them paid (InvoicesService.MarkInvoicePaid). Nothing leaves the machine.
import type { Catalogue } from '../catalogue.ts';
import type { InvoiceRecord } from '../invoice-record.ts';
import { periodInvoiceId, type SubscriptionRecord } from '../subscription-record.ts';
import { addInterval } from '../subscription-record.ts';
import type { PaymentProvider, PlanChange } from './interface.ts';

/**
 * The proration of a change at `change.at` within the paid period [start, end): a credit for the
 * unused part of the old price, and the new price for a new period starting then. A credit larger
 * than the new charge is not paid out (the invoice is 0); see docs/billing.md.
 */
export function prorationInvoice(
  catalogue: Catalogue,
  current: SubscriptionRecord,
  change: PlanChange,
  dueDays: number,
): InvoiceRecord | undefined {
  const { periodStart: start, periodEnd: end } = current;
  if (start === undefined || end === undefined || current.trialEndsAt !== undefined) return undefined;
  const unused = Math.max(0, Math.min(1, (end - change.at) / (end - start)));
  const credit = Math.round((current.unitAmount ?? 0) * unused);
  const oldName = catalogue.plans[current.plan].name;
  const cadence = (i: string | undefined) => (i === 'year' ? 'yearly' : 'monthly');
  const lines = [
    { description: `Unused time on ${oldName}, ${cadence(current.interval)}`, amount: -credit },
    { description: `${change.planName}, ${cadence(change.interval)}`, amount: change.unitAmount },
  ];
  const total = lines.reduce((sum, l) => sum + l.amount, 0);
  return {
    _id: periodInvoiceId(current._id, change.at),
    organizationId: current._id,
    status: total <= 0 ? 'paid' : 'open',
    currency: change.currency,
    amountDue: Math.max(0, total),
    amountPaid: 0,
    entity: current.entity ?? 'us',
    provider: 'manual',
    lines,
    periodStart: change.at,
    periodEnd: addInterval(change.at, change.interval),
    createdAt: change.at,
    dueAt: change.at + dueDays * 86_400_000,
  };
}

export function createManualProvider(catalogue: Catalogue, dueDays: number): PaymentProvider {
  return {
    name: 'manual',
    async openCheckout(input) {
      return { url: `${input.pageBaseUrl}/${input.checkoutId}`, reference: input.checkoutId };
    },
    async changePlan(subscription, change) {
      return prorationInvoice(catalogue, subscription, change, dueDays);
    },
    async setCancelAtPeriodEnd() {
      // Nothing to tell anyone: the subscription record is the whole truth.
    },
  };
}
