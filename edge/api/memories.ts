// The REST API's memories, for the dashboard: list, search, get, create, update (expected_version),
// delete and feedback; their versions (memory-versions.ts) and contradictions and open questions
// (memory-items.ts). Every operation is a call to the Brain service, which owns them; the writer
// recorded is the API caller.
import * as z from 'zod';
import { Outcome, WriteOutcome } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { defineApiRoute, integerParam, type AnyApiRouteContext } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { ETAG_HEADER, ifMatch, PreconditionError, quoteEtag } from './etag.ts';
import { itemRoutes } from './memory-items.ts';
import { Key, MemorySchema, memoryJson, memoryParams, NamespaceName, nsEnum, nsName, ref, sourceOf } from './memory-json.ts';
import { memoryVersionRoutes } from './memory-versions.ts';
import {
  ConflictError,
  errors,
  json,
  listEnvelope,
  listing,
  NotFoundError,
  notFoundAs404,
  orgParams,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';
import { EntityName, Predicate } from './graph.ts';
import { brainOf } from './memory-access.ts';
import { bodyFields, requestFields } from './service-fields.ts';
import { nonBlank } from './text-fields.ts';

const tags = ['Memories'];

const Relationship = z.object({ subject: EntityName, predicate: Predicate, object: EntityName }).strict();
const Fields = {
  title: z.string().max(300).optional(),
  content: nonBlank(32_000),
  tags: z.array(nonBlank(64)).max(32).optional(),
  entities: z.array(nonBlank(200)).max(64).optional(),
  relationships: z
    .array(Relationship)
    .max(64)
    .optional()
    .meta({ description: 'Relationships the memory states, asserted in the memory graph.' }),
  allow_duplicate: z.boolean().optional(),
};
const CreateMemorySchema = z
  .object({ namespace: NamespaceName, key: Key, ...Fields })
  .strict()
  .meta({ title: 'CreateMemory' });
const UpdateMemorySchema = z
  .object({
    ...Fields,
    expected_version: z.int().min(1).optional().meta({
      description:
        'The version you read: the update applies only to it (412 otherwise). Required unless If-Match names it (412 without either).',
    }),
  })
  .strict()
  .meta({ title: 'UpdateMemory' });
const WriteResult = z.object({ memory: MemorySchema, outcome: z.string(), contradictions: z.array(z.string()) }).meta({
  title: 'MemoryWrite',
  description: 'outcome: created, updated or unchanged; contradictions: ids of contradictions the write opened.',
});

async function writeMemory(
  deps: RouteDeps,
  c: AnyApiRouteContext,
  namespace: 'knowledge' | 'episodes',
  key: string,
  body: z.output<typeof UpdateMemorySchema> | z.output<typeof CreateMemorySchema>,
  expected: number,
) {
  const brain = await brainOf(deps.ctx, c);
  const fields = { content: ['content'], title: ['title'], tags: ['tags'], entities: ['entities'], relationships: ['relationships'] };
  const res = await bodyFields(fields, () =>
    brain.putMemory({
      organizationId: c.input.params.organization_id,
      namespace: nsEnum(namespace),
      key,
      title: body.title ?? '',
      content: body.content,
      tags: body.tags ?? [],
      entities: body.entities ?? [],
      relationships: body.relationships ?? [],
      allowDuplicate: body.allow_duplicate ?? false,
      expectedVersion: BigInt(expected),
      source: sourceOf(c),
    }),
  );
  if (res.outcome === WriteOutcome.DUPLICATE) {
    throw new ConflictError(
      `not written: a similar memory exists (${res.duplicates.map((d) => ref(d.ref)).join(', ')}); update that one, or set allow_duplicate`,
    );
  }
  const outcome = res.outcome === WriteOutcome.CREATED ? 'created' : res.outcome === WriteOutcome.UPDATED ? 'updated' : 'unchanged';
  const body2 = { memory: memoryJson(res.memory!), outcome, contradictions: res.contradictions.map((x) => x.id) };
  sendJson(c.res, res.created ? 201 : 200, body2, { etag: quoteEtag(String(res.memory!.version)) });
}

/** The version a change applies to: expected_version, or If-Match (a memory's ETag is its version). */
function expectedVersion(c: AnyApiRouteContext, given: number | undefined): number | undefined {
  const etag = ifMatch(c.req.headers['if-match']);
  if (etag === '') return given;
  if (!/^[1-9][0-9]{0,9}$/.test(etag)) throw new PreconditionError('If-Match must be the ETag getMemory answered, such as "3"');
  if (given !== undefined && given !== Number(etag)) {
    throw new PreconditionError(`If-Match names version ${etag} and expected_version ${given}: send one of them`);
  }
  return Number(etag);
}

function listMemoriesRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/memories',
    operationId: 'listMemories',
    summary: 'List memories',
    description: 'One namespace, most recently changed first; optionally those carrying a tag or listing an entity.',
    tags,
    params: orgParams,
    query: pageQuery.extend({
      namespace: NamespaceName.default('knowledge'),
      tag: z.string().max(64).optional(),
      entity: z.string().max(200).optional(),
    }),
    responses: { '200': json(listEnvelope('memories', MemorySchema, 'MemoryList'), 'One page of memories.'), ...errors },
    handler: async (c) => {
      const brain = await brainOf(ctx, c);
      const q = c.input.query;
      const res = await listing(() =>
        brain.listMemories({
          organizationId: c.input.params.organization_id,
          namespace: nsEnum(q.namespace),
          tag: q.tag ?? '',
          entity: q.entity ?? '',
          ...pageArgs(q),
        }),
      );
      sendPage(c, 'memories', res.memories.map(memoryJson), res.nextPageToken);
    },
  });
}

function searchMemoriesRoute({ ctx }: RouteDeps): RestRoute {
  const Result = z
    .object({ memory: MemorySchema, score: z.number(), warning: z.string().nullable() })
    .meta({ title: 'MemorySearchResult' });
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/memories/search',
    operationId: 'searchMemories',
    summary: 'Search memories',
    description: 'By words and meaning in one namespace, ranked as the Brain ranks them (docs/brain.md), with tag and entity filters.',
    tags,
    params: orgParams,
    query: z.object({
      q: nonBlank(2_000),
      namespace: NamespaceName.default('knowledge'),
      limit: integerParam({ min: 1, max: 50, default: 10, description: 'Results at most.' }),
      tag: z
        .array(nonBlank(64))
        .max(16)
        .optional()
        .meta({ description: 'Only memories with every one of these tags (repeat the parameter).' }),
      entity: z
        .array(nonBlank(200))
        .max(16)
        .optional()
        .meta({ description: 'Only memories listing one of these entities (repeat the parameter).' }),
    }),
    responses: {
      '200': json(
        z.object({ results: z.array(Result), searched_memories: z.int() }).meta({ title: 'MemorySearch' }),
        'Results, best first.',
      ),
      ...errors,
    },
    handler: async (c) => {
      const brain = await brainOf(ctx, c);
      const q = c.input.query;
      const fields = { query: ['query', 'q'], tags: ['query', 'tag'], entities: ['query', 'entity'] };
      const res = await requestFields(fields, () =>
        brain.searchMemories({
          organizationId: c.input.params.organization_id,
          namespace: nsEnum(q.namespace),
          query: q.q,
          limit: q.limit,
          tags: q.tag ?? [],
          entities: q.entity ?? [],
        }),
      );
      sendJson(c.res, 200, {
        results: res.results.map((r) => ({
          memory: memoryJson(r.memory!),
          score: r.scores?.final ?? 0,
          warning: r.warning?.message ?? null,
        })),
        searched_memories: Number(res.searchedMemories),
      });
    },
  });
}

function getMemoryRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/memories/:namespace/:key',
    operationId: 'getMemory',
    summary: 'Get a memory',
    description: 'By namespace and key (a key with "/" is sent encoded as %2F). ETag is its version.',
    tags,
    params: memoryParams,
    responses: { '200': { ...json(MemorySchema, 'The memory.'), headers: ETAG_HEADER }, ...errors, '404': 'NotFound' },
    handler: async (c) => {
      const brain = await brainOf(ctx, c);
      const { organization_id: organizationId, namespace, key } = c.input.params;
      const res = await brain.getMemories({ organizationId, namespace: nsEnum(namespace), keys: [key] });
      if (res.memories.length === 0) throw new NotFoundError(`memory ${namespace}/${key} does not exist`);
      sendJson(c.res, 200, memoryJson(res.memories[0]), { etag: quoteEtag(String(res.memories[0].version)) });
    },
  });
}

function createMemoryRoute(deps: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/memories',
      operationId: 'createMemory',
      summary: 'Create a memory',
      description:
        '412 when the key is taken (update it instead); 409 when a memory saying the same exists under another key (unless allow_duplicate). Contradictions it opens are listed.',
      tags,
      params: orgParams,
      responses: { '201': json(WriteResult, 'The memory as stored.'), ...errors, '409': 'Conflict', '412': 'PreconditionFailed' },
      handler: async (c) => {
        const body = await readJson(c, CreateMemorySchema, deps.limit);
        await writeMemory(deps, c, body.namespace, body.key, body, 0);
      },
    }),
    body: CreateMemorySchema,
    creates: true,
  };
}

function updateMemoryRoute(deps: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'PUT',
      path: '/organizations/:organization_id/memories/:namespace/:key',
      operationId: 'updateMemory',
      summary: 'Update a memory',
      description:
        'Replaces title, content, tags, entities and relationships, only at the version read: expected_version, or If-Match with the ETag getMemory answered (412 when it is not the current version, when neither is given, or when both are given and differ).',
      tags,
      params: memoryParams,
      responses: {
        '200': json(WriteResult, 'The memory as stored.'),
        ...errors,
        '404': 'NotFound',
        '409': 'Conflict',
        '412': 'PreconditionFailed',
      },
      handler: async (c) => {
        const body = await readJson(c, UpdateMemorySchema, deps.limit);
        const expected = expectedVersion(c, body.expected_version);
        // An update must name the version it was made from: a blind overwrite would lose a change.
        if (expected === undefined) {
          throw new PreconditionError(
            'name the version you read: expected_version in the body, or If-Match with the ETag getMemory answered',
          );
        }
        await writeMemory(deps, c, c.input.params.namespace, c.input.params.key, body, expected);
      },
    }),
    body: UpdateMemorySchema,
  };
}

function deleteMemoryRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/memories/:namespace/:key',
    operationId: 'deleteMemory',
    summary: 'Delete a memory',
    description:
      'With expected_version, or If-Match with the ETag getMemory answered, only at that version (412 otherwise). What it asserted in the memory graph is retracted.',
    tags,
    params: memoryParams,
    query: z.object({ expected_version: integerParam({ min: 1, max: 2 ** 31, default: 0, description: 'The version you read.' }) }),
    responses: { '204': { description: 'Deleted.' }, ...errors, '404': 'NotFound', '412': 'PreconditionFailed' },
    handler: async (c) => {
      const brain = await brainOf(ctx, c);
      const { organization_id: organizationId, namespace, key } = c.input.params;
      const expected = expectedVersion(c, c.input.query.expected_version || undefined);
      await notFoundAs404(() =>
        brain.deleteMemory({
          organizationId,
          namespace: nsEnum(namespace),
          key,
          expectedVersion: expected ? BigInt(expected) : undefined,
          source: sourceOf(c),
        }),
      );
      c.res.writeHead(204).end();
    },
  });
}

const FeedbackSchema = z
  .object({
    outcome: z.enum(['worked', 'failed']),
    memories: z
      .array(z.object({ namespace: NamespaceName, key: Key }).strict())
      .min(1)
      .max(50),
    note: z.string().max(1_000).optional(),
  })
  .strict()
  .meta({ title: 'MemoryFeedback' });

function feedbackRoute({ ctx, limit }: RouteDeps): RestRoute {
  const Result = z
    .object({
      updated: z.array(z.object({ namespace: z.string(), key: z.string(), worked: z.int(), failed: z.int() })),
      missing: z.array(z.string()),
    })
    .meta({ title: 'MemoryFeedbackResult' });
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/memories/feedback',
      operationId: 'recordMemoryFeedback',
      summary: 'Report whether memories worked',
      description: 'Feedback changes ranking and adds warnings to memories that failed in use.',
      tags,
      params: orgParams,
      responses: { '200': json(Result, 'The memories updated, and those not found.'), ...errors },
      handler: async (c) => {
        const brain = await brainOf(ctx, c);
        const body = await readJson(c, FeedbackSchema, limit);
        const res = await brain.recordFeedback({
          organizationId: c.input.params.organization_id,
          memories: body.memories.map((m) => ({ namespace: nsEnum(m.namespace), key: m.key })),
          outcome: body.outcome === 'worked' ? Outcome.WORKED : Outcome.FAILED,
          note: body.note ?? '',
          source: sourceOf(c),
        });
        sendJson(c.res, 200, {
          updated: res.memories.map((m) => ({
            namespace: nsName(m.namespace),
            key: m.key,
            worked: m.stats?.worked ?? 0,
            failed: m.stats?.failed ?? 0,
          })),
          missing: res.missing.map((m) => ref(m)!),
        });
      },
    }),
    body: FeedbackSchema,
  };
}

export function memoryRoutes(deps: RouteDeps): RestRoute[] {
  return [
    listMemoriesRoute(deps),
    searchMemoriesRoute(deps),
    feedbackRoute(deps),
    getMemoryRoute(deps),
    createMemoryRoute(deps),
    updateMemoryRoute(deps),
    deleteMemoryRoute(deps),
    ...memoryVersionRoutes(deps),
    ...itemRoutes(deps, 'contradictions'),
    ...itemRoutes(deps, 'questions'),
  ];
}
