// The payment-provider port: who hosts the payment page of a checkout, and who must hear about
// changes to a paid subscription. Two implementations: the built-in manual provider (the embedded
// default: the platform's own checkout page, invoices an operator marks paid) and Stripe.
import type { Currency, Interval, PlanKey } from '../catalogue.ts';
import type { ProviderName } from '../config.ts';
import type { InvoiceRecord } from '../invoice-record.ts';
import type { SubscriptionRecord } from '../subscription-record.ts';

export interface CheckoutInput {
  checkoutId: string;
  organizationId: string;
  plan: PlanKey;
  planName: string;
  interval: Interval;
  currency: Currency;
  /** Price per interval, minor units. */
  unitAmount: number;
  country: string;
  /** The trial continues until then; the first payment is taken at its end. */
  trialEndsAt?: number;
  successUrl: string;
  cancelUrl: string;
  /** Base URL of the platform's own checkout pages. */
  pageBaseUrl: string;
  /** The organization's customer at the provider, from an earlier checkout. */
  customerId?: string;
}

export interface OpenedCheckout {
  url: string;
  /** The provider's id of the page (a Stripe checkout session). */
  reference: string;
  customerId?: string;
}

export interface PlanChange {
  plan: PlanKey;
  planName: string;
  interval: Interval;
  currency: Currency;
  unitAmount: number;
  /** When the change takes effect. */
  at: number;
}

export interface PaymentProvider {
  readonly name: ProviderName;
  openCheckout(input: CheckoutInput): Promise<OpenedCheckout>;
  /**
   * Moves a paid subscription to another plan or interval, prorated. The provider returns the
   * proration invoice it issues itself (manual) or nothing (Stripe invoices it and says so by webhook).
   */
  changePlan(subscription: SubscriptionRecord, change: PlanChange): Promise<InvoiceRecord | undefined>;
  /** Cancels at the period's end (true), or undoes that (false). */
  setCancelAtPeriodEnd(subscription: SubscriptionRecord, cancel: boolean): Promise<void>;
}
