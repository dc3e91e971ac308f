// Deleting an organization's memory, when the organization is deleted (the edge's purge job,
// edge/api/organization-deletion/). A call deletes at most one batch of records, vectors first,
// so that each call stays short and an interrupted deletion leaves nothing a later call cannot
// find: the job calls again until `done`.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  DeleteOrganizationDataResponseSchema,
  type DeleteOrganizationDataRequest,
} from '../../../gen/mindgate/brain/v1/organization_data_pb.js';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import type { MemoryAccess } from '../access.ts';
import type { BrainContext } from '../context.ts';
import { memoryPointId } from '../memory-record.ts';
import { sequenceId } from '../search/index-registry.ts';

const DEFAULT_BATCH = 2_000;
const MAX_BATCH = 10_000;
/** Ids per deleteMany, well under SQLite's bound on query parameters. */
const CHUNK = 500;

async function deleteIds(collection: RecordCollection<RecordDoc>, ids: string[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < ids.length; i += CHUNK) deleted += await collection.deleteMany({ _id: { $in: ids.slice(i, i + CHUNK) } });
  return deleted;
}

export async function deleteOrganizationData(ctx: BrainContext, req: DeleteOrganizationDataRequest, access: MemoryAccess) {
  const organizationId = requireOrganization(req.organizationId);
  if (access.restricted || access.readOnly)
    throw new ConnectError('a narrowed caller may not delete an organization', Code.PermissionDenied);
  if (req.batchSize > MAX_BATCH) invalid('batch_size', `must be at most ${MAX_BATCH}, got ${req.batchSize}`);
  let room = req.batchSize || DEFAULT_BATCH;
  let deleted = 0;
  // Memories (tombstones too): their vectors first, so a record is never gone while its vector stays.
  const memories = await ctx.memories.find({ organizationId }, { limit: room });
  if (memories.length) {
    await ctx.stores.vectors.delete(
      organizationId,
      memories.map((m) => memoryPointId(m.namespace, m.key)),
    );
    deleted += await deleteIds(
      ctx.memories as RecordCollection<RecordDoc>,
      memories.map((m) => m._id),
    );
    room -= memories.length;
  }
  for (const items of [ctx.contradictions, ctx.questions] as RecordCollection<RecordDoc>[]) {
    if (room <= 0) break;
    const found = await items.find({ organizationId }, { limit: room });
    deleted += await deleteIds(
      items,
      found.map((d) => d._id),
    );
    room -= found.length;
  }
  const done = room > 0;
  if (done) {
    // Vectors no record points at (a write whose record never landed) go with the organization.
    await ctx.stores.vectors.deleteOrganization(organizationId);
    const sequences = ctx.stores.records.collection('memory_sequences');
    for (const namespace of ['knowledge', 'episodes'] as const) await sequences.delete(sequenceId(organizationId, namespace));
    ctx.indexes.forget(organizationId);
  }
  return create(DeleteOrganizationDataResponseSchema, { deleted: BigInt(deleted), done });
}
