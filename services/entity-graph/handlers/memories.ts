// What memories assert: SyncMemory (a memory written), ForgetMemory (deleted) and
// ExtractRelationships (the extractor alone, nothing stored).
import { create } from '@bufbuild/protobuf';
import {
  CitationOrigin,
  ExtractedRelationshipSchema,
  ExtractRelationshipsResponseSchema,
  ForgetMemoryResponseSchema,
  RelationshipInputSchema,
  SyncMemoryResponseSchema,
  type ExtractRelationshipsRequest,
  type ForgetMemoryRequest,
  type SyncMemoryRequest,
} from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { invalid, requireList, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { GraphContext } from '../context.ts';
import { toRelationship } from '../convert.ts';
import type { Extracted } from '../extractor/interface.ts';
import { relationshipIdOf } from '../records.ts';
import { kindEnum, type KindName } from '../vocabulary.ts';
import { forgetAssertions, syncAssertions, type Desired } from '../writes/assertions.ts';
import { ensureEntity } from '../writes/entities.ts';
import { checkRelationship, requireMemoryKey, requireNamespace } from './validate.ts';

const MAX_CONTENT = 32_000;
const MAX_EXPLICIT = 64;

interface Stated {
  subject: string;
  predicate: string;
  object: string;
  subjectKind: KindName;
  objectKind: KindName;
  origin: CitationOrigin;
}

export async function syncMemory(ctx: GraphContext, req: SyncMemoryRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace('namespace', req.namespace);
  const key = requireMemoryKey('key', req.key);
  if (req.version < 1n) invalid('version', 'must be at least 1');
  const title = requireText('title', req.title, 300);
  const content = requireText('content', req.content, MAX_CONTENT);
  const entities = requireList('entities', req.entities, 64, 200);
  if (req.relationships.length > MAX_EXPLICIT)
    invalid('relationships', `must have at most ${MAX_EXPLICIT} items, got ${req.relationships.length}`);
  const rejected: string[] = [];
  const stated: Stated[] = [];
  for (const [i, r] of req.relationships.entries()) {
    const checked = checkRelationship(`relationships[${i}]`, r);
    if (typeof checked === 'string') rejected.push(checked);
    else stated.push({ ...checked, origin: CitationOrigin.EXPLICIT });
  }
  if (!req.skipExtraction) stated.push(...(await extract(ctx, `${title}\n${content}`, entities)));

  for (const name of entities) await ensureEntity(ctx, organizationId, name, '');
  const desired = new Map<string, Desired>();
  for (const s of stated) {
    const subject = await ensureEntity(ctx, organizationId, s.subject, s.subjectKind);
    const object = await ensureEntity(ctx, organizationId, s.object, s.objectKind);
    if (subject.entityId === object.entityId) continue;
    const triple = { subjectId: subject.entityId, predicate: s.predicate, objectId: object.entityId };
    const id = relationshipIdOf(triple.subjectId, triple.predicate, triple.objectId);
    // An explicit statement outranks the same one found in the text.
    if (!desired.has(id) || s.origin === CitationOrigin.EXPLICIT) desired.set(id, { triple, origin: s.origin });
  }
  const outcome = await syncAssertions(ctx, { organizationId, namespace, key, version: Number(req.version), title }, desired);
  const graph = await ctx.graphs.fresh(organizationId);
  return create(SyncMemoryResponseSchema, {
    relationships: outcome.relationships.map((r) => toRelationship(r, graph)),
    retracted: outcome.retracted,
    stale: outcome.stale,
    rejected,
  });
}

/** The extractor's findings; a failing extractor (a model endpoint down) costs the write nothing. */
async function extract(ctx: GraphContext, text: string, entities: string[]): Promise<Extracted[]> {
  try {
    return await ctx.extractor.extract({ text, entities });
  } catch (err) {
    ctx.logger.warn(
      { err, extractor: ctx.extractor.name },
      'relationship extraction failed; the memory asserts only what its writer stated',
    );
    return [];
  }
}

export async function forgetMemory(ctx: GraphContext, req: ForgetMemoryRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace('namespace', req.namespace);
  const key = requireMemoryKey('key', req.key);
  return create(ForgetMemoryResponseSchema, { retracted: await forgetAssertions(ctx, organizationId, namespace, key) });
}

export async function extractRelationships(ctx: GraphContext, req: ExtractRelationshipsRequest) {
  const text = requireText('text', req.text, MAX_CONTENT, { required: true });
  const entities = requireList('entities', req.entities, 64, 200);
  const found = await ctx.extractor.extract({ text, entities });
  return create(ExtractRelationshipsResponseSchema, {
    relationships: found.map((r) =>
      create(ExtractedRelationshipSchema, {
        relationship: create(RelationshipInputSchema, {
          subject: r.subject,
          predicate: r.predicate,
          object: r.object,
          subjectKind: kindEnum(r.subjectKind),
          objectKind: kindEnum(r.objectKind),
        }),
        sentence: r.sentence,
        origin: r.origin,
      }),
    ),
  });
}
