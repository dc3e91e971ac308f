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
import type { GraphIndex, RelationshipView, Step } from './graph-index.ts';
import { normalizeName, type EntityRecord, type RelationshipRecord } from './records.ts';
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

/** A stored relationship as a message, its ends' names from the graph when it has them. */
export function toRelationship(record: RelationshipRecord, graph?: GraphIndex): Relationship {
  return relationshipMessage({
    ...record,
    subjectName: graph?.entity(record.subjectId)?.name ?? record.subjectId,
    objectName: graph?.entity(record.objectId)?.name ?? record.objectId,
  });
}

function relationshipMessage(record: RelationshipView): Relationship {
  const newest = [...record.citations].sort((a, b) => b.assertedAt - a.assertedAt).slice(0, CITATIONS_SHOWN);
  return create(RelationshipSchema, {
    id: record.relationshipId,
    subjectId: record.subjectId,
    predicate: record.predicate,
    objectId: record.objectId,
    subjectName: record.subjectName,
    objectName: record.objectName,
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

/** The relationships of in-memory edges, with their citations (held by the index), by edge. */
export function relationshipsOf(graph: GraphIndex, edges: number[]): Map<number, Relationship> {
  const out = new Map<number, Relationship>();
  for (const edge of edges) if (!out.has(edge)) out.set(edge, relationshipMessage(graph.relationship(edge)));
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
