// Paging through memories for the dashboard: one namespace, newest change first, by tag or entity.
import { create } from '@bufbuild/protobuf';
import { ListMemoriesResponseSchema, type ListMemoriesRequest } from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { Filter } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import type { BrainContext } from '../context.ts';
import { toMemory } from '../memory-record.ts';
import { requireNamespace } from './validate.ts';

export async function listMemories(ctx: BrainContext, req: ListMemoriesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace(req.namespace);
  const tag = requireText('tag', req.tag.trim(), 64);
  const entity = requireText('entity', req.entity.trim(), 200);
  const filter: Filter = { organizationId, namespace, deleted: { $ne: true } };
  if (tag) filter.tags = tag;
  if (entity) filter.entities = entity;
  const page = await findPage(ctx.memories, filter, req, {
    field: 'updatedAt',
    direction: 'desc',
    scope: `memories:${organizationId}:${namespace}:${tag}:${entity}`,
  });
  return create(ListMemoriesResponseSchema, { memories: page.items.map(toMemory), nextPageToken: page.nextPageToken });
}
