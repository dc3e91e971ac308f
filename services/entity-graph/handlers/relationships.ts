// Listing relationships, oldest first, filtered by entity, predicate or citing memory.
import { create } from '@bufbuild/protobuf';
import { ListRelationshipsResponseSchema, type ListRelationshipsRequest } from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import type { Filter } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import type { GraphContext } from '../context.ts';
import { toRelationship } from '../convert.ts';
import { assertionDocId, ENTITY_ID } from '../records.ts';
import { requireMemoryKey, requireNamespace, requirePredicate } from './validate.ts';

export async function listRelationships(ctx: GraphContext, req: ListRelationshipsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const filter: Filter = { organizationId, deleted: { $ne: true } };
  if (req.subjectId) filter.subjectId = ENTITY_ID.test(req.subjectId) ? req.subjectId : invalid('subject_id', 'must be an entity id');
  if (req.objectId) filter.objectId = ENTITY_ID.test(req.objectId) ? req.objectId : invalid('object_id', 'must be an entity id');
  if (req.predicate) filter.predicate = requirePredicate('predicate', req.predicate);
  let memory = '';
  if (req.memoryKey || req.memoryNamespace) {
    const namespace = requireNamespace('memory_namespace', req.memoryNamespace);
    const key = requireMemoryKey('memory_key', req.memoryKey);
    const assertion = await ctx.assertions.get(assertionDocId(organizationId, namespace, key));
    filter.relationshipId = { $in: (assertion?.items ?? []).map((i) => i.relationshipId) };
    memory = `${namespace}/${key}`;
  }
  const scope = `relationships:${organizationId}:${req.subjectId}:${req.objectId}:${req.predicate}:${memory}`;
  const page = await findPage(ctx.relationships, filter, req, { field: 'createdAt', scope });
  const graph = await ctx.graphs.fresh(organizationId);
  return create(ListRelationshipsResponseSchema, {
    relationships: page.items.map((r) => toRelationship(r, graph)),
    nextPageToken: page.nextPageToken,
  });
}
