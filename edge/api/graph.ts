// The REST API's memory graph: entities (list, search, get, update under If-Match, merge),
// relationships (list, assert citing a memory, retract), paths between two entities and what a
// failure affects. Each a call to the entity-graph service; asserting reads the cited memory
// through the Brain service first, so a relationship never cites a memory that does not exist.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { create } from '@bufbuild/protobuf';
import * as z from 'zod';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import {
  AliasListSchema,
  Direction,
  type Entity,
  type PathStep,
  type Relationship,
} from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { kindEnum, KIND_LIST } from '../../services/entity-graph/vocabulary.ts';
import { defineApiRoute, integerParam } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { RequestValidationError } from '../http/validation.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import {
  errors,
  iso,
  json,
  listEnvelope,
  listing,
  notFoundAs404,
  OrganizationId,
  orgParams,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';
import { requireWholeMemory } from './memory-access.ts';
import { planWithoutGraph } from '../graph-plan.ts';
import { Code } from '@connectrpc/connect';
import { failure, REASONS } from '../../services/common/rpc/reasons.ts';
import type { AppContext } from '../context.ts';
import type { AnyApiRouteContext } from '../http/api-route.ts';
import { requestFields } from './service-fields.ts';
import { nonBlank } from './text-fields.ts';

const tags = ['Memory graph'];

/**
 * Every graph operation: the plan must include the graph (403 `plan-limit` naming the plan, as the
 * Brain MCP server's graph tools are withheld), and the caller must reach the whole memory.
 */
async function requireGraph(ctx: AppContext, c: AnyApiRouteContext): Promise<void> {
  const plan = await planWithoutGraph(ctx, c.input.params.organization_id as string);
  if (plan !== undefined) {
    throw failure(
      `the ${plan} plan does not include the memory graph (entity_graph): it comes with the Professional plan (and its trial); ` +
        'ask an owner of the organization to upgrade',
      Code.PermissionDenied,
      REASONS.planLimit,
    );
  }
  await requireWholeMemory(ctx, c);
}
const EntityId = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, { error: 'must be an entity id (lower-case letters, digits, dashes)' });
const RelationshipId = z.string().regex(/^rel_[a-z2-7]{26}$/, { error: 'must be a relationship id (rel_...)' });
const Kind = z.enum(KIND_LIST).meta({ description: 'What sort of thing the entity is.' });
const NamespaceName = z.enum(['knowledge', 'episodes']);
const MemoryKey = z.string().regex(/^[A-Za-z0-9._:/-]{1,200}$/, { error: 'must be a memory key (1-200 of A-Z a-z 0-9 . _ : / -)' });
/** A name, alias or id of an entity: the service trims it. */
export const EntityName = nonBlank(200);
/**
 * A predicate as the service normalizes it (services/entity-graph/vocabulary.ts): lower-cased,
 * spaces and dashes made underscores; what is left must start with a letter.
 */
export const Predicate = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_ -]{0,63}$/, { error: 'must be a letter, then up to 63 letters, digits, underscores, spaces or dashes' })
  .meta({
    description:
      'depends_on, calls, runs_on, owned_by, member_of, part_of, deployed_to, stores_data_in, alerts_to, replaced_by, or your own (spaces and dashes become _, letters lower-case).',
    example: 'depends_on',
  });
/** A memory as `namespace/key`, the way the API names memories elsewhere (supersedes, feedback). */
const MemoryRef = z
  .string()
  .regex(/^(knowledge|episodes)\/[A-Za-z0-9._:/-]{1,200}$/, { error: 'must be a memory as namespace/key (knowledge/... or episodes/...)' })
  .meta({ description: 'A memory as namespace/key.', example: 'knowledge/services/checkout' });
const memoryOf = (ref: string | undefined) => {
  const at = ref?.indexOf('/') ?? -1;
  return ref && at > 0 ? { memoryNamespace: ref.slice(0, at), memoryKey: ref.slice(at + 1) } : { memoryNamespace: '', memoryKey: '' };
};
const MEMORY_FIELDS = { memory_namespace: ['query', 'memory'], memory_key: ['query', 'memory'] };
const entityParams = z.object({ organization_id: OrganizationId, entity_id: EntityId });
const relationshipParams = z.object({ organization_id: OrganizationId, relationship_id: RelationshipId });

export const EntitySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.string().meta({ description: 'person, team, service, component, organization, document, other, or empty.' }),
    aliases: z.array(z.string()),
    description: z.string(),
    version: z.int(),
    relationship_count: z.int(),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ title: 'Entity' });

const CitationSchema = z
  .object({
    namespace: z.string(),
    key: z.string(),
    version: z.int(),
    origin: z.string(),
    title: z.string(),
    asserted_at: z.string().nullable(),
  })
  .meta({ title: 'Citation' });

export const RelationshipSchema = z
  .object({
    id: z.string(),
    subject_id: z.string(),
    subject_name: z.string(),
    predicate: z.string(),
    object_id: z.string(),
    object_name: z.string(),
    citations: z.array(CitationSchema),
    citation_count: z.int(),
    created_at: z.string().nullable(),
  })
  .meta({ title: 'Relationship' });

const StepSchema = z.object({ relationship: RelationshipSchema, reversed: z.boolean() }).meta({ title: 'PathStep' });
const ORIGINS = ['unspecified', 'explicit', 'extracted', 'model', 'manual'];

const entityJson = (e: Entity) => ({
  id: e.id,
  name: e.name,
  kind: e.kind,
  aliases: e.aliases,
  description: e.description,
  version: Number(e.version),
  relationship_count: e.relationshipCount,
  created_at: iso(e.createTime as Timestamp | undefined),
  updated_at: iso(e.updateTime as Timestamp | undefined),
});
const relationshipJson = (r: Relationship) => ({
  id: r.id,
  subject_id: r.subjectId,
  subject_name: r.subjectName,
  predicate: r.predicate,
  object_id: r.objectId,
  object_name: r.objectName,
  citations: r.citations.map((c) => ({
    namespace: c.namespace,
    key: c.key,
    version: Number(c.version),
    origin: ORIGINS[c.origin] ?? 'unspecified',
    title: c.title,
    asserted_at: iso(c.assertTime as Timestamp | undefined),
  })),
  citation_count: r.citationCount,
  created_at: iso(r.createTime as Timestamp | undefined),
});
const stepJson = (s: PathStep) => ({ relationship: relationshipJson(s.relationship!), reversed: s.reversed });
const withEtag = (description: string) => ({ ...json(EntitySchema, description), headers: ETAG_HEADER });
const notFound = { '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] };

function listEntitiesRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/graph/entities',
    operationId: 'listEntities',
    summary: 'List entities',
    description: "The organization's entities, oldest first, optionally of one kind.",
    tags,
    params: orgParams,
    query: pageQuery.extend({ kind: Kind.optional() }),
    responses: { '200': json(listEnvelope('entities', EntitySchema, 'EntityList'), 'One page of entities.'), ...errors },
    handler: async (c) => {
      await requireGraph(ctx, c);
      const res = await listing(() =>
        ctx.clients.entityGraph.listEntities({
          organizationId: c.input.params.organization_id,
          kind: kindEnum(c.input.query.kind ?? ''),
          ...pageArgs(c.input.query),
        }),
      );
      sendPage(c, 'entities', res.entities.map(entityJson), res.nextPageToken);
    },
  });
}

function searchEntitiesRoute({ ctx }: RouteDeps): RestRoute {
  const Match = z.object({ entity: EntitySchema, matched: z.string(), score: z.number() }).meta({ title: 'EntityMatch' });
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/graph/entities/search',
    operationId: 'searchEntities',
    summary: 'Search entities',
    description: 'By name or alias: exact, prefix, word and near spellings, best first.',
    tags,
    params: orgParams,
    query: z.object({
      q: EntityName,
      kind: Kind.optional(),
      limit: integerParam({ min: 1, max: 50, default: 10, description: 'Matches at most.' }),
    }),
    responses: { '200': json(z.object({ matches: z.array(Match) }).meta({ title: 'EntityMatches' }), 'The matches.'), ...errors },
    handler: async (c) => {
      await requireGraph(ctx, c);
      const { q, kind, limit } = c.input.query;
      const res = await ctx.clients.entityGraph.searchEntities({
        organizationId: c.input.params.organization_id,
        query: q,
        kind: kindEnum(kind ?? ''),
        limit,
      });
      sendJson(c.res, 200, { matches: res.matches.map((m) => ({ entity: entityJson(m.entity!), matched: m.matched, score: m.score })) });
    },
  });
}

function getEntityRoute({ ctx }: RouteDeps): RestRoute {
  const Detail = EntitySchema.extend({
    outgoing: z.array(RelationshipSchema),
    incoming: z.array(RelationshipSchema),
    outgoing_total: z.int(),
    incoming_total: z.int(),
  }).meta({ title: 'EntityDetail' });
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/graph/entities/:entity_id',
    operationId: 'getEntity',
    summary: 'Get an entity',
    description:
      'The entity with its relationships both ways (up to `limit` each, with totals), each citing its memories. A merged-away id answers as the entity it was merged into.',
    tags,
    params: entityParams,
    query: z.object({ limit: integerParam({ min: 1, max: 500, default: 50, description: 'Relationships per direction.' }) }),
    responses: { '200': { ...json(Detail, 'The entity.'), headers: ETAG_HEADER }, ...notFound },
    handler: async (c) => {
      await requireGraph(ctx, c);
      const { organization_id: organizationId, entity_id: entityId } = c.input.params;
      const res = await notFoundAs404(() =>
        ctx.clients.entityGraph.getEntity({ organizationId, entityId, neighbourLimit: c.input.query.limit }),
      );
      const body = {
        ...entityJson(res.entity!),
        outgoing: res.outgoing.map(relationshipJson),
        incoming: res.incoming.map(relationshipJson),
        outgoing_total: res.outgoingTotal,
        incoming_total: res.incomingTotal,
      };
      sendJson(c.res, 200, body, { etag: quoteEtag(String(res.entity!.version)) });
    },
  });
}

/** The version an If-Match names: 0 for none; an ETag that is no version of ours can never match. */
function expectedVersionOf(etag: string): bigint {
  if (etag === '') return 0n;
  return /^[1-9]\d{0,15}$/.test(etag) ? BigInt(etag) : BigInt(Number.MAX_SAFE_INTEGER);
}

const UpdateEntitySchema = z
  .object({
    name: EntityName.optional(),
    kind: Kind.optional(),
    aliases: z.array(EntityName).max(32).optional(),
    description: z.string().max(2_000).optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { error: 'give name, kind, aliases or description' })
  .meta({ title: 'UpdateEntity', minProperties: 1 });

function updateEntityRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/organizations/:organization_id/graph/entities/:entity_id',
      operationId: 'updateEntity',
      summary: 'Change an entity',
      description:
        "Name, kind, aliases (the whole list) or description. With If-Match, only at that version (412). 409 when a name or alias is another entity's: merge them instead.",
      tags,
      params: entityParams,
      responses: { '200': withEtag('The entity as stored.'), ...notFound, '409': 'Conflict', '412': 'PreconditionFailed' },
      handler: async (c) => {
        await requireGraph(ctx, c);
        const body = await readJson(c, UpdateEntitySchema, limit);
        const fields = { name: ['body', 'name'], aliases: ['body', 'aliases'], description: ['body', 'description'] };
        const res = await notFoundAs404(() =>
          requestFields(fields, () =>
            ctx.clients.entityGraph.updateEntity({
              organizationId: c.input.params.organization_id,
              entityId: c.input.params.entity_id,
              name: body.name,
              kind: kindEnum(body.kind ?? ''),
              aliases: body.aliases ? create(AliasListSchema, { values: body.aliases }) : undefined,
              description: body.description,
              expectedVersion: expectedVersionOf(ifMatch(c.req.headers['if-match'])),
            }),
          ),
        );
        sendJson(c.res, 200, entityJson(res.entity!), { etag: quoteEtag(String(res.entity!.version)) });
      },
    }),
    body: UpdateEntitySchema,
  };
}

const MergeSchema = z.object({ source_entity_id: EntityId }).strict().meta({ title: 'MergeEntities' });

function mergeEntitiesRoute({ ctx, limit }: RouteDeps): RestRoute {
  const Merged = z.object({ entity: EntitySchema, moved_relationships: z.int() }).meta({ title: 'MergedEntity' });
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/graph/entities/:entity_id/merge',
      operationId: 'mergeEntities',
      summary: 'Merge an entity into this one',
      description:
        "The source's names become aliases of this entity and its relationships move here with their citations; the source's id then answers as this one.",
      tags,
      params: entityParams,
      responses: { '200': json(Merged, 'The merged entity.'), ...notFound },
      handler: async (c) => {
        await requireGraph(ctx, c);
        const body = await readJson(c, MergeSchema, limit);
        if (body.source_entity_id === c.input.params.entity_id) {
          throw new RequestValidationError([{ type: 'value_error', loc: ['body', 'source_entity_id'], msg: 'must be another entity' }]);
        }
        const res = await notFoundAs404(() =>
          ctx.clients.entityGraph.mergeEntities({
            organizationId: c.input.params.organization_id,
            targetEntityId: c.input.params.entity_id,
            sourceEntityId: body.source_entity_id,
          }),
        );
        sendJson(c.res, 200, { entity: entityJson(res.entity!), moved_relationships: res.movedRelationships });
      },
    }),
    body: MergeSchema,
  };
}

function listRelationshipsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/graph/relationships',
    operationId: 'listRelationships',
    summary: 'List relationships',
    description: 'Oldest first, filtered by subject, object, predicate or the memory citing them (`memory`, as namespace/key).',
    tags,
    params: orgParams,
    query: pageQuery.extend({
      subject_id: EntityId.optional(),
      object_id: EntityId.optional(),
      predicate: Predicate.optional(),
      memory: MemoryRef.optional(),
    }),
    responses: {
      '200': json(listEnvelope('relationships', RelationshipSchema, 'RelationshipList'), 'One page of relationships.'),
      ...errors,
    },
    handler: async (c) => {
      await requireGraph(ctx, c);
      const q = c.input.query;
      const fields = {
        ...MEMORY_FIELDS,
        subject_id: ['query', 'subject_id'],
        object_id: ['query', 'object_id'],
        predicate: ['query', 'predicate'],
      };
      const res = await listing(() =>
        requestFields(fields, () =>
          ctx.clients.entityGraph.listRelationships({
            organizationId: c.input.params.organization_id,
            subjectId: q.subject_id ?? '',
            objectId: q.object_id ?? '',
            predicate: q.predicate ?? '',
            ...memoryOf(q.memory),
            ...pageArgs(q),
          }),
        ),
      );
      sendPage(c, 'relationships', res.relationships.map(relationshipJson), res.nextPageToken);
    },
  });
}

const AssertSchema = z
  .object({
    subject: EntityName,
    predicate: Predicate,
    object: EntityName,
    memory: z.object({ namespace: NamespaceName, key: MemoryKey }).strict(),
  })
  .strict()
  .meta({ title: 'AssertRelationship' });

function assertRelationshipRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/graph/relationships',
      operationId: 'assertRelationship',
      summary: 'Assert a relationship',
      description:
        'Records that a memory of the organization asserts the relationship (creating the entities as needed). It stays while the memory exists, through its updates; deleting the memory retracts it. 422 when the memory does not exist.',
      tags,
      params: orgParams,
      responses: { '201': json(RelationshipSchema, 'The relationship with its citations.'), ...errors },
      handler: async (c) => {
        await requireGraph(ctx, c);
        const body = await readJson(c, AssertSchema, limit);
        const organizationId = c.input.params.organization_id;
        const namespace = body.memory.namespace === 'knowledge' ? Namespace.KNOWLEDGE : Namespace.EPISODES;
        const { memories } = await ctx.clients.brain.getMemories({ organizationId, namespace, keys: [body.memory.key] });
        if (memories.length === 0)
          throw new RequestValidationError([
            { type: 'value_error', loc: ['body', 'memory'], msg: 'no memory of the organization has this namespace and key' },
          ]);
        const fields = { subject: ['body', 'subject'], predicate: ['body', 'predicate'], object: ['body', 'object'] };
        const res = await requestFields(fields, () =>
          ctx.clients.entityGraph.assertRelationship({
            organizationId,
            subject: body.subject,
            predicate: body.predicate,
            object: body.object,
            memoryNamespace: body.memory.namespace,
            memoryKey: body.memory.key,
            memoryVersion: memories[0].version,
            memoryTitle: memories[0].title,
          }),
        );
        sendJson(c.res, 201, relationshipJson(res.relationship!));
      },
    }),
    body: AssertSchema,
    creates: true,
  };
}

function retractRelationshipRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/graph/relationships/:relationship_id',
    operationId: 'retractRelationship',
    summary: 'Retract a relationship',
    description:
      "Removes every citation (the relationship is gone), or with `memory` (namespace/key) only that memory's. A later write of a memory that states it asserts it again.",
    tags,
    params: relationshipParams,
    query: z.object({ memory: MemoryRef.optional() }),
    responses: { '204': { description: 'Retracted.' }, ...notFound },
    handler: async (c) => {
      await requireGraph(ctx, c);
      const { organization_id: organizationId, relationship_id: relationshipId } = c.input.params;
      await notFoundAs404(() =>
        requestFields(MEMORY_FIELDS, () =>
          ctx.clients.entityGraph.retractRelationship({ organizationId, relationshipId, ...memoryOf(c.input.query.memory) }),
        ),
      );
      c.res.writeHead(204).end();
    },
  });
}

function pathsRoute({ ctx }: RouteDeps): RestRoute {
  const Paths = z
    .object({
      from: EntitySchema,
      to: EntitySchema,
      paths: z.array(z.object({ entity_ids: z.array(z.string()), steps: z.array(StepSchema) })),
      truncated: z.boolean(),
    })
    .meta({ title: 'EntityPaths' });
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/graph/paths',
    operationId: 'findEntityPaths',
    summary: 'Paths between two entities',
    description:
      'Up to max_paths shortest chains of relationships (either direction unless forward=true), each step citing its memories. `from` and `to` take ids, names or aliases.',
    tags,
    params: orgParams,
    query: z.object({
      from: EntityName,
      to: EntityName,
      max_depth: integerParam({ min: 1, max: 6, default: 4, description: 'Steps at most.' }),
      max_paths: integerParam({ min: 1, max: 10, default: 3, description: 'Paths at most.' }),
      predicate: z.array(Predicate).max(20).optional().meta({ description: 'Only these predicates (repeat the parameter).' }),
      forward: z.enum(['true', 'false']).default('false').meta({ description: 'Follow relationships from subject to object only.' }),
    }),
    responses: { '200': json(Paths, 'The paths, shortest first.'), ...notFound },
    handler: async (c) => {
      await requireGraph(ctx, c);
      const q = c.input.query;
      const fields = { from: ['query', 'from'], to: ['query', 'to'], predicates: ['query', 'predicate'] };
      const res = await notFoundAs404(() =>
        requestFields(fields, () =>
          ctx.clients.entityGraph.findPaths({
            organizationId: c.input.params.organization_id,
            from: q.from,
            to: q.to,
            maxDepth: q.max_depth,
            maxPaths: q.max_paths,
            predicates: q.predicate ?? [],
            direction: q.forward === 'true' ? Direction.FORWARD : Direction.ANY,
          }),
        ),
      );
      sendJson(c.res, 200, {
        from: entityJson(res.from!),
        to: entityJson(res.to!),
        paths: res.paths.map((p) => ({ entity_ids: p.entityIds, steps: p.steps.map(stepJson) })),
        truncated: res.truncated,
      });
    },
  });
}

function affectedRoute({ ctx }: RouteDeps): RestRoute {
  const Affected = z
    .object({
      root: EntitySchema,
      direction: z.string(),
      predicates: z.array(z.string()),
      affected: z.array(z.object({ entity: EntitySchema, depth: z.int(), path: z.array(StepSchema) })),
      truncated: z.boolean(),
    })
    .meta({ title: 'AffectedEntities' });
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/graph/entities/:entity_id/affected',
    operationId: 'getAffectedEntities',
    summary: 'What a failure affects',
    description:
      'direction=impact: what breaks if the entity fails (what depends on it, and wholes it is part of); dependencies: what it relies on. Nearest first, each with the path that makes it so.',
    tags,
    params: entityParams,
    query: z.object({
      direction: z.enum(['impact', 'dependencies']).default('impact'),
      max_depth: integerParam({ min: 1, max: 10, default: 5, description: 'Hops at most.' }),
      limit: integerParam({ min: 1, max: 500, default: 100, description: 'Entities at most.' }),
      predicate: z.array(Predicate).max(20).optional().meta({ description: 'Predicates walked (default: the dependency predicates).' }),
    }),
    responses: { '200': json(Affected, 'The affected entities.'), ...notFound },
    handler: async (c) => {
      await requireGraph(ctx, c);
      const q = c.input.query;
      const res = await notFoundAs404(() =>
        requestFields({ predicates: ['query', 'predicate'] }, () =>
          ctx.clients.entityGraph.getAffectedEntities({
            organizationId: c.input.params.organization_id,
            entity: c.input.params.entity_id,
            direction: q.direction === 'dependencies' ? Direction.DEPENDENCIES : Direction.IMPACT,
            maxDepth: q.max_depth,
            limit: q.limit,
            predicates: q.predicate ?? [],
          }),
        ),
      );
      sendJson(c.res, 200, {
        root: entityJson(res.root!),
        direction: q.direction,
        predicates: res.predicates,
        affected: res.affected.map((a) => ({ entity: entityJson(a.entity!), depth: a.depth, path: a.path.map(stepJson) })),
        truncated: res.truncated,
      });
    },
  });
}

export function graphRoutes(deps: RouteDeps): RestRoute[] {
  return [
    listEntitiesRoute(deps),
    searchEntitiesRoute(deps),
    getEntityRoute(deps),
    updateEntityRoute(deps),
    mergeEntitiesRoute(deps),
    affectedRoute(deps),
    listRelationshipsRoute(deps),
    assertRelationshipRoute(deps),
    retractRelationshipRoute(deps),
    pathsRoute(deps),
  ];
}
