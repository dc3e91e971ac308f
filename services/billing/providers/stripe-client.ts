// One Stripe client per process, from the settings: Stripe's own API, or the base URL of a
// stand-in that speaks it (stripe-mock in the tests).
import Stripe from 'stripe';
import type { StripeConfig } from '../config.ts';

export function createStripeClient(config: StripeConfig): Stripe {
  const options: Stripe.StripeConfig = { maxNetworkRetries: 2, timeout: 20_000, appInfo: { name: 'mindgate' } };
  if (config.apiUrl) {
    const url = new URL(config.apiUrl);
    options.host = url.hostname;
    options.port = url.port || (url.protocol === 'https:' ? 443 : 80);
    options.protocol = url.protocol === 'https:' ? 'https' : 'http';
  }
  return new Stripe(config.secretKey, options);
}
