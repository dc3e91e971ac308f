// Everything the billing service's handlers use, built once in createBillingModule: the catalogue,
// the collections it owns, the payment provider of subscriptions and the brain-pass methods.
import path from 'node:path';
import type { Logger } from '../common/log.ts';
import { loadSecretFile } from '../common/secret-file.ts';
import type { RecordCollection, RecordDoc } from '../common/storage/records/interface.ts';
import type { RecordStores } from '../common/stores.ts';
import type { Catalogue } from './catalogue.ts';
import type { CheckoutRecord } from './checkout-record.ts';
import type { BillingConfig } from './config.ts';
import type { InvoiceRecord } from './invoice-record.ts';
import type { PassMethod } from './pass/methods.ts';
import { createStripePassMethod } from './pass/stripe-method.ts';
import { createTestPassMethod } from './pass/test-method.ts';
import type { PaymentProvider } from './providers/interface.ts';
import { createManualProvider } from './providers/manual.ts';
import { createStripeProvider } from './providers/stripe.ts';
import { createStripeClient } from './providers/stripe-client.ts';
import type { PassTermRecord } from './pass-term-record.ts';
import type { SettlementRecord } from './settlement-record.ts';
import type { SubscriptionRecord } from './subscription-record.ts';
import type Stripe from 'stripe';

/** A provider event already applied (webhook redeliveries are recognised by its id). */
export interface ProviderEventRecord extends RecordDoc {
  type: string;
  appliedAt: number;
}

export interface BillingContext {
  catalogue: Catalogue;
  config: BillingConfig;
  subscriptions: RecordCollection<SubscriptionRecord>;
  checkouts: RecordCollection<CheckoutRecord>;
  invoices: RecordCollection<InvoiceRecord>;
  events: RecordCollection<ProviderEventRecord>;
  settlements: RecordCollection<SettlementRecord>;
  passTerms: RecordCollection<PassTermRecord>;
  /** The provider new checkouts go to (BILLING_PROVIDER). */
  provider: PaymentProvider;
  /** Every provider a stored subscription may belong to. */
  providers: Partial<Record<PaymentProvider['name'], PaymentProvider>>;
  stripe?: Stripe;
  passMethods: Map<string, PassMethod>;
  passSecret: string;
  /** The invoice settings advance() needs. */
  invoiceDueDays: number;
  logger: Logger;
  now: () => number;
}

export interface BillingContextOptions {
  config: BillingConfig;
  dataDir: string;
  now: () => number;
}

export function createBillingContext(stores: RecordStores, logger: Logger, options: BillingContextOptions): BillingContext {
  const { config, now } = options;
  const { catalogue } = config;
  const stripe = config.stripe ? createStripeClient(config.stripe) : undefined;
  const manual = createManualProvider(catalogue, config.invoiceDueDays);
  const providers: BillingContext['providers'] = { manual, ...(stripe ? { stripe: createStripeProvider(stripe, now) } : {}) };
  const passMethods = new Map<string, PassMethod>();
  for (const name of config.passMethods)
    passMethods.set(name, name === 'stripe' ? createStripePassMethod(stripe!) : createTestPassMethod());
  const records = stores.records;
  return {
    catalogue,
    config,
    subscriptions: records.collection<SubscriptionRecord>('subscriptions', { indexes: [{ fields: ['providerSubscriptionId'] }] }),
    checkouts: records.collection<CheckoutRecord>('billing_checkouts', {
      indexes: [{ fields: ['organizationId', 'createdAt'] }, { fields: ['providerRef'] }],
    }),
    invoices: records.collection<InvoiceRecord>('billing_invoices', { indexes: [{ fields: ['organizationId', 'createdAt'] }] }),
    events: records.collection<ProviderEventRecord>('billing_provider_events'),
    settlements: records.collection<SettlementRecord>('brain_pass_settlements'),
    passTerms: records.collection<PassTermRecord>('brain_pass_terms'),
    provider: providers[config.provider]!,
    providers,
    stripe,
    passMethods,
    // Replicas must share it (BRAIN_PASS_SECRET), or a challenge from one fails on another.
    passSecret: config.passSecret ?? loadSecretFile(path.join(options.dataDir, 'brain-pass-secret'), { minLength: 32, generate: true }),
    invoiceDueDays: config.invoiceDueDays,
    logger,
    now,
  };
}
