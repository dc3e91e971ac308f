// Billing regions (SERVICE-SPEC "Plans and tenancy"): customers in the EU, the EEA, the United
// Kingdom and Switzerland are billed in EUR by the European entity; everyone else in USD by the
// US one. The list is law, not configuration, so it lives here; the entities' names are in the
// catalogue.
import { Code, ConnectError } from '@connectrpc/connect';
import type { Catalogue, Currency } from './catalogue.ts';

/**
 * The 27 member states of the European Union. (The list in shared/reference/agents-api.md leaves out
 * Hungary, HU, a member since 2004.)
 */
export const EU_COUNTRIES = [
  'AT',
  'BE',
  'BG',
  'HR',
  'CY',
  'CZ',
  'DK',
  'EE',
  'FI',
  'FR',
  'DE',
  'GR',
  'HU',
  'IE',
  'IT',
  'LV',
  'LT',
  'LU',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SK',
  'SI',
  'ES',
  'SE',
] as const;
/** The rest of the European Economic Area. */
export const EEA_COUNTRIES = ['IS', 'LI', 'NO'] as const;
/** Billed in EUR too: the United Kingdom and Switzerland. */
export const OTHER_EUR_COUNTRIES = ['GB', 'CH'] as const;

const EUR_COUNTRIES: ReadonlySet<string> = new Set([...EU_COUNTRIES, ...EEA_COUNTRIES, ...OTHER_EUR_COUNTRIES]);

const names = new Intl.DisplayNames(['en'], { type: 'region' });
/** Two-letter codes that name no country: groupings and the user-assigned codes CDNs use (XX, T1). */
const NOT_COUNTRIES = new Set(['EU', 'EZ', 'UN', 'UK', 'XX', 'ZZ', 'AA']);

/** Whether `code` (upper case) is an ISO 3166-1 alpha-2 country code. */
export function isCountry(code: string): boolean {
  if (!/^[A-Z]{2}$/.test(code) || NOT_COUNTRIES.has(code) || /^(Q[M-Z]|X[A-Z])$/.test(code)) return false;
  const name = names.of(code);
  return name !== undefined && name !== code && name !== 'Unknown Region';
}

/** The English name of a country, for pages. */
export function countryName(code: string): string {
  return names.of(code) ?? code;
}

/** A country from a request (either case), or undefined when it is not one. */
export function normalizeCountry(value: string | undefined): string | undefined {
  const code = value?.trim().toUpperCase();
  return code && isCountry(code) ? code : undefined;
}

/** A country the caller must give right: INVALID_ARGUMENT naming the field otherwise. */
export function requireCountry(field: string, value: string): string {
  const code = normalizeCountry(value);
  if (!code)
    throw new ConnectError(`${field}: must be an ISO 3166-1 alpha-2 country code, got "${value.slice(0, 10)}"`, Code.InvalidArgument);
  return code;
}

export type EntityKey = 'eu' | 'us';

export interface Region {
  country: string;
  currency: Currency;
  entity: EntityKey;
  entityName: string;
}

/** Who bills a country (upper-case ISO code), and in which currency. */
export function regionOf(catalogue: Catalogue, country: string): Region {
  const entity: EntityKey = EUR_COUNTRIES.has(country) ? 'eu' : 'us';
  const { name, currency } = catalogue.entities[entity];
  return { country, currency, entity, entityName: name };
}

/** The currency of a country, or USD when the country is not known. */
export function currencyOf(catalogue: Catalogue, country: string | undefined): Currency {
  return country ? regionOf(catalogue, country).currency : 'USD';
}
