// Walking the graph: paths between two entities (FindPaths) and what a failure reaches
// (GetAffectedEntities). Both run on the in-memory graph with hard caps on depth, answers and
// visited entities, and answer with the citations the index holds.
import { create } from '@bufbuild/protobuf';
import {
  AffectedEntitySchema,
  Direction,
  EntitySchema,
  FindPathsResponseSchema,
  GetAffectedEntitiesResponseSchema,
  PathSchema,
  type FindPathsRequest,
  type GetAffectedEntitiesRequest,
} from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { invalid, requireOrganization } from '../../common/rpc/validate.ts';
import type { GraphContext } from '../context.ts';
import { relationshipsOf, toEntity, toSteps } from '../convert.ts';
import { affected } from '../queries/impact.ts';
import { findPaths as walkPaths } from '../queries/paths.ts';
import { DEPENDENCY_PREDICATES, flowOf } from '../vocabulary.ts';
import { findEntity } from './entities.ts';
import { bounded, requireName, requirePredicate } from './validate.ts';

/** Entities one query may visit, across all its searches. */
export const MAX_VISITED = 50_000;

function predicatesOf(values: string[]): string[] {
  if (values.length > 20) invalid('predicates', `must have at most 20 items, got ${values.length}`);
  return [...new Set(values.map((p, i) => requirePredicate(`predicates[${i}]`, p)))];
}

export async function findPaths(ctx: GraphContext, req: FindPathsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const fromRef = requireName('from', req.from);
  const toRef = requireName('to', req.to);
  const maxDepth = bounded('max_depth', req.maxDepth, 6, 4);
  const maxPaths = bounded('max_paths', req.maxPaths, 10, 3);
  const predicates = predicatesOf(req.predicates);
  if (![Direction.UNSPECIFIED, Direction.ANY, Direction.FORWARD].includes(req.direction)) invalid('direction', 'must be ANY or FORWARD');
  const graph = await ctx.graphs.fresh(organizationId);
  const from = await findEntity(ctx, graph, 'from', fromRef);
  const to = await findEntity(ctx, graph, 'to', toRef);
  const a = graph.nodeIndex(from.entityId);
  const b = graph.nodeIndex(to.entityId);
  const result =
    a === undefined || b === undefined
      ? { paths: [], visited: 0, truncated: false }
      : walkPaths(graph, a, b, {
          maxDepth,
          maxPaths,
          predicates: graph.predicateFilter(predicates),
          forward: req.direction === Direction.FORWARD,
          maxVisited: MAX_VISITED,
        });
  const relationships = relationshipsOf(
    graph,
    result.paths.flatMap((p) => p.steps.map((s) => s.edge)),
  );
  return create(FindPathsResponseSchema, {
    from: toEntity(from, graph.degree(from.entityId)),
    to: toEntity(to, graph.degree(to.entityId)),
    paths: result.paths.map((p) =>
      create(PathSchema, { steps: toSteps(p.steps, relationships), entityIds: p.nodes.map((n) => graph.nodeId(n)) }),
    ),
    visited: result.visited,
    truncated: result.truncated,
  });
}

export async function getAffectedEntities(ctx: GraphContext, req: GetAffectedEntitiesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const ref = requireName('entity', req.entity);
  const maxDepth = bounded('max_depth', req.maxDepth, 10, 5);
  const limit = bounded('limit', req.limit, 500, 100);
  if (![Direction.UNSPECIFIED, Direction.IMPACT, Direction.DEPENDENCIES].includes(req.direction))
    invalid('direction', 'must be IMPACT or DEPENDENCIES');
  const direction = req.direction === Direction.DEPENDENCIES ? Direction.DEPENDENCIES : Direction.IMPACT;
  const predicates = req.predicates.length > 0 ? predicatesOf(req.predicates) : DEPENDENCY_PREDICATES;
  const graph = await ctx.graphs.fresh(organizationId);
  const root = await findEntity(ctx, graph, 'entity', ref);
  const node = graph.nodeIndex(root.entityId);
  const flows = new Map<number, 'against' | 'along'>();
  for (const p of predicates) {
    const index = graph.predicateIndex(p);
    if (index !== undefined) flows.set(index, flowOf(p));
  }
  const result =
    node === undefined
      ? { reached: [], truncated: false }
      : affected(graph, node, {
          direction: direction === Direction.IMPACT ? 'impact' : 'dependencies',
          flows,
          maxDepth,
          limit,
          maxVisited: MAX_VISITED,
        });
  const relationships = relationshipsOf(
    graph,
    result.reached.flatMap((r) => r.path.map((s) => s.edge)),
  );
  return create(GetAffectedEntitiesResponseSchema, {
    root: toEntity(root, graph.degree(root.entityId)),
    affected: result.reached.map((r) => {
      const entity = graph.entityOfNode(r.node);
      return create(AffectedEntitySchema, {
        entity: entity
          ? toEntity(entity, graph.degreeOfNode(r.node))
          : create(EntitySchema, { organizationId, id: graph.nodeId(r.node), name: graph.nodeId(r.node) }),
        depth: r.depth,
        path: toSteps(r.path, relationships),
      });
    }),
    truncated: result.truncated,
    direction,
    predicates,
  });
}
