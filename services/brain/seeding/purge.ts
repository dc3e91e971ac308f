// What seeding keeps of an organization, for the Brain's DeleteOrganizationData. Runs come first:
// a worker whose run is gone fails its next lease renewal and stops, so no seeded memory is
// written after the organization's memories are deleted. Uploads and progress sequences carry no
// organization field; their ids start with `{organization id}/` (records.ts, runKey).
import type { Filter, RecordCollection, RecordDoc, RecordStore } from '../../common/storage/records/interface.ts';

export function seedingPurgeTargets(
  records: RecordStore,
  organizationId: string,
): { collection: RecordCollection<RecordDoc>; filter: Filter }[] {
  // '0' follows '/' in code-point order: the range holds exactly the ids under `{organizationId}/`.
  const underOrganization: Filter = { _id: { $gte: `${organizationId}/`, $lt: `${organizationId}0` } };
  return [
    { collection: records.collection('seeding_runs'), filter: { organizationId } },
    { collection: records.collection('seeding_items'), filter: { organizationId } },
    { collection: records.collection('seeding_uploads'), filter: underOrganization },
    { collection: records.collection('seeding_sequences'), filter: underOrganization },
  ];
}
