// Reading entities: one with its relationships both ways, a page of them, a fuzzy search, or
// those a text names.
import { create } from '@bufbuild/protobuf';
import {
  EntityMatchSchema,
  EntityMentionSchema,
  FindMentionedEntitiesResponseSchema,
  GetEntityResponseSchema,
  ListEntitiesResponseSchema,
  SearchEntitiesResponseSchema,
  type FindMentionedEntitiesRequest,
  type GetEntityRequest,
  type ListEntitiesRequest,
  type SearchEntitiesRequest,
} from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { Filter } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import type { GraphContext } from '../context.ts';
import { relationshipsOf, resolveOrThrow, toEntity } from '../convert.ts';
import type { GraphIndex } from '../graph-index.ts';
import { findMentions } from '../queries/mentions.ts';
import { searchEntities as search } from '../queries/search.ts';
import { normalizeName, spelling, type EntityRecord } from '../records.ts';
import { liveEntity } from '../writes/entities.ts';
import { bounded, requireKind, requireName } from './validate.ts';

/** The entity `ref` names (id, name or alias), following a merge of the id; NOT_FOUND otherwise. */
export async function findEntity(ctx: GraphContext, graph: GraphIndex, field: string, ref: string): Promise<EntityRecord> {
  const inIndex = graph.resolve(ref.trim(), normalizeName(ref));
  if (inIndex) return inIndex;
  const merged = /^[a-z0-9][a-z0-9-]{0,63}$/.test(ref) ? await liveEntity(ctx, graph.organizationId, ref) : undefined;
  return merged ? (graph.entity(merged.entityId) ?? merged) : resolveOrThrow(graph, field, ref);
}

export async function getEntity(ctx: GraphContext, req: GetEntityRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const ref = req.entityId ? requireName('entity_id', req.entityId) : requireName('name', req.name);
  const limit = bounded('neighbour_limit', req.neighbourLimit, 500, 50);
  const graph = await ctx.graphs.fresh(organizationId);
  const entity = await findEntity(ctx, graph, req.entityId ? 'entity_id' : 'name', ref);
  const out = graph.neighbours(entity.entityId, 'out', limit);
  const into = graph.neighbours(entity.entityId, 'in', limit);
  const relationships = relationshipsOf(graph, [...out.edges, ...into.edges]);
  return create(GetEntityResponseSchema, {
    entity: toEntity(entity, graph.degree(entity.entityId)),
    outgoing: out.edges.map((e) => relationships.get(e)!),
    incoming: into.edges.map((e) => relationships.get(e)!),
    outgoingTotal: out.total,
    incomingTotal: into.total,
  });
}

export async function listEntities(ctx: GraphContext, req: ListEntitiesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const kind = requireKind('kind', req.kind);
  const filter: Filter = { organizationId, mergedInto: { $exists: false } };
  if (kind) filter.kind = kind;
  const page = await findPage(ctx.entities, filter, req, { field: 'createdAt', scope: `entities:${organizationId}:${kind}` });
  const graph = await ctx.graphs.fresh(organizationId);
  return create(ListEntitiesResponseSchema, {
    entities: page.items.map((e) => toEntity(e, graph.degree(e.entityId))),
    nextPageToken: page.nextPageToken,
  });
}

export async function searchEntities(ctx: GraphContext, req: SearchEntitiesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const query = requireName('query', req.query);
  const kind = requireKind('kind', req.kind);
  const limit = bounded('limit', req.limit, 50, 10);
  const graph = await ctx.graphs.fresh(organizationId);
  const hits = search(graph, query, kind, limit);
  return create(SearchEntitiesResponseSchema, {
    matches: hits.map((h) =>
      create(EntityMatchSchema, {
        entity: toEntity(h.entity, graph.degree(h.entity.entityId)),
        matched: spelling(h.entity, h.matched),
        score: h.score,
      }),
    ),
  });
}

export async function findMentionedEntities(ctx: GraphContext, req: FindMentionedEntitiesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const text = requireText('text', req.text, 10_000, { required: true });
  const limit = bounded('limit', req.limit, 20, 5);
  const graph = await ctx.graphs.fresh(organizationId);
  return create(FindMentionedEntitiesResponseSchema, {
    mentions: findMentions(graph, text, limit).map((m) =>
      create(EntityMentionSchema, {
        entity: toEntity(m.entity, graph.degree(m.entity.entityId)),
        matched: spelling(m.entity, m.name),
        mention: text.slice(m.start, m.end),
      }),
    ),
  });
}
