// The REST API's memory seeding: start a run from an uploaded file (the raw body: Markdown, plain
// text, JSON Lines, a zip of a docs folder) or a URL (JSON), follow its progress (get, items, an
// SSE stream), review its items, cancel it. Each a call to the brain's SeedingService, which owns
// the runs; uploads are refused before they are read whole when larger than
// SEEDING_MAX_UPLOAD_BYTES (Content-Length, then counted while read).
import { Code, ConnectError } from '@connectrpc/connect';
import * as z from 'zod';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { RequestValidationError } from '../http/validation.ts';
import { callerOf } from './access.ts';
import { requireWholeMemory } from './memory-access.ts';
import {
  errors,
  json,
  listEnvelope,
  listing,
  MediaTypeError,
  notFoundAs404,
  orgParams,
  pageArgs,
  pageQuery,
  readJson,
  readRawBody,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';
import { seedingActionRoutes } from './seeding-actions.ts';
import {
  KeyPrefix,
  NamespaceName,
  notFound,
  SeedingRunSchema,
  seedingRunJson,
  seedingRunParams,
  Tag,
  tags,
  UPLOAD_TYPES,
} from './seeding-json.ts';
import { seedingStreamRoute } from './seeding-stream.ts';

const UrlSourceSchema = z
  .object({
    url: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(2_000),
    namespace: NamespaceName.optional(),
    key_prefix: KeyPrefix.optional(),
    tags: z.array(Tag).max(8).optional(),
    review: z.boolean().optional(),
  })
  .strict()
  .meta({
    title: 'StartSeedingFromUrl',
    example: { url: 'https://raw.githubusercontent.com/acme/docs/main/runbooks/deploy.md', key_prefix: 'docs/', review: true },
  });

const uploadQuery = z.object({
  filename: z
    .string()
    .min(1)
    .max(200, { error: 'must be at most 200 characters' })
    .optional()
    .meta({ description: "The file's name, used in keys and titles (default: `upload`).", example: 'docs.zip' }),
  namespace: NamespaceName.optional().meta({ description: 'Where the memories go (default knowledge).' }),
  key_prefix: KeyPrefix.optional(),
  tags: z
    .string()
    .max(600)
    .optional()
    .meta({ description: 'Comma-separated tags added to every memory (at most 8).', example: 'docs,imported' }),
  review: z.enum(['true', 'false']).default('false').meta({ description: 'Hold extracted memories for approval.' }),
});

function writerOf(c: Parameters<RestRoute['handler']>[0]) {
  const caller = callerOf(c);
  return caller.kind === 'user'
    ? { clientId: 'mindgate-api', userId: caller.subject, clientName: 'Mindgate API' }
    : { clientId: `${caller.kind}:${caller.subject}`, userId: '', clientName: 'Mindgate API' };
}

/** The service's INVALID_ARGUMENT (`field: why`) as a 422 on the field: the upload itself is the body. */
async function asValidation<T>(where: 'body' | 'query', work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof ConnectError) || err.code !== Code.InvalidArgument) throw err;
    const at = err.rawMessage.indexOf(': ');
    const field = at > 0 ? err.rawMessage.slice(0, at) : '';
    const msg = at > 0 ? err.rawMessage.slice(at + 2) : err.rawMessage;
    const loc = field.startsWith('upload.') || field === '' ? ['body'] : [where, ...field.split('.')];
    throw new RequestValidationError([{ type: 'value_error', loc, msg }]);
  }
}

function createSeedingRunRoute({ ctx, limit }: RouteDeps): RestRoute {
  const uploadLimit = ctx.config.seedingMaxUploadBytes;
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/seeding-runs',
      operationId: 'createSeedingRun',
      summary: 'Start seeding memories',
      description:
        "Starts a seeding run. Send a file as the body with its media type (`text/markdown`, `text/html`, `text/plain`, `application/jsonl`, `application/zip` of a docs folder; at most `SEEDING_MAX_UPLOAD_BYTES`, 413 above, 415 for other types) and the options as query parameters, or `application/json` with a `url` where the deployment allows URL sources. The run extracts candidate memories (one per Markdown or HTML section, text piece or JSONL line) and writes them through the Brain as any write (duplicates, contradictions, the plan's memory limit), or holds them for review. Refused to a caller whose memory access is narrowed to part of the organization.",
      tags,
      params: orgParams,
      query: uploadQuery,
      responses: { '201': json(SeedingRunSchema, 'The queued run.'), ...errors, ...notFound },
      handler: async (c) => {
        await requireWholeMemory(ctx, c);
        const type = (c.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        const q = c.input.query;
        const common = {
          organizationId: c.input.params.organization_id,
          writer: writerOf(c),
        };
        let request: Parameters<typeof ctx.clients.seeding.startSeeding>[0];
        if (type === 'application/json') {
          const body = await readJson(c, UrlSourceSchema, limit);
          request = {
            ...common,
            source: { case: 'url', value: body.url },
            namespace: body.namespace === 'episodes' ? Namespace.EPISODES : Namespace.KNOWLEDGE,
            keyPrefix: body.key_prefix ?? '',
            tags: body.tags ?? [],
            review: body.review ?? false,
          };
        } else {
          if (!UPLOAD_TYPES.includes(type))
            throw new MediaTypeError(`send a file as ${UPLOAD_TYPES.join(', ')}, or application/json with a url`);
          const content = await readRawBody(c, uploadLimit);
          request = {
            ...common,
            source: { case: 'upload', value: { filename: q.filename ?? 'upload', mediaType: type, content } },
            namespace: q.namespace === 'episodes' ? Namespace.EPISODES : Namespace.KNOWLEDGE,
            keyPrefix: q.key_prefix ?? '',
            tags: (q.tags ?? '')
              .split(',')
              .map((t) => t.trim())
              .filter(Boolean),
            review: q.review === 'true',
          };
        }
        const { run } = await asValidation(type === 'application/json' ? 'body' : 'query', () => ctx.clients.seeding.startSeeding(request));
        sendJson(c.res, 201, seedingRunJson(run!));
      },
    }),
    body: UrlSourceSchema,
    uploadTypes: UPLOAD_TYPES,
    bodyLimit: uploadLimit,
    creates: true,
  };
}

function listSeedingRunsRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/seeding-runs',
    operationId: 'listSeedingRuns',
    summary: 'List seeding runs',
    description: "The organization's seeding runs, newest first, with their progress.",
    tags,
    params: orgParams,
    query: pageQuery,
    responses: { '200': json(listEnvelope('seeding_runs', SeedingRunSchema, 'SeedingRunList'), 'One page of runs.'), ...errors },
    handler: async (c) => {
      const res = await listing(() =>
        ctx.clients.seeding.listSeedingRuns({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
      );
      sendPage(c, 'seeding_runs', res.runs.map(seedingRunJson), res.nextPageToken);
    },
  });
}

function getSeedingRunRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/seeding-runs/:run_id',
    operationId: 'getSeedingRun',
    summary: 'Get a seeding run',
    description: 'The run with its progress: items by outcome.',
    tags,
    params: seedingRunParams,
    responses: { '200': json(SeedingRunSchema, 'The run.'), ...errors, ...notFound },
    handler: async (c) => {
      const { organization_id: organizationId, run_id: runId } = c.input.params;
      const { run } = await notFoundAs404(() => ctx.clients.seeding.getSeedingRun({ organizationId, runId }));
      sendJson(c.res, 200, seedingRunJson(run!));
    },
  });
}

/** Every seeding operation. */
export function seedingRoutes(deps: RouteDeps): RestRoute[] {
  return [
    createSeedingRunRoute(deps),
    listSeedingRunsRoute(deps),
    getSeedingRunRoute(deps),
    ...seedingActionRoutes(deps),
    seedingStreamRoute(deps),
  ];
}
