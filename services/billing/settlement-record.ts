// A brain-pass settlement as stored, keyed by the challenge id it pays: inserting it is what makes
// a challenge single-use across replicas. It moves settling → paid → complete (or failed), each
// step a compare-and-set on `version`; `leaseUntil` bounds how long one request may hold it, so a
// replica that dies mid-way leaves it to a retry instead of to nobody.
import type { RecordDoc } from '../common/storage/records/interface.ts';

export interface SettlementRecord extends RecordDoc {
  state: 'settling' | 'paid' | 'complete' | 'failed';
  method: string;
  amount: number;
  currency: string;
  recipient: string;
  reference?: string;
  settledAt?: number;
  /** The organization the pass was provisioned for (once complete). */
  organizationId?: string;
  /** The existing organization the challenge was issued for; absent: a pass for a new one. */
  boundOrganizationId?: string;
  passExpiresAt?: number;
  leaseUntil: number;
  version: number;
  createdAt: number;
}
