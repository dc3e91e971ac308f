// The payment provider's webhooks, as the edge received them (POST {api_url}/billing/webhooks/stripe):
// the signature is checked here, against the raw body, with Stripe's documented scheme
// (Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body"> under the endpoint's
// signing secret, five minutes' tolerance) through the official package's constructEvent; then the
// event is applied once.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type Stripe from 'stripe';
import { HandleProviderWebhookResponseSchema, type HandleProviderWebhookRequest } from '../../../gen/mindgate/billing/v1/checkout_pb.js';
import { invalid } from '../../common/rpc/validate.ts';
import type { BillingContext } from '../context.ts';
import { applyStripeEvent } from './stripe-events.ts';

export async function handleProviderWebhook(ctx: BillingContext, req: HandleProviderWebhookRequest) {
  if (req.provider !== 'stripe') invalid('provider', 'must be stripe');
  const secret = ctx.config.stripe?.webhookSecret;
  if (!ctx.stripe || !secret) throw new ConnectError('Stripe webhooks are not configured (STRIPE_WEBHOOK_SECRET)', Code.FailedPrecondition);
  let event: Stripe.Event;
  try {
    event = ctx.stripe.webhooks.constructEvent(Buffer.from(req.payload), req.signature, secret);
  } catch (err) {
    if ((err as { type?: string }).type === 'StripeSignatureVerificationError') {
      throw new ConnectError(`the Stripe-Signature does not verify: ${(err as Error).message}`, Code.Unauthenticated);
    }
    invalid('payload', 'is not a Stripe event');
  }
  const response = { eventId: event.id, eventType: event.type };
  if (await ctx.events.get(event.id)) return create(HandleProviderWebhookResponseSchema, { ...response, applied: false });
  const applied = await applyStripeEvent(ctx, event);
  // Recorded after it applied: a failure in between makes Stripe redeliver, and applying is idempotent.
  await ctx.events.put({ _id: event.id, type: event.type, appliedAt: ctx.now(), expiresAt: ctx.now() + 90 * 86_400_000 });
  return create(HandleProviderWebhookResponseSchema, { ...response, applied });
}
