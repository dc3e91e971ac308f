// Deleting an organization's graph (the purge job of its deletion, edge/api/organization-deletion):
// relationships and what cites them first, then names and entities, and the write sequence last, a
// batch per call. A call repeated after a crash finds what is left.
import { create } from '@bufbuild/protobuf';
import {
  DeleteOrganizationDataResponseSchema,
  type DeleteOrganizationDataRequest,
} from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { requireOrganization } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { purgeBatch, purgeBatchOf } from '../../common/storage/records/purge.ts';
import type { GraphContext } from '../context.ts';

export async function deleteOrganizationData(ctx: GraphContext, req: DeleteOrganizationDataRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const byOrganization = [ctx.assertions, ctx.relationships, ctx.names, ctx.entities].map((c) => ({
    collection: c as unknown as RecordCollection<RecordDoc>,
    filter: { organizationId },
  }));
  const sequence = { collection: ctx.sequences as unknown as RecordCollection<RecordDoc>, filter: { _id: organizationId } };
  const { deleted, done } = await purgeBatchOf([...byOrganization, sequence], purgeBatch(req.batchSize));
  ctx.graphs.drop(organizationId);
  return create(DeleteOrganizationDataResponseSchema, { deleted: BigInt(deleted), done });
}
