// Invoices: an organization's, newest first; and the manual provider's operator step, recording
// that an open invoice was paid (grpcurl, docs/billing.md).
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  ListInvoicesResponseSchema,
  MarkInvoicePaidResponseSchema,
  type ListInvoicesRequest,
  type MarkInvoicePaidRequest,
} from '../../../gen/mindgate/billing/v1/invoices_pb.js';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { requireOrganization } from '../../common/rpc/validate.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import type { BillingContext } from '../context.ts';
import { toInvoice } from '../invoice-record.ts';
import { currentSubscription } from '../subscription-store.ts';

export async function listInvoices(ctx: BillingContext, req: ListInvoicesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  // Reading the subscription first issues the invoices of periods that began since it was last read.
  await currentSubscription(ctx, organizationId);
  const page = await findPage(ctx.invoices, { organizationId }, req, {
    field: 'createdAt',
    direction: 'desc',
    scope: `invoices:${organizationId}`,
  });
  return create(ListInvoicesResponseSchema, { invoices: page.items.map(toInvoice), nextPageToken: page.nextPageToken });
}

export async function markInvoicePaid(ctx: BillingContext, req: MarkInvoicePaidRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const invoice = /^[A-Za-z0-9_]{1,100}$/.test(req.invoiceId) ? await ctx.invoices.get(req.invoiceId) : undefined;
  if (!invoice || invoice.organizationId !== organizationId)
    throw new ConnectError(`no invoice ${req.invoiceId.slice(0, 100)}`, Code.NotFound);
  if (invoice.provider !== 'manual')
    throw failure('only invoices of the manual provider are marked paid here', Code.FailedPrecondition, REASONS.subscriptionState);
  if (invoice.status === 'void') throw failure('the invoice is void', Code.FailedPrecondition, REASONS.subscriptionState);
  if (invoice.status === 'paid') return create(MarkInvoicePaidResponseSchema, { invoice: toInvoice(invoice) });
  const paid = { ...invoice, status: 'paid' as const, amountPaid: invoice.amountDue, paidAt: ctx.now() };
  if (!(await ctx.invoices.put(paid, { expect: { status: 'open' } }))) return markInvoicePaid(ctx, req);
  return create(MarkInvoicePaidResponseSchema, { invoice: toInvoice(paid) });
}
