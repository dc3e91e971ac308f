// The plan catalogue file and the billing regions: the shipped catalogue loads; a bad file is
// refused naming the field; every EU, EEA, UK and Swiss country is billed in EUR by the European
// entity, a sample of the others in USD by the US one, and what is not a country is refused.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CatalogueError, DEFAULT_PLANS_FILE, loadCatalogue, parseCatalogue } from '../../services/billing/catalogue.ts';
import { readBillingConfig } from '../../services/billing/config.ts';
import { ConfigError } from '../../services/common/config.ts';
import { EEA_COUNTRIES, EU_COUNTRIES, isCountry, normalizeCountry, OTHER_EUR_COUNTRIES, regionOf } from '../../services/billing/regions.ts';

const catalogue = loadCatalogue();

describe('the plan catalogue', () => {
  it('ships Starter and Professional with EUR and USD prices per month and year, trials and entitlements', () => {
    expect(catalogue.version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    for (const plan of [catalogue.plans.starter, catalogue.plans.professional]) {
      for (const currency of ['EUR', 'USD'] as const) {
        expect(plan.prices[currency].month).toBeGreaterThanOrEqual(0);
        expect(plan.prices[currency].year).toBeGreaterThanOrEqual(0);
      }
      expect(Object.keys(plan.entitlements).sort()).toEqual(
        ['api_requests_per_minute', 'entity_graph', 'max_members', 'max_memories', 'runs_per_month', 'webhook_events_per_month'].sort(),
      );
    }
    expect(catalogue.plans.professional.trial_days).toBe(14);
    expect(catalogue.plans.professional.prices.EUR.month).toBeGreaterThan(0);
    expect(catalogue.plans.professional.entitlements.entity_graph).toBe(true);
    expect(catalogue.plans.starter.entitlements.entity_graph).toBe(false);
    expect(catalogue.trial_plan).toBe('professional');
  });

  it('refuses a file with a bad field, naming the file and the field', () => {
    const text = fs.readFileSync(DEFAULT_PLANS_FILE, 'utf8');
    const bad = text.replace('max_memories: 100000', 'max_memories: lots');
    expect(() => parseCatalogue(bad, 'plans.yaml')).toThrow(CatalogueError);
    expect(() => parseCatalogue(bad, 'plans.yaml')).toThrow(/^plans\.yaml: plans\.starter\.entitlements\.max_memories: /);
    expect(() => parseCatalogue(text.replace('currency: USD', 'currency: GBP'), 'x.yaml')).toThrow(/entities\.us\.currency/);
    expect(() => parseCatalogue(`${text}\nsurprise: 1\n`, 'x.yaml')).toThrow(/x\.yaml: /);
    expect(() => parseCatalogue('version: [', 'x.yaml')).toThrow(/x\.yaml: not YAML/);
    expect(() => loadCatalogue('/nonexistent/plans.yaml')).toThrow(/cannot be read \(ENOENT\)/);
  });
});

describe('billing settings', () => {
  it('refuses a bad catalogue file and missing Stripe keys at start, naming the variable', () => {
    expect(() => readBillingConfig({ BILLING_PLANS_FILE: '/nonexistent/plans.yaml' })).toThrow(ConfigError);
    expect(() => readBillingConfig({ BILLING_PLANS_FILE: '/nonexistent/plans.yaml' })).toThrow(/^BILLING_PLANS_FILE: /);
    expect(() => readBillingConfig({ BILLING_PROVIDER: 'stripe' })).toThrow(/^STRIPE_SECRET_KEY: /);
    expect(() => readBillingConfig({ BILLING_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_123' })).toThrow(/^STRIPE_WEBHOOK_SECRET: /);
    expect(() => readBillingConfig({ BRAIN_PASS_METHODS: 'test,paypal' })).toThrow(/^BRAIN_PASS_METHODS: /);
  });

  it('sells the pass with the test method only on the manual default, and with Stripe when Stripe takes payments', () => {
    expect(readBillingConfig({}).passMethods).toEqual(['test']);
    const stripe = readBillingConfig({
      BILLING_PROVIDER: 'stripe',
      STRIPE_SECRET_KEY: 'sk_test_123',
      STRIPE_WEBHOOK_SECRET: 'whsec_12345678',
    });
    expect(stripe.passMethods).toEqual(['stripe']);
    expect(readBillingConfig({ BRAIN_PASS_METHODS: 'none' }).passMethods).toEqual([]);
  });
});

describe('billing regions', () => {
  const eur = [...EU_COUNTRIES, ...EEA_COUNTRIES, ...OTHER_EUR_COUNTRIES];

  it('bills the 27 EU states, the rest of the EEA, the UK and Switzerland in EUR by the European entity', () => {
    expect(EU_COUNTRIES).toHaveLength(27);
    expect(eur).toHaveLength(32);
    for (const country of eur) {
      expect(isCountry(country), country).toBe(true);
      expect(regionOf(catalogue, country), country).toEqual({ country, currency: 'EUR', entity: 'eu', entityName: 'Mindgate Europe B.V.' });
    }
  });

  it('bills everyone else in USD by the US entity', () => {
    const others = [
      'US',
      'CA',
      'MX',
      'BR',
      'AR',
      'JP',
      'CN',
      'IN',
      'AU',
      'NZ',
      'ZA',
      'NG',
      'EG',
      'TR',
      'UA',
      'RS',
      'AL',
      'BA',
      'MD',
      'AD',
      'MC',
      'SM',
      'VA',
      'RU',
      'IL',
      'AE',
      'SG',
      'KR',
    ];
    for (const country of others) {
      expect(eur, country).not.toContain(country);
      expect(isCountry(country), country).toBe(true);
      expect(regionOf(catalogue, country), country).toMatchObject({ currency: 'USD', entity: 'us', entityName: 'Mindgate Inc.' });
    }
  });

  it('refuses codes that name no country, and reads either case', () => {
    for (const code of ['XX', 'ZZ', 'EU', 'UK', 'T1', 'A1', 'D', 'DEU', '', 'QZ', '1A'])
      expect(normalizeCountry(code), code).toBeUndefined();
    expect(normalizeCountry(' de ')).toBe('DE');
    expect(normalizeCountry('gb')).toBe('GB');
  });
});
