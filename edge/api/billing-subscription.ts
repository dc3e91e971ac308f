// Billing operations of the Agents API on plans and the subscription: the plans with prices in the
// caller's currency, the organization's subscription (with its ETag), changing its plan, cancelling
// at the period's end and resuming. Only owners change anything (access.ts). The billing service
// holds every record; these routes translate.
import * as z from 'zod';
import { BillingInterval, Plan } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { RequestValidationError } from '../http/validation.ts';
import { callerOf } from './access.ts';
import { requestCountry } from './billing-config.ts';
import { INTERVALS, PLAN_KEYS, PlanSchema, planJson, SubscriptionSchema, subscriptionJson } from './billing-json.ts';
import { bodyFields } from './service-fields.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import { errors, json, listEnvelope, orgParams, pageQuery, readJson, type RestRoute, type RouteDeps } from './rest-route.ts';

export const PLAN_ENUM = { starter: Plan.STARTER, professional: Plan.PROFESSIONAL } as const;
export const INTERVAL_ENUM = { month: BillingInterval.MONTH, year: BillingInterval.YEAR } as const;

const PlanListSchema = listEnvelope('plans', PlanSchema, 'PlanList')
  .extend({
    catalogue_version: z.string(),
    currency: z.enum(['EUR', 'USD']),
  })
  .meta({ title: 'PlanList' });

const plansQuery = pageQuery.extend({
  currency: z.enum(['EUR', 'USD'], { error: 'must be EUR or USD' }).optional().meta({ description: 'Prices in this currency.' }),
  country: z
    .string()
    .regex(/^[A-Za-z]{2}$/, { error: 'must be an ISO 3166-1 alpha-2 country code' })
    .optional()
    .meta({ description: 'Prices in the currency of this billing country.' }),
});

export const ChangePlanSchema = z
  .object({
    plan: z.enum(PLAN_KEYS, { error: 'must be starter or professional' }),
    interval: z.enum(INTERVALS, { error: 'must be month or year' }).optional().meta({ description: 'Required for a paid plan.' }),
  })
  .strict()
  .meta({ title: 'ChangePlan' });

/**
 * The currency a caller sees prices in: the query's, the query country's, the one the organization
 * is billed in, the request's country (BILLING_COUNTRY_HEADER), else USD.
 */
async function callerCurrency(deps: RouteDeps, c: Parameters<RestRoute['handler']>[0]): Promise<string> {
  const { billing } = deps.ctx.clients;
  const query = c.input.query as z.output<typeof plansQuery>;
  if (query.currency) return query.currency;
  if (query.country) {
    const region = await billing.resolveRegion({ country: query.country }).catch(() => {
      throw new RequestValidationError([{ type: 'value_error', loc: ['query', 'country'], msg: 'is not a country' }]);
    });
    return region.currency;
  }
  const { subscription } = await billing.getEntitlements({ organizationId: callerOf(c).organizationId });
  if (subscription?.currency) return subscription.currency;
  const country = requestCountry(deps.ctx.config.billingEdge, c.req.headers);
  if (!country) return 'USD';
  return (await billing.resolveRegion({ country }).catch(() => ({ currency: 'USD' }))).currency;
}

function listPlansRoute(deps: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/billing/plans',
    operationId: 'listPlans',
    summary: 'List the plans',
    description:
      "The plans of the catalogue, with prices per month and per year in the caller's currency: `currency` if given, else the currency of `country`, else the one the organization is billed in, else the request's country's (EUR for the EU, the EEA, the United Kingdom and Switzerland), else USD.",
    tags: ['Billing'],
    query: plansQuery,
    responses: { '200': json(PlanListSchema, 'The plans.'), '401': errors['401'], '422': errors['422'] },
    handler: async (c) => {
      if (c.input.query.page_token !== '') {
        throw new RequestValidationError([{ type: 'value_error', loc: ['query', 'page_token'], msg: 'is not a token of this listing' }]);
      }
      const res = await deps.ctx.clients.billing.listPlans({ currency: await callerCurrency(deps, c) });
      sendJson(c.res, 200, {
        plans: res.plans.slice(0, c.input.query.page_size).map(planJson),
        next_page_token: null,
        catalogue_version: res.catalogueVersion,
        currency: res.currency,
      });
    },
  });
}

async function sendSubscription(deps: RouteDeps, c: Parameters<RestRoute['handler']>[0], status = 200): Promise<void> {
  const res = await deps.ctx.clients.billing.getEntitlements({ organizationId: c.input.params.organization_id });
  sendJson(c.res, status, subscriptionJson(res), { etag: quoteEtag(res.subscription!.etag) });
}

const subscriptionResponses = {
  '200': { ...json(SubscriptionSchema, 'The subscription, as it stands now.'), headers: ETAG_HEADER },
  '401': errors['401'],
  '403': errors['403'],
  '422': errors['422'],
};

function getSubscriptionRoute(deps: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/subscription',
    operationId: 'getSubscription',
    summary: "Get the organization's subscription",
    description:
      'The plan in force and its entitlements, the trial or the period paid for, the region and the provider. ETag for If-Match.',
    tags: ['Billing'],
    params: orgParams,
    responses: subscriptionResponses,
    handler: (c) => sendSubscription(deps, c),
  });
}

function changeSubscriptionRoute(deps: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/organizations/:organization_id/subscription',
      operationId: 'changeSubscription',
      summary: 'Change the plan',
      description:
        'Moves a paid subscription to another plan or interval, prorated (docs/billing.md: a credit for the unused part of the period, the new price from now); moving to Starter cancels at the end of the period paid for. Subscribing to a paid plan needs a checkout first (409 `subscription-state`). If-Match applies the change only to that version (412).',
      tags: ['Billing'],
      params: orgParams,
      responses: { ...subscriptionResponses, '409': 'Conflict', '412': 'PreconditionFailed' },
      handler: async (c) => {
        const etag = ifMatch(c.req.headers['if-match']);
        const body = await readJson(c, ChangePlanSchema, deps.limit);
        await bodyFields({ interval: ['interval'], plan: ['plan'] }, () =>
          deps.ctx.clients.billing.changePlan({
            organizationId: c.input.params.organization_id,
            plan: PLAN_ENUM[body.plan],
            interval: body.interval ? INTERVAL_ENUM[body.interval] : BillingInterval.UNSPECIFIED,
            etag,
          }),
        );
        await sendSubscription(deps, c);
      },
    }),
    body: ChangePlanSchema,
  };
}

function cancelOrResumeRoute(deps: RouteDeps, action: 'cancel' | 'resume'): RestRoute {
  const cancel = action === 'cancel';
  return defineApiRoute({
    method: 'POST',
    path: `/organizations/:organization_id/subscription/${action}`,
    operationId: cancel ? 'cancelSubscription' : 'resumeSubscription',
    summary: cancel ? 'Cancel at the end of the period' : 'Resume a cancelled subscription',
    description: cancel
      ? 'The paid plan stays until the end of the period paid for (or of the trial), then the organization is on Starter; nothing is refunded. 409 `subscription-state` when there is no paid subscription. If-Match applies it only to that version.'
      : 'Undoes a cancellation before the period ends. 409 `subscription-state` when the subscription is not being cancelled. If-Match applies it only to that version.',
    tags: ['Billing'],
    params: orgParams,
    responses: { ...subscriptionResponses, '409': 'Conflict', '412': 'PreconditionFailed' },
    handler: async (c) => {
      const request = { organizationId: c.input.params.organization_id, etag: ifMatch(c.req.headers['if-match']) };
      if (cancel) await deps.ctx.clients.billing.cancelSubscription(request);
      else await deps.ctx.clients.billing.resumeSubscription(request);
      await sendSubscription(deps, c);
    },
  });
}

export function billingSubscriptionRoutes(deps: RouteDeps): RestRoute[] {
  return [
    listPlansRoute(deps),
    getSubscriptionRoute(deps),
    changeSubscriptionRoute(deps),
    cancelOrResumeRoute(deps, 'cancel'),
    cancelOrResumeRoute(deps, 'resume'),
  ];
}
