// Deleting an organization's memory, when the organization is deleted (the edge's purge job,
// edge/api/organization-deletion/). A call deletes at most one batch of records, vectors first,
// so that each call stays short and an interrupted deletion leaves nothing a later call cannot
// find: the job calls again until `done`. Earlier versions of memories and seeding runs go with the rest.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  DeleteOrganizationDataResponseSchema,
  type DeleteOrganizationDataRequest,
} from '../../../gen/mindgate/brain/v1/organization_data_pb.js';
import { requireOrganization } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { deleteIds, purgeBatch, purgeBatchOf } from '../../common/storage/records/purge.ts';
import type { MemoryAccess } from '../access.ts';
import type { BrainContext } from '../context.ts';
import { memoryPointId } from '../memory-record.ts';
import { sequenceId } from '../search/index-registry.ts';
import { seedingPurgeTargets } from '../seeding/purge.ts';

export async function deleteOrganizationData(ctx: BrainContext, req: DeleteOrganizationDataRequest, access: MemoryAccess) {
  const organizationId = requireOrganization(req.organizationId);
  if (access.restricted || access.readOnly)
    throw new ConnectError('a narrowed caller may not delete an organization', Code.PermissionDenied);
  const batch = purgeBatch(req.batchSize);
  // Seeding first (seeding/purge.ts): its workers stop before the memories go.
  const seeding = await purgeBatchOf(seedingPurgeTargets(ctx.stores.records, organizationId), batch);
  if (!seeding.done) return create(DeleteOrganizationDataResponseSchema, { deleted: BigInt(seeding.deleted), done: false });
  // Memories (tombstones too): their vectors first, so a record is never gone while its vector stays.
  const memories = await ctx.memories.find({ organizationId }, { limit: batch });
  if (memories.length) {
    await ctx.stores.vectors.delete(
      organizationId,
      memories.map((m) => memoryPointId(m.namespace, m.key)),
    );
  }
  let deleted = seeding.deleted;
  deleted += await deleteIds(
    ctx.memories as RecordCollection<RecordDoc>,
    memories.map((m) => m._id),
  );
  let done = false;
  if (memories.length < batch) {
    const items = [ctx.contradictions, ctx.questions, ctx.versions].map((c) => ({
      collection: c as RecordCollection<RecordDoc>,
      filter: { organizationId },
    }));
    const rest = await purgeBatchOf(items, batch - memories.length);
    deleted += rest.deleted;
    done = rest.done;
  }
  if (done) {
    // Vectors no record points at (a write whose record never landed) go with the organization.
    await ctx.stores.vectors.deleteOrganization(organizationId);
    const sequences = ctx.stores.records.collection('memory_sequences');
    for (const namespace of ['knowledge', 'episodes'] as const) await sequences.delete(sequenceId(organizationId, namespace));
    ctx.indexes.forget(organizationId);
  }
  return create(DeleteOrganizationDataResponseSchema, { deleted: BigInt(deleted), done });
}
