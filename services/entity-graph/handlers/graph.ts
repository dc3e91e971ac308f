import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AssertRelationshipResponseSchema,
  DeleteOrganizationDataResponseSchema,
  EntitySchema,
  GetEntityResponseSchema,
  RelationshipSchema,
  type AssertRelationshipRequest,
  type DeleteOrganizationDataRequest,
  type GetEntityRequest,
} from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { purgeBatch, purgeBatchOf } from '../../common/storage/records/purge.ts';

export interface EntityRecord extends RecordDoc {
  organizationId: string;
  entityId: string;
  name: string;
  kind: string;
}

export interface RelationshipRecord extends RecordDoc {
  organizationId: string;
  subjectId: string;
  predicate: string;
  objectId: string;
  memoryKeys: string[];
  /** Bumped on every change, for compare-and-set. */
  version: number;
}

export interface GraphContext {
  entities: RecordCollection<EntityRecord>;
  relationships: RecordCollection<RelationshipRecord>;
}

/** Entity identity: case-folded name with runs of whitespace collapsed. */
export function entityId(name: string): string {
  return name.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

async function ensureEntity(ctx: GraphContext, organizationId: string, name: string, kind: string) {
  const id = entityId(name);
  const key = `${organizationId}/${id}`;
  const existing = await ctx.entities.get(key);
  if (existing && (existing.kind || !kind)) return existing;
  const record: EntityRecord = { _id: key, organizationId, entityId: id, name: existing?.name ?? name.trim(), kind };
  await ctx.entities.put(record);
  return record;
}

function toRelationship(r: RelationshipRecord) {
  return create(RelationshipSchema, {
    subjectId: r.subjectId,
    predicate: r.predicate,
    objectId: r.objectId,
    memoryKeys: r.memoryKeys,
  });
}

export async function assertRelationship(ctx: GraphContext, req: AssertRelationshipRequest) {
  const organizationId = requireOrganization(req.organizationId);
  requireText('subject', req.subject, 200, { required: true });
  requireText('object', req.object, 200, { required: true });
  const predicate = requireText('predicate', req.predicate.trim(), 100, { required: true }).toLowerCase();
  const memoryKey = requireText('memory_key', req.memoryKey, 200, { required: true });
  const subject = await ensureEntity(ctx, organizationId, req.subject, req.subjectKind);
  const object = await ensureEntity(ctx, organizationId, req.object, req.objectKind);
  const id = `${organizationId}/${subject.entityId}\u0000${predicate}\u0000${object.entityId}`;
  // Retry on a concurrent assertion of the same edge so that no citing memory is lost.
  for (let attempt = 0; attempt < 5; attempt++) {
    const existing = await ctx.relationships.get(id);
    const record: RelationshipRecord = {
      _id: id,
      organizationId,
      subjectId: subject.entityId,
      predicate,
      objectId: object.entityId,
      memoryKeys: [...new Set([...(existing?.memoryKeys ?? []), memoryKey])],
      version: (existing?.version ?? 0) + 1,
    };
    const stored = await ctx.relationships.put(record, { expect: existing ? { version: existing.version } : null });
    if (stored || existing?.memoryKeys.includes(memoryKey)) {
      return create(AssertRelationshipResponseSchema, { relationship: toRelationship(record) });
    }
  }
  throw new ConnectError('relationship changed concurrently, retry', Code.Aborted);
}

export async function getEntity(ctx: GraphContext, req: GetEntityRequest) {
  const organizationId = requireOrganization(req.organizationId);
  requireText('name', req.name, 200, { required: true });
  const id = entityId(req.name);
  const entity = await ctx.entities.get(`${organizationId}/${id}`);
  if (!entity) throw new ConnectError(`entity "${req.name}" is not known`, Code.NotFound);
  const [outgoing, incoming] = await Promise.all([
    ctx.relationships.find({ organizationId, subjectId: id }, { limit: 500 }),
    ctx.relationships.find({ organizationId, objectId: id }, { limit: 500 }),
  ]);
  return create(GetEntityResponseSchema, {
    entity: create(EntitySchema, { organizationId, id, name: entity.name, kind: entity.kind }),
    outgoing: outgoing.map(toRelationship),
    incoming: incoming.map(toRelationship),
  });
}

/** Deletes the organization's entities and relationships, a batch per call (its deletion). */
export async function deleteOrganizationData(ctx: GraphContext, req: DeleteOrganizationDataRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const targets = [ctx.relationships, ctx.entities].map((c) => ({
    collection: c as RecordCollection<RecordDoc>,
    filter: { organizationId },
  }));
  const { deleted, done } = await purgeBatchOf(targets, purgeBatch(req.batchSize));
  return create(DeleteOrganizationDataResponseSchema, { deleted: BigInt(deleted), done });
}
