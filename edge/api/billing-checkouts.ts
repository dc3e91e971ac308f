// Checkouts in the Agents API: an owner opens one for a paid plan and sends the customer to its
// hosted payment page (Stripe's, or the platform's own at {web_url}/checkout/<id> with the manual
// provider); reading it says whether it completed. The billing region comes from the billing
// address country given, else the request's country (BILLING_COUNTRY_HEADER).
import * as z from 'zod';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { RequestValidationError } from '../http/validation.ts';
import { requestCountry } from './billing-config.ts';
import { CheckoutSchema, checkoutJson, INTERVALS } from './billing-json.ts';
import { bodyFields } from './service-fields.ts';
import { INTERVAL_ENUM, PLAN_ENUM } from './billing-subscription.ts';
import { errors, json, notFoundAs404, OrganizationId, readJson, type RestRoute, type RouteDeps } from './rest-route.ts';

const Url = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2_000);

export const CreateCheckoutSchema = z
  .object({
    plan: z.enum(['professional'], { error: 'must be a paid plan: professional' }),
    interval: z.enum(INTERVALS, { error: 'must be month or year' }),
    billing_address: z
      .object({
        country: z
          .string()
          .regex(/^[A-Za-z]{2}$/, { error: 'must be an ISO 3166-1 alpha-2 country code' })
          .meta({ description: 'Decides the region: EUR for the EU, the EEA, the United Kingdom and Switzerland, USD elsewhere.' }),
      })
      .strict()
      .optional()
      .meta({ description: "Left out: the request's country (a trusted CDN header) is used; without one, 422." }),
    success_url: Url.optional().meta({ description: 'Where the customer returns after paying.' }),
    cancel_url: Url.optional().meta({ description: 'Where the customer returns after giving up.' }),
  })
  .strict()
  .meta({ title: 'CreateCheckout' });

const checkoutParams = z.object({
  organization_id: OrganizationId,
  checkout_id: z.string().regex(/^chk_[A-Za-z0-9]{24}$/, { error: 'must be a checkout id (chk_...)' }),
});

const countryError = (msg: string) =>
  new RequestValidationError([{ type: 'value_error', loc: ['body', 'billing_address', 'country'], msg }]);

function createCheckoutRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/checkouts',
      operationId: 'createCheckout',
      summary: 'Start a checkout',
      description:
        "Opens the hosted payment page for a paid plan, priced in the region's currency, with the rest of the organization's trial (or the plan's trial, for an organization that never had one) before the first payment. Completing it activates the subscription. 409 `subscription-state` when a paid subscription is already active.",
      tags: ['Billing'],
      params: z.object({ organization_id: OrganizationId }),
      responses: {
        '201': json(CheckoutSchema, 'The checkout; send the customer to `url`.'),
        '401': errors['401'],
        '403': errors['403'],
        '422': errors['422'],
      },
      handler: async (c) => {
        const body = await readJson(c, CreateCheckoutSchema, limit);
        const hint = requestCountry(ctx.config.billingEdge, c.req.headers);
        if (!body.billing_address && !hint) throw countryError('is required: the request does not say which country it comes from');
        const { checkout } = await bodyFields({ billing_country: ['billing_address', 'country'] }, () =>
          ctx.clients.checkouts.createCheckout({
            organizationId: c.input.params.organization_id,
            plan: PLAN_ENUM[body.plan],
            interval: INTERVAL_ENUM[body.interval],
            billingCountry: body.billing_address?.country ?? '',
            countryHint: hint ?? '',
            successUrl: body.success_url ?? '',
            cancelUrl: body.cancel_url ?? '',
            pageBaseUrl: `${ctx.config.publicUrls.web}/checkout`,
          }),
        );
        const location = `/organizations/${checkout!.organizationId}/checkouts/${checkout!.checkoutId}`;
        sendJson(c.res, 201, checkoutJson(checkout!), { location });
      },
    }),
    body: CreateCheckoutSchema,
    creates: true,
  };
}

function getCheckoutRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/checkouts/:checkout_id',
    operationId: 'getCheckout',
    summary: 'Get a checkout',
    description: '`status` is `open` until the customer completes the hosted page (then `complete`) or it expires after a day.',
    tags: ['Billing'],
    params: checkoutParams,
    responses: {
      '200': json(CheckoutSchema, 'The checkout.'),
      '401': errors['401'],
      '403': errors['403'],
      '404': 'NotFound',
      '422': errors['422'],
    },
    handler: async (c) => {
      const { checkout } = await notFoundAs404(() =>
        ctx.clients.checkouts.getCheckout({ organizationId: c.input.params.organization_id, checkoutId: c.input.params.checkout_id }),
      );
      sendJson(c.res, 200, checkoutJson(checkout!));
    },
  });
}

export function billingCheckoutRoutes(deps: RouteDeps): RestRoute[] {
  return [createCheckoutRoute(deps), getCheckoutRoute(deps)];
}
