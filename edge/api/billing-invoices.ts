// The organization's invoices in the Agents API, newest first, a page at a time.
import { defineApiRoute } from '../http/api-route.ts';
import { InvoiceSchema, invoiceJson } from './billing-json.ts';
import {
  errors,
  json,
  listEnvelope,
  listing,
  orgParams,
  pageArgs,
  pageQuery,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

const InvoiceListSchema = listEnvelope('invoices', InvoiceSchema, 'InvoiceList');

export function billingInvoiceRoutes({ ctx }: RouteDeps): RestRoute[] {
  return [
    defineApiRoute({
      method: 'GET',
      path: '/organizations/:organization_id/invoices',
      operationId: 'listInvoices',
      summary: 'List invoices',
      description:
        "The organization's invoices, newest first: the periods of a paid plan and prorations. With Stripe they mirror Stripe's (`hosted_url` is Stripe's page); with the manual provider an operator marks them paid.",
      tags: ['Billing'],
      params: orgParams,
      query: pageQuery,
      responses: {
        '200': json(InvoiceListSchema, 'One page of invoices.'),
        '401': errors['401'],
        '403': errors['403'],
        '422': errors['422'],
      },
      handler: async (c) => {
        const res = await listing(() =>
          ctx.clients.invoices.listInvoices({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
        );
        sendPage(c, 'invoices', res.invoices.map(invoiceJson), res.nextPageToken);
      },
    }),
  ];
}
