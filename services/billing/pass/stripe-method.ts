// The Stripe payment method of the brain-pass (BRAIN_PASS_METHODS=stripe): the payload carries a
// Stripe card token or source ({"source": "tok_..."}) that the agent created with the platform's
// publishable key; settling charges exactly the challenge's amount in its currency, with the
// challenge id as Stripe's idempotency key (a retry never charges twice), and accepts the charge
// only when Stripe says it succeeded, was paid, and is for that amount and currency.
import type Stripe from 'stripe';
import { PaymentDeclinedError, type PassMethod } from './methods.ts';

export function createStripePassMethod(stripe: Stripe): PassMethod {
  return {
    name: 'stripe',
    async settle(payload, charge) {
      const source = typeof payload === 'object' && payload !== null ? (payload as { source?: unknown }).source : undefined;
      if (typeof source !== 'string' || !/^(tok|src|card|pm)_[A-Za-z0-9_]{1,200}$/.test(source)) {
        throw new PaymentDeclinedError('the stripe method needs {"source": "tok_..."} (a Stripe card token or source) in the payload');
      }
      let result: Stripe.Charge;
      try {
        result = await stripe.charges.create(
          {
            amount: charge.amount,
            currency: charge.currency.toLowerCase(),
            source,
            description: charge.description,
            metadata: { challenge_id: charge.challengeId, recipient: charge.recipient },
          },
          { idempotencyKey: `brain-pass-${charge.challengeId}` },
        );
      } catch (err) {
        const e = err as { type?: string; message?: string };
        if (e.type === 'StripeCardError' || e.type === 'StripeInvalidRequestError') {
          throw new PaymentDeclinedError(`Stripe refused the payment: ${e.message ?? 'declined'}`);
        }
        throw err;
      }
      const settled =
        result.status === 'succeeded' &&
        result.paid &&
        result.amount === charge.amount &&
        result.currency === charge.currency.toLowerCase();
      if (!settled) throw new PaymentDeclinedError(`Stripe did not settle the payment (charge ${result.id} is ${result.status})`);
      return result.id;
    },
  };
}
