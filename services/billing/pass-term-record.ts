// An organization's brain-pass term as stored, keyed by the organization: until when its passes
// run. A paid pass runs `brain_pass.hours` from the later of its payment and this end, so renewing
// early adds the pass's hours to the time left. The settlements applied last are kept with the end
// each produced, so completing a settlement again (a retry after a crash) finds its end instead
// of extending twice; each change is a compare-and-set on `version`.
import type { RecordDoc } from '../common/storage/records/interface.ts';

export interface PassTermRecord extends RecordDoc {
  until: number;
  /** The last settlements applied (oldest first), each with the end it gave. */
  applied: { settlementId: string; until: number }[];
  version: number;
}

/** How many applied settlements a term remembers: more than replicas could retry at once. */
export const APPLIED_KEPT = 32;
