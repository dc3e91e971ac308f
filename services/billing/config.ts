// The billing service's settings: which payment provider takes subscriptions, the plan catalogue,
// Stripe's keys, and the brain-pass payment methods. Read with the other service settings
// (services/common/config.ts) and validated at start.
import { ConfigError, readEnum, readInt, readSecret, readString, readUrl, type Env } from '../common/config.ts';
import { CatalogueError, DEFAULT_PLANS_FILE, loadCatalogue, type Catalogue } from './catalogue.ts';

export type ProviderName = 'manual' | 'stripe';
export type PassMethodName = 'test' | 'stripe';

export interface StripeConfig {
  secretKey: string;
  /** Signing secret of the webhook endpoint (whsec_...), for Stripe-Signature. */
  webhookSecret: string;
  /** Base URL of the Stripe API (stripe-mock in tests); unset: Stripe's own. */
  apiUrl?: string;
}

export interface BillingConfig {
  /** Who takes subscription payments: the built-in manual provider or Stripe. */
  provider: ProviderName;
  /** The plan catalogue file (catalogue.ts), and what it holds, validated at start. */
  plansFile: string;
  catalogue: Catalogue;
  stripe?: StripeConfig;
  /** Payment methods a brain-pass may be bought with. */
  passMethods: PassMethodName[];
  /** The HMAC key binding brain-pass challenges; unset: generated into $DATA_DIR/brain-pass-secret. */
  passSecret?: string;
  /** How long a brain-pass challenge may be answered. */
  passChallengeSeconds: number;
  /** Days a manual invoice is due after it is issued. */
  invoiceDueDays: number;
}

function readPassMethods(env: Env, provider: ProviderName): PassMethodName[] {
  const value = readString(env, 'BRAIN_PASS_METHODS');
  // The test method hands out passes for a made-up card: only the single-machine default has it.
  if (value === undefined) return provider === 'stripe' ? ['stripe'] : ['test'];
  if (value === 'none') return [];
  const methods = value.split(',').map((m) => m.trim());
  for (const m of methods) {
    if (m !== 'test' && m !== 'stripe') throw new ConfigError('BRAIN_PASS_METHODS', `expected test, stripe or none, got "${m}"`);
  }
  return [...new Set(methods)] as PassMethodName[];
}

function readStripe(env: Env, need: { key: boolean; webhooks: boolean }): StripeConfig | undefined {
  const secretKey = readSecret(env, 'STRIPE_SECRET_KEY', 8);
  const webhookSecret = readSecret(env, 'STRIPE_WEBHOOK_SECRET', 8);
  if (!need.key && !secretKey) return undefined;
  if (!secretKey) throw new ConfigError('STRIPE_SECRET_KEY', 'is required with BILLING_PROVIDER=stripe or the stripe brain-pass method');
  if (!webhookSecret && need.webhooks) throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'is required with BILLING_PROVIDER=stripe');
  return { secretKey, webhookSecret: webhookSecret ?? '', apiUrl: readUrl(env, 'STRIPE_API_URL') };
}

function readCatalogue(file: string): Catalogue {
  try {
    return loadCatalogue(file);
  } catch (err) {
    if (err instanceof CatalogueError) throw new ConfigError('BILLING_PLANS_FILE', err.message);
    throw err;
  }
}

export function readBillingConfig(env: Env): BillingConfig {
  const provider = readEnum(env, 'BILLING_PROVIDER', ['manual', 'stripe'] as const, 'manual');
  const passMethods = readPassMethods(env, provider);
  const plansFile = readString(env, 'BILLING_PLANS_FILE', DEFAULT_PLANS_FILE);
  return {
    provider,
    plansFile,
    catalogue: readCatalogue(plansFile),
    stripe: readStripe(env, { key: provider === 'stripe' || passMethods.includes('stripe'), webhooks: provider === 'stripe' }),
    passMethods,
    passSecret: readSecret(env, 'BRAIN_PASS_SECRET', 32),
    passChallengeSeconds: readInt(env, 'BRAIN_PASS_CHALLENGE_SECONDS', 300, { min: 30, max: 3_600 }),
    invoiceDueDays: readInt(env, 'BILLING_INVOICE_DUE_DAYS', 14, { min: 0, max: 365 }),
  };
}
