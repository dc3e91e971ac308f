// Stripe as the payment provider (BILLING_PROVIDER=stripe), through the official `stripe` package:
// a checkout is a Stripe Checkout Session in subscription mode (its hosted page collects the card
// and the billing address); plan changes and cancellations update the Stripe subscription, and
// Stripe reports back through signed webhooks (handlers/stripe-events.ts). Prices come from the
// catalogue as inline price_data on one Stripe product per plan, so nothing needs setting up in
// Stripe's dashboard beyond the webhook endpoint.
import type Stripe from 'stripe';
import type { PlanKey } from '../catalogue.ts';
import type { PaymentProvider } from './interface.ts';

/** Stripe needs a trial to end at least two days out; a shorter rest of a trial is not carried over. */
const MIN_TRIAL_MS = 48 * 3_600_000 + 60_000;

export function createStripeProvider(stripe: Stripe, now: () => number): PaymentProvider {
  const products = new Map<PlanKey, Promise<string>>();

  /** The Stripe product of a plan, created once with a fixed id. */
  function productOf(plan: PlanKey, name: string): Promise<string> {
    let product = products.get(plan);
    if (!product) {
      const id = `mindgate_${plan}`;
      product = stripe.products.retrieve(id).then(
        (p) => p.id,
        async (err: unknown) => {
          if ((err as { statusCode?: number }).statusCode !== 404) throw err;
          return (await stripe.products.create({ id, name })).id;
        },
      );
      product.catch(() => products.delete(plan));
      products.set(plan, product);
    }
    return product;
  }

  return {
    name: 'stripe',
    async openCheckout(input) {
      const metadata = { organization_id: input.organizationId, checkout_id: input.checkoutId, plan: input.plan, interval: input.interval };
      const customerId =
        input.customerId ??
        (await stripe.customers.create({ metadata: { organization_id: input.organizationId }, address: { country: input.country } })).id;
      const trialEnd =
        input.trialEndsAt !== undefined && input.trialEndsAt - now() >= MIN_TRIAL_MS ? Math.floor(input.trialEndsAt / 1000) : undefined;
      const session = await stripe.checkout.sessions.create(
        {
          mode: 'subscription',
          customer: customerId,
          client_reference_id: input.organizationId,
          billing_address_collection: 'required',
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: input.currency.toLowerCase(),
                unit_amount: input.unitAmount,
                recurring: { interval: input.interval },
                product: await productOf(input.plan, input.planName),
              },
            },
          ],
          subscription_data: { metadata, ...(trialEnd ? { trial_end: trialEnd } : {}) },
          metadata,
          success_url: input.successUrl,
          cancel_url: input.cancelUrl,
        },
        { idempotencyKey: `checkout-${input.checkoutId}` },
      );
      if (!session.url) throw new Error('Stripe returned a checkout session without a URL');
      return { url: session.url, reference: session.id, customerId };
    },
    async changePlan(subscription, change) {
      const id = subscription.providerSubscriptionId;
      if (!id) throw new Error(`subscription of ${subscription._id} has no Stripe subscription`);
      const current = await stripe.subscriptions.retrieve(id);
      const item = current.items.data[0];
      await stripe.subscriptions.update(id, {
        // Stripe's proration: a credit for the unused time and a charge for the rest of the period
        // at the new price, both on the next invoice (docs/billing.md).
        proration_behavior: 'create_prorations',
        items: [
          {
            ...(item ? { id: item.id } : {}),
            price_data: {
              currency: change.currency.toLowerCase(),
              unit_amount: change.unitAmount,
              recurring: { interval: change.interval },
              product: await productOf(change.plan, change.planName),
            },
          },
        ],
        metadata: { organization_id: subscription._id, plan: change.plan, interval: change.interval },
      });
      return undefined;
    },
    async setCancelAtPeriodEnd(subscription, cancel) {
      const id = subscription.providerSubscriptionId;
      if (!id) throw new Error(`subscription of ${subscription._id} has no Stripe subscription`);
      await stripe.subscriptions.update(id, { cancel_at_period_end: cancel });
    },
  };
}
