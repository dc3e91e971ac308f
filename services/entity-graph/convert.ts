// Records and in-memory edges as the service's messages.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CitationSchema,
  EntitySchema,
  PathStepSchema,
  RelationshipSchema,
  type Entity,
  type PathStep,
  type Relationship,
} from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { GraphContext } from './context.ts';
import type { GraphIndex, Step } from './graph-index.ts';
import { normalizeName, relationshipDocId, isLiveRelationship, type EntityRecord, type RelationshipRecord } from './records.ts';
import { searchEntities } from './queries/search.ts';
import { kindEnum } from './vocabulary.ts';

/** Citations shown per relationship; citation_count says how many there are. */
export const CITATIONS_SHOWN = 20;

export function toEntity(record: EntityRecord, relationshipCount: number): Entity {
  return create(EntitySchema, {
    organizationId: record.organizationId,
    id: record.entityId,
    name: record.name,
    kind: record.kind,
    entityKind: kindEnum(record.kind),
    aliases: record.aliases,
    description: record.description,
    createTime: timestampFromMs(record.createdAt),
    updateTime: timestampFromMs(record.updatedAt),
    version: BigInt(record.version),
    relationshipCount,
  });
}

export function toRelationship(record: RelationshipRecord, graph?: GraphIndex): Relationship {
  const newest = [...record.citations].sort((a, b) => b.assertedAt - a.assertedAt).slice(0, CITATIONS_SHOWN);
  return create(RelationshipSchema, {
    id: record.relationshipId,
    subjectId: record.subjectId,
    predicate: record.predicate,
    objectId: record.objectId,
    subjectName: graph?.entity(record.subjectId)?.name ?? record.subjectId,
    objectName: graph?.entity(record.objectId)?.name ?? record.objectId,
    memoryKeys: newest.map((c) => c.key),
    citations: newest.map((c) =>
      create(CitationSchema, {
        namespace: c.namespace,
        key: c.key,
        version: BigInt(c.version),
        origin: c.origin,
        title: c.title,
        assertTime: timestampFromMs(c.assertedAt),
      }),
    ),
    citationCount: record.citations.length,
    createTime: timestampFromMs(record.createdAt),
    updateTime: timestampFromMs(record.updatedAt),
  });
}

/** The stored relationships of in-memory edges, with their citations, in the order given. */
export async function relationshipsOf(
  ctx: GraphContext,
  organizationId: string,
  graph: GraphIndex,
  edges: number[],
): Promise<Map<number, Relationship>> {
  const ids = [...new Set(edges.map((e) => graph.edge(e).relationshipId))];
  const records = await ctx.relationships.getMany(ids.map((id) => relationshipDocId(organizationId, id)));
  const byId = new Map(records.filter(isLiveRelationship).map((r) => [r.relationshipId, r]));
  const out = new Map<number, Relationship>();
  for (const edge of edges) {
    const view = graph.edge(edge);
    // An edge whose record went in the meantime (another replica's write) is shown without citations.
    const record = byId.get(view.relationshipId) ?? {
      _id: '',
      organizationId,
      ...view,
      citations: [],
      createdAt: 0,
      updatedAt: 0,
      rev: 0,
      seq: 0,
    };
    out.set(edge, toRelationship(record, graph));
  }
  return out;
}

export function toSteps(steps: Step[], relationships: Map<number, Relationship>): PathStep[] {
  return steps.map((s) => create(PathStepSchema, { relationship: relationships.get(s.edge), reversed: s.reversed }));
}

/** The entity a caller names (id, name or alias), or NOT_FOUND with the closest names. */
export function resolveOrThrow(graph: GraphIndex, field: string, ref: string): EntityRecord {
  const found = graph.resolve(ref.trim(), normalizeName(ref));
  if (found) return found;
  const near = searchEntities(graph, ref, '', 3).map((h) => `"${h.entity.name}" (${h.entity.entityId})`);
  const hint = near.length > 0 ? `; closest: ${near.join(', ')}` : '';
  throw new ConnectError(`${field}: no entity named "${ref}"${hint}`, Code.NotFound);
}
