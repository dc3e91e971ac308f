// An invoice as stored: issued by the manual provider (a period, a proration) or copied from the
// payment provider's webhooks (Stripe's invoices), and listed newest first.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { InvoiceLineSchema, InvoiceSchema, InvoiceStatus } from '../../gen/mindgate/billing/v1/invoices_pb.js';
import type { RecordDoc } from '../common/storage/records/interface.ts';
import type { Currency } from './catalogue.ts';
import type { ProviderName } from './config.ts';

export interface InvoiceLineRecord {
  description: string;
  /** Minor units; negative for a credit. */
  amount: number;
}

export interface InvoiceRecord extends RecordDoc {
  organizationId: string;
  status: 'open' | 'paid' | 'void';
  currency: Currency;
  amountDue: number;
  amountPaid: number;
  entity: string;
  provider: ProviderName;
  lines: InvoiceLineRecord[];
  periodStart: number;
  periodEnd: number;
  createdAt: number;
  dueAt?: number;
  paidAt?: number;
  hostedUrl?: string;
}

const STATUS = { open: InvoiceStatus.OPEN, paid: InvoiceStatus.PAID, void: InvoiceStatus.VOID } as const;
const ts = (ms: number | undefined) => (ms === undefined ? undefined : timestampFromMs(ms));

export function toInvoice(r: InvoiceRecord) {
  return create(InvoiceSchema, {
    invoiceId: r._id,
    organizationId: r.organizationId,
    status: STATUS[r.status],
    currency: r.currency,
    amountDue: BigInt(r.amountDue),
    amountPaid: BigInt(r.amountPaid),
    entity: r.entity,
    provider: r.provider,
    lines: r.lines.map((l) => create(InvoiceLineSchema, { description: l.description, amount: BigInt(l.amount) })),
    periodStart: ts(r.periodStart),
    periodEnd: ts(r.periodEnd),
    createTime: ts(r.createdAt),
    dueTime: ts(r.dueAt),
    paidTime: ts(r.paidAt),
    hostedUrl: r.hostedUrl ?? '',
  });
}
