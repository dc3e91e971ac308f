// Relationships asserted and retracted by hand (the REST API, operators): AssertRelationship cites
// a memory with origin MANUAL; RetractRelationship removes one memory's citation or all of them.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AssertRelationshipResponseSchema,
  RetractRelationshipResponseSchema,
  type AssertRelationshipRequest,
  type RetractRelationshipRequest,
} from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { GraphContext } from '../context.ts';
import { toRelationship } from '../convert.ts';
import { assertionDocId, isLiveRelationship, RELATIONSHIP_ID, relationshipDocId, relationshipIdOf } from '../records.ts';
import { kindEnum } from '../vocabulary.ts';
import { addManualAssertion, dropCitation } from '../writes/assertions.ts';
import { changeCitations } from '../writes/citations.ts';
import { ensureEntity } from '../writes/entities.ts';
import { requireKind, requireMemoryKey, requireName, requireNamespace, requirePredicate } from './validate.ts';

export async function assertRelationship(ctx: GraphContext, req: AssertRelationshipRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const subjectName = requireName('subject', req.subject);
  const objectName = requireName('object', req.object);
  const predicate = requirePredicate('predicate', req.predicate);
  const key = requireMemoryKey('memory_key', req.memoryKey);
  const namespace = requireNamespace('memory_namespace', req.memoryNamespace, 'knowledge');
  const title = requireText('memory_title', req.memoryTitle, 300);
  const subjectKind = requireKind('subject_entity_kind', req.subjectEntityKind || kindEnum(req.subjectKind));
  const objectKind = requireKind('object_entity_kind', req.objectEntityKind || kindEnum(req.objectKind));
  const subject = await ensureEntity(ctx, organizationId, subjectName, subjectKind);
  const object = await ensureEntity(ctx, organizationId, objectName, objectKind);
  if (subject.entityId === object.entityId) invalid('object', 'must be another entity than the subject');
  const triple = { subjectId: subject.entityId, predicate, objectId: object.entityId };
  const relationship = await addManualAssertion(
    ctx,
    { organizationId, namespace, key, version: Number(req.memoryVersion) || 1, title },
    triple,
    relationshipIdOf(triple.subjectId, predicate, triple.objectId),
  );
  const graph = await ctx.graphs.fresh(organizationId);
  return create(AssertRelationshipResponseSchema, { relationship: toRelationship(relationship, graph) });
}

export async function retractRelationship(ctx: GraphContext, req: RetractRelationshipRequest) {
  const organizationId = requireOrganization(req.organizationId);
  if (!RELATIONSHIP_ID.test(req.relationshipId)) invalid('relationship_id', 'must be a relationship id (rel_ and 26 characters)');
  const stored = await ctx.relationships.get(relationshipDocId(organizationId, req.relationshipId));
  if (!isLiveRelationship(stored)) throw new ConnectError(`relationship ${req.relationshipId} does not exist`, Code.NotFound);
  const one = req.memoryKey !== '' || req.memoryNamespace !== '';
  const triple = { subjectId: stored.subjectId, predicate: stored.predicate, objectId: stored.objectId };
  if (one) {
    const memory = {
      namespace: requireNamespace('memory_namespace', req.memoryNamespace),
      key: requireMemoryKey('memory_key', req.memoryKey),
    };
    if (!(await dropCitation(ctx, organizationId, req.relationshipId, memory))) {
      throw new ConnectError(`relationship ${req.relationshipId} is not cited by ${memory.namespace}/${memory.key}`, Code.NotFound);
    }
    await forgetItem(ctx, organizationId, memory.namespace, memory.key, req.relationshipId);
  } else {
    await changeCitations(ctx, organizationId, triple, () => []);
    for (const c of stored.citations) await forgetItem(ctx, organizationId, c.namespace, c.key, req.relationshipId);
  }
  const left = await ctx.relationships.get(relationshipDocId(organizationId, req.relationshipId));
  const graph = await ctx.graphs.fresh(organizationId);
  return create(RetractRelationshipResponseSchema, {
    removed: !isLiveRelationship(left),
    relationship: isLiveRelationship(left) ? toRelationship(left, graph) : undefined,
  });
}

/** Takes a retracted relationship out of a memory's assertions (best effort: a later sync rewrites them anyway). */
async function forgetItem(
  ctx: GraphContext,
  organizationId: string,
  namespace: string,
  key: string,
  relationshipId: string,
): Promise<void> {
  const id = assertionDocId(organizationId, namespace, key);
  const stored = await ctx.assertions.get(id);
  if (!stored?.items.some((i) => i.relationshipId === relationshipId)) return;
  await ctx.assertions.put(
    { ...stored, items: stored.items.filter((i) => i.relationshipId !== relationshipId), rev: stored.rev + 1 },
    { expect: { rev: stored.rev } },
  );
}
