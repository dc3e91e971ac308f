// Contradictions and open questions over the REST API: list (cursor pages, by status, namespace
// and key), get, flag a contradiction or ask a question, and resolve or dismiss one. The Brain
// owns them; a narrowed caller (team Brain access) sees and settles only those whose memories it
// may reach, which the Brain enforces on every call (services/brain/handlers/access-guard.ts).
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import { ItemStatus, type Contradiction, type OpenQuestion } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { defineApiRoute, type AnyApiRouteContext } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { brainOf } from './memory-access.ts';
import { Key, MemoryRefBody, NamespaceName, nsEnum, ref, sourceOf } from './memory-json.ts';
import {
  errors,
  iso,
  json,
  listEnvelope,
  listing,
  NotFoundError,
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
import { bodyFields } from './service-fields.ts';
import { nonBlank } from './text-fields.ts';

type Kind = 'contradictions' | 'questions';
const tags = ['Memories'];
const STATUS = ['unspecified', 'open', 'resolved', 'dismissed', 'obsolete'];
const STATUS_ENUM = {
  open: ItemStatus.OPEN,
  resolved: ItemStatus.RESOLVED,
  dismissed: ItemStatus.DISMISSED,
  obsolete: ItemStatus.OBSOLETE,
};
const ItemSchema = z.object({
  id: z.string(),
  kind: z.string(),
  status: z.string(),
  text: z.string(),
  memories: z.array(z.string()),
  entities: z.array(z.string()),
  resolution: z.string(),
  created_at: z.string().nullable(),
  resolved_at: z.string().nullable(),
});
// One shape for both kinds; each kind's routes title it (Contradiction, OpenQuestion), so that the
// OpenAPI document shows each with an example of its own kind.
const ITEM_DESCRIPTION = {
  contradictions: 'A contradiction between memories (text: why they disagree).',
  questions: 'An open question (text: the question).',
};
const contradictionJson = (x: Contradiction) => ({
  id: x.id,
  kind: 'contradiction',
  status: STATUS[x.status] ?? 'unspecified',
  text: x.reason,
  memories: x.memories.map((m) => ref(m.ref)!),
  entities: [],
  resolution: x.resolution,
  created_at: iso(x.createTime as Timestamp | undefined),
  resolved_at: iso(x.resolveTime as Timestamp | undefined),
});
const questionJson = (x: OpenQuestion) => ({
  id: x.id,
  kind: 'question',
  status: STATUS[x.status] ?? 'unspecified',
  text: x.question,
  memories: x.memories.map((m) => ref(m)!),
  entities: x.entities,
  resolution: x.resolution,
  created_at: iso(x.createTime as Timestamp | undefined),
  resolved_at: iso(x.resolveTime as Timestamp | undefined),
});

const ResolveSchema = z
  .object({ status: z.enum(['resolved', 'dismissed']), resolution: z.string().trim().min(1, { error: 'must not be empty' }).max(2_000) })
  .strict()
  .meta({ title: 'ResolveItem' });
const FlagSchema = z
  .object({
    memories: z
      .array(MemoryRefBody)
      .min(2)
      .max(10)
      .refine((refs) => new Set(refs.map((r) => `${r.namespace}/${r.key}`)).size === refs.length, {
        error: 'must name different memories (no memory twice)',
      })
      .meta({ description: 'The memories that disagree (2-10, each once).', uniqueItems: true }),
    reason: nonBlank(2_000).meta({ description: 'Why they disagree.' }),
  })
  .strict()
  .meta({ title: 'FlagContradiction' });
const AskSchema = z
  .object({
    question: nonBlank(2_000),
    memories: z.array(MemoryRefBody).max(20).optional().meta({ description: 'Memories the question is about (at most 20).' }),
    entities: z.array(nonBlank(200)).max(20).optional().meta({ description: 'Entities the question is about (at most 20).' }),
  })
  .strict()
  .meta({ title: 'AskQuestion' });

const itemOf = (kind: Kind) =>
  ItemSchema.meta({ title: kind === 'contradictions' ? 'Contradiction' : 'OpenQuestion', description: ITEM_DESCRIPTION[kind] });
const oneOf = (kind: Kind) => (kind === 'contradictions' ? 'Contradiction' : 'Question');

/** The memories a listing is about: a key in the namespace given, or in both. */
function keyFilter(q: { namespace?: 'knowledge' | 'episodes'; key?: string }) {
  if (!q.key) return [];
  const namespaces = q.namespace ? [q.namespace] : (['knowledge', 'episodes'] as const);
  return namespaces.map((n) => ({ namespace: nsEnum(n), key: q.key! }));
}

function listRoute({ ctx }: RouteDeps, kind: Kind): RestRoute {
  const Item = itemOf(kind);
  return defineApiRoute({
    method: 'GET',
    path: `/organizations/:organization_id/${kind}`,
    operationId: `list${kind === 'contradictions' ? 'Contradictions' : 'Questions'}`,
    summary: `List ${kind === 'contradictions' ? 'contradictions' : 'open questions'}`,
    description:
      'Newest first, optionally by status and by the memories they name (a namespace, and a key in it). A narrowed caller (team Brain access) sees only those whose memories it may reach, so a page may hold fewer items than asked.',
    tags,
    params: orgParams,
    query: pageQuery.extend({
      status: z.enum(['open', 'resolved', 'dismissed', 'obsolete']).optional(),
      namespace: NamespaceName.optional().meta({ description: 'Only those naming a memory of this namespace.' }),
      key: Key.optional().meta({ description: 'Only those naming the memory with this key (in `namespace`, or in either).' }),
      ...(kind === 'questions'
        ? { entity: nonBlank(200).optional().meta({ description: 'Only questions about this entity (case-insensitive).' }) }
        : {}),
    }),
    responses: { '200': json(listEnvelope(kind, Item, `${Item.meta()?.title}List`), `One page of ${kind}.`), ...errors },
    handler: async (c) => {
      const brain = await brainOf(ctx, c);
      const q = c.input.query as typeof c.input.query & { entity?: string };
      const request = {
        organizationId: c.input.params.organization_id,
        status: q.status ? STATUS_ENUM[q.status] : ItemStatus.UNSPECIFIED,
        namespace: q.namespace ? nsEnum(q.namespace) : 0,
        memories: keyFilter(q),
        ...pageArgs(q),
      };
      if (kind === 'contradictions') {
        const res = await listing(() => brain.listContradictions(request));
        sendPage(c, kind, res.contradictions.map(contradictionJson), res.nextPageToken);
      } else {
        const res = await listing(() => brain.listQuestions({ ...request, entities: q.entity ? [q.entity] : [] }));
        sendPage(c, kind, res.questions.map(questionJson), res.nextPageToken);
      }
    },
  });
}

function flagRoute({ ctx, limit }: RouteDeps): RestRoute {
  const Item = itemOf('contradictions');
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/contradictions',
      operationId: 'flagContradiction',
      summary: 'Flag a contradiction',
      description:
        'Records that memories disagree, and why. 201 with the new contradiction; 200 with the one already open over the same memories. 404 when a memory does not exist (or is out of reach of a narrowed caller: 403).',
      tags,
      params: orgParams,
      responses: {
        '201': json(Item, 'The new contradiction.'),
        '200': json(Item, 'The contradiction already open over these memories.'),
        ...errors,
        '404': 'NotFound',
      },
      handler: async (c) => {
        const brain = await brainOf(ctx, c);
        const body = await readJson(c, FlagSchema, limit);
        const fields = { memories: ['memories'], reason: ['reason'] };
        const res = await bodyFields(fields, () =>
          notFoundAs404(() =>
            brain.flagContradiction({
              organizationId: c.input.params.organization_id,
              memories: body.memories.map((m) => ({ namespace: nsEnum(m.namespace), key: m.key })),
              reason: body.reason,
              source: sourceOf(c),
            }),
          ),
        );
        sendJson(c.res, res.created ? 201 : 200, contradictionJson(res.contradiction!));
      },
    }),
    body: FlagSchema,
    creates: true,
  };
}

function askRoute({ ctx, limit }: RouteDeps): RestRoute {
  const Item = itemOf('questions');
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/questions',
      operationId: 'askQuestion',
      summary: 'Ask a question',
      description: 'Records something the organization does not know yet, optionally about memories and entities.',
      tags,
      params: orgParams,
      responses: { '201': json(Item, 'The new open question.'), ...errors },
      handler: async (c) => {
        const brain = await brainOf(ctx, c);
        const body = await readJson(c, AskSchema, limit);
        const fields = { question: ['question'], memories: ['memories'], entities: ['entities'] };
        const res = await bodyFields(fields, () =>
          brain.askQuestion({
            organizationId: c.input.params.organization_id,
            question: body.question,
            memories: (body.memories ?? []).map((m) => ({ namespace: nsEnum(m.namespace), key: m.key })),
            entities: body.entities ?? [],
            source: sourceOf(c),
          }),
        );
        sendJson(c.res, 201, questionJson(res.question!));
      },
    }),
    body: AskSchema,
    creates: true,
  };
}

function idParams(kind: Kind) {
  const one = oneOf(kind);
  const Id = z
    .string()
    .regex(kind === 'contradictions' ? /^ctr_[a-z2-7]{20}$/ : /^q_[a-z2-7]{20}$/, { error: `must be a ${one.toLowerCase()} id` });
  // The id's own name in the path, so that each kind's id is checked by its own pattern.
  const idName = kind === 'contradictions' ? 'contradiction_id' : 'question_id';
  const params = z.object({ organization_id: OrganizationId, [idName]: Id }) as z.ZodObject<{
    organization_id: typeof OrganizationId;
    id: typeof Id;
  }>;
  const idOf = (c: AnyApiRouteContext) => (c.input.params as Record<string, string>)[idName];
  return { idName, params, idOf };
}

function getRoute({ ctx }: RouteDeps, kind: Kind): RestRoute {
  const one = oneOf(kind);
  const { idName, params, idOf } = idParams(kind);
  return defineApiRoute({
    method: 'GET',
    path: `/organizations/:organization_id/${kind}/:${idName}`,
    operationId: `get${one}`,
    summary: `Get a ${one.toLowerCase()}`,
    tags,
    params,
    responses: { '200': json(itemOf(kind), `The ${one.toLowerCase()}.`), ...errors, '404': 'NotFound' },
    handler: async (c) => {
      const brain = await brainOf(ctx, c);
      const organizationId = c.input.params.organization_id;
      const id = idOf(c);
      const item =
        kind === 'contradictions'
          ? (await brain.listContradictions({ organizationId, ids: [id] })).contradictions.map(contradictionJson)[0]
          : (await brain.listQuestions({ organizationId, ids: [id] })).questions.map(questionJson)[0];
      if (!item) throw new NotFoundError(`${one.toLowerCase()} ${id} does not exist`);
      sendJson(c.res, 200, item);
    },
  });
}

function resolveRoute({ ctx, limit }: RouteDeps, kind: Kind): RestRoute {
  const one = oneOf(kind);
  const { idName, params, idOf } = idParams(kind);
  return {
    ...defineApiRoute({
      method: 'POST',
      path: `/organizations/:organization_id/${kind}/:${idName}/resolve`,
      operationId: `resolve${one}`,
      summary: `Resolve or dismiss a ${one.toLowerCase()}`,
      description:
        'status resolved settles it (resolution: how); status dismissed closes it without a fix (resolution: why). Only an open one (412 otherwise).',
      tags,
      params,
      responses: {
        '200': json(itemOf(kind), `The ${one.toLowerCase()} as stored.`),
        ...errors,
        '404': 'NotFound',
        '412': 'PreconditionFailed',
      },
      handler: async (c) => {
        const brain = await brainOf(ctx, c);
        const body = await readJson(c, ResolveSchema, limit);
        const request = {
          organizationId: c.input.params.organization_id,
          id: idOf(c),
          status: body.status === 'resolved' ? ItemStatus.RESOLVED : ItemStatus.DISMISSED,
          resolution: body.resolution,
          source: sourceOf(c),
        };
        if (kind === 'contradictions') {
          const res = await notFoundAs404(() => brain.resolveContradiction(request));
          sendJson(c.res, 200, contradictionJson(res.contradiction!));
        } else {
          const res = await notFoundAs404(() => brain.resolveQuestion(request));
          sendJson(c.res, 200, questionJson(res.question!));
        }
      },
    }),
    body: ResolveSchema,
  };
}

export function itemRoutes(deps: RouteDeps, kind: Kind): RestRoute[] {
  const create = kind === 'contradictions' ? flagRoute(deps) : askRoute(deps);
  return [listRoute(deps, kind), create, getRoute(deps, kind), resolveRoute(deps, kind)];
}
