// The payment provider's webhook endpoint, POST {api_url}/billing/webhooks/stripe: no credentials,
// the signature is the authentication. The raw body goes to the billing service byte for byte
// (the signature covers it); a signature that does not verify is a 400 (Stripe then retries, and
// shows the failure in its dashboard), a verified event a 200, applied once however often it comes.
import { Code, ConnectError } from '@connectrpc/connect';
import * as z from 'zod';
import type { AppContext } from '../context.ts';
import { defineApiRoute } from '../http/api-route.ts';
import { readBody, sendJson, sendProblem } from '../http/respond.ts';
import { problemType } from './problems.ts';
import { json, NotFoundError, type RestRoute } from './rest-route.ts';

const ReceiptSchema = z
  .object({ received: z.literal(true), event_id: z.string(), event_type: z.string(), applied: z.boolean() })
  .meta({ title: 'WebhookReceipt' });

export function billingWebhookRoutes(ctx: AppContext): RestRoute[] {
  return [
    defineApiRoute({
      method: 'POST',
      path: '/billing/webhooks/:provider',
      operationId: 'receiveBillingWebhook',
      summary: "The payment provider's webhook",
      description:
        "Where Stripe sends its events (configure the endpoint in Stripe's dashboard with its signing secret in `STRIPE_WEBHOOK_SECRET`). Authenticated by the `Stripe-Signature` header over the raw body, Stripe's documented scheme; 400 when it does not verify; 404 when the deployment has no signing secret for the provider. Redelivered events change nothing.",
      tags: ['Billing'],
      params: z.object({ provider: z.enum(['stripe'], { error: 'must be stripe' }) }),
      responses: {
        '200': json(ReceiptSchema, 'The event was verified (and applied, when the platform uses it).'),
        '400': { description: 'The signature does not verify, or the body is not an event (a problem document).' },
        '404': 'NotFound',
        '422': 'ValidationFailed',
      },
      handler: async (c) => {
        const payload = await readBody(c.req, ctx.config.maxBodyBytes);
        const signature = c.req.headers['stripe-signature'];
        try {
          const res = await ctx.clients.checkouts.handleProviderWebhook({
            provider: c.input.params.provider,
            payload,
            signature: typeof signature === 'string' ? signature : '',
          });
          sendJson(c.res, 200, { received: true, event_id: res.eventId, event_type: res.eventType, applied: res.applied });
        } catch (err) {
          // The provider's webhooks are not configured on this deployment (no signing secret): the
          // endpoint is not there for it, which a provider shows as a misconfigured endpoint.
          if (err instanceof ConnectError && err.code === Code.FailedPrecondition) throw new NotFoundError(err.rawMessage);
          if (!(err instanceof ConnectError) || (err.code !== Code.Unauthenticated && err.code !== Code.InvalidArgument)) throw err;
          sendProblem(c.res, { type: problemType(400), title: 'Bad Request', status: 400, detail: err.rawMessage, instance: c.path });
        }
      },
    }),
  ];
}
