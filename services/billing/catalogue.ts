// The plan catalogue (catalogue/plans.yaml, or BILLING_PLANS_FILE): plans with their prices in EUR
// and USD per month and per year, trial lengths and entitlements; the regional entities; the
// brain-pass offer. Read and validated once at start: a bad file stops the service naming the
// file and the field, so a typo never reaches a customer's invoice.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import * as z from 'zod';
import { Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';

export const CURRENCIES = ['EUR', 'USD'] as const;
export type Currency = (typeof CURRENCIES)[number];
export type PlanKey = 'starter' | 'professional';
export type Interval = 'month' | 'year';

/** The catalogue shipped with the platform. */
export const DEFAULT_PLANS_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'catalogue/plans.yaml');

const count = z.int().min(0).max(1_000_000_000_000);
const amount = z.int().min(0).max(100_000_000);

const EntitlementsSchema = z
  .object({
    entity_graph: z.boolean(),
    webhook_events_per_month: count,
    max_memories: count.min(1),
    max_members: count.meta({ description: '0: no limit' }),
    api_requests_per_minute: count.min(1),
    runs_per_month: count,
  })
  .strict();

const PlanSchema = z
  .object({
    name: z.string().min(1).max(60),
    description: z.string().max(300).default(''),
    trial_days: z.int().min(0).max(365),
    prices: z
      .object({ EUR: z.object({ month: amount, year: amount }).strict(), USD: z.object({ month: amount, year: amount }).strict() })
      .strict(),
    entitlements: EntitlementsSchema,
  })
  .strict();

const EntitySchema = z.object({ name: z.string().min(1).max(200), currency: z.enum(CURRENCIES) }).strict();

const CatalogueSchema = z
  .object({
    version: z.string().regex(/^[A-Za-z0-9._-]{1,40}$/),
    entities: z.object({ eu: EntitySchema, us: EntitySchema }).strict(),
    trial_plan: z.enum(['starter', 'professional']),
    plans: z.object({ starter: PlanSchema, professional: PlanSchema }).strict(),
    brain_pass: z
      .object({
        plan: z.enum(['starter', 'professional']),
        hours: z
          .int()
          .min(1)
          .max(24 * 366),
        prices: z.object({ EUR: amount.min(1), USD: amount.min(1) }).strict(),
      })
      .strict(),
  })
  .strict()
  .refine((c) => c.entities.eu.currency === 'EUR' && c.entities.us.currency === 'USD', {
    error: 'entities.eu must bill in EUR and entities.us in USD',
  });

export type Catalogue = z.output<typeof CatalogueSchema>;
export type CataloguePlan = Catalogue['plans'][PlanKey];
export type PlanEntitlements = CataloguePlan['entitlements'];

/** The catalogue file cannot be used; the message names the file and the field. */
export class CatalogueError extends Error {
  constructor(file: string, message: string) {
    super(`${file}: ${message}`);
    this.name = 'CatalogueError';
  }
}

export function parseCatalogue(text: string, file: string): Catalogue {
  let raw: unknown;
  try {
    raw = YAML.parse(text);
  } catch (err) {
    throw new CatalogueError(file, `not YAML (${(err as Error).message.split('\n')[0]})`);
  }
  const parsed = CatalogueSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CatalogueError(file, `${issue.path.join('.') || '(file)'}: ${issue.message}`);
  }
  return parsed.data;
}

export function loadCatalogue(file: string = DEFAULT_PLANS_FILE): Catalogue {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CatalogueError(file, `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parseCatalogue(text, file);
}

export const PLAN_KEYS: Record<Plan.STARTER | Plan.PROFESSIONAL, PlanKey> = {
  [Plan.STARTER]: 'starter',
  [Plan.PROFESSIONAL]: 'professional',
};
export const PLAN_ENUMS: Record<PlanKey, Plan.STARTER | Plan.PROFESSIONAL> = { starter: Plan.STARTER, professional: Plan.PROFESSIONAL };

/** The catalogue key of a proto plan, or undefined for PLAN_UNSPECIFIED and unknown values. */
export function planKeyOf(plan: Plan): PlanKey | undefined {
  return plan === Plan.STARTER || plan === Plan.PROFESSIONAL ? PLAN_KEYS[plan] : undefined;
}

/** What a plan costs per interval in a currency, in minor units. */
export function priceOf(catalogue: Catalogue, plan: PlanKey, currency: Currency, interval: Interval): number {
  return catalogue.plans[plan].prices[currency][interval];
}

/** A plan is paid when it costs something in some currency and interval. */
export function isPaid(catalogue: Catalogue, plan: PlanKey): boolean {
  const { EUR, USD } = catalogue.plans[plan].prices;
  return [EUR.month, EUR.year, USD.month, USD.year].some((p) => p > 0);
}
