// The edge's billing settings: which request header carries the visitor's country (set by a CDN in
// front of the platform, and trusted only as a first guess of the billing region), and the
// brain-pass route's own rate limit. The billing service's settings are in services/billing/config.ts.
import { ConfigError, readInt, readString, type Env } from '../../services/common/config.ts';

export interface EdgeBillingConfig {
  /** Lower-case name of the header with the request's ISO country (cf-ipcountry...); unset: none is trusted. */
  countryHeader?: string;
  /** Brain-pass requests per minute per client IP (the `brain-pass` policy). */
  passRateLimit: number;
}

export function readEdgeBillingConfig(env: Env): EdgeBillingConfig {
  const header = readString(env, 'BILLING_COUNTRY_HEADER')?.toLowerCase();
  if (header !== undefined && !/^[a-z0-9-]{1,64}$/.test(header)) {
    throw new ConfigError('BILLING_COUNTRY_HEADER', `expected a header name, got "${header}"`);
  }
  return {
    countryHeader: header,
    passRateLimit: readInt(env, 'BRAIN_PASS_RATE_LIMIT', 10, { min: 1, max: 100_000 }),
  };
}

/** The request's country from the trusted header, upper case, when it is configured and present. */
export function requestCountry(config: EdgeBillingConfig, headers: Record<string, string | string[] | undefined>): string | undefined {
  if (!config.countryHeader) return undefined;
  const value = headers[config.countryHeader];
  const country = (Array.isArray(value) ? value[0] : value)?.trim().toUpperCase();
  return country && /^[A-Z]{2}$/.test(country) ? country : undefined;
}
