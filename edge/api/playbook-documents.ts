// Playbook documents as files, and starting a playbook: the published JSON Schema, a dry
// validation, import and export (JSON or YAML), and a run bound to the published version.
import { stringify as toYaml } from 'yaml';
import * as z from 'zod';
import { Executor } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { PLAYBOOK_SCHEMA } from '../../services/common/playbooks/schema.ts';
import { defineApiRoute, integerParam } from '../http/api-route.ts';
import { sendJson, sendText } from '../http/respond.ts';
import { callerOf } from './access.ts';
import { quoteEtag } from './etag.ts';
import {
  PlaybookDetailSchema,
  PlaybookDocumentSchema,
  PlaybookDraftSchema,
  playbookDetailJson,
  playbookParams,
  ProblemListSchema,
  readDocument,
  withDocumentProblems,
} from './playbook-json.ts';
import { Code, ConnectError } from '@connectrpc/connect';
import { RequestValidationError } from '../http/validation.ts';
import { errors, json, notFoundAs404, orgParams, readJson, type RestRoute, type RouteDeps } from './rest-route.ts';
import { runJson, withEtag } from './runs.ts';

const tags = ['Playbooks'];
const notFound = { '404': 'NotFound' } as const;

const RunPlaybookSchema = z
  .object({
    inputs: z.record(z.string(), z.unknown()).optional().meta({ description: "Values of the playbook's declared inputs." }),
    title: z.string().trim().min(1, { error: 'must not be empty' }).max(200, { error: 'must be at most 200 characters' }).optional(),
    timeout_seconds: z
      .int({ error: 'must be an integer' })
      .min(1, { error: 'must be at least 1' })
      .max(86_400, { error: 'must be at most 86400' })
      .optional(),
    brain_feedback: z
      .boolean({ error: 'must be a boolean' })
      .optional()
      .meta({ description: 'Report the outcome to the Brain as feedback on the memories the run read (worked or failed).' }),
    executor: z.enum(['llm', 'external'], { error: 'must be llm or external' }).optional().meta({
      description:
        'For a version without steps: the LLM runner (default) or an external agent. A version with steps always goes to the built-in runner.',
    }),
  })
  .strict()
  .meta({ title: 'RunPlaybook', example: { inputs: { service: 'checkout' }, title: 'Checkout p99 alert' } });

const exportQuery = z.object({
  version: integerParam({ min: 0, max: 1_000_000, default: 0, description: 'The version; 0 (the default) for the published one.' }),
  format: z.enum(['json', 'yaml'], { error: 'must be json or yaml' }).default('json').meta({ description: 'The file format.' }),
});

/** `GET /schemas/playbook.json`: the JSON Schema every playbook document is checked against (no credentials). */
export function playbookSchemaRoute(): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/schemas/playbook.json',
    operationId: 'getPlaybookSchema',
    summary: 'The JSON Schema of playbook documents',
    description: 'What `validatePlaybook`, the creates and `importPlaybook` check a document against first. Needs no credentials.',
    tags,
    responses: {
      '200': json(
        z
          .looseObject({ $schema: z.string(), $id: z.string(), properties: z.record(z.string(), z.unknown()) })
          .meta({ title: 'JsonSchema' }),
        'The schema (JSON Schema draft-07).',
      ),
    },
    handler: ({ res }) => sendJson(res, 200, PLAYBOOK_SCHEMA, { 'cache-control': 'public, max-age=300' }),
  });
}

function validateRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/playbooks/validate',
      operationId: 'validatePlaybook',
      summary: 'Check a playbook document',
      description:
        'Stores nothing: answers every problem of the document (JSON or YAML) with a JSON Pointer to its place (`/steps/1/tool`): what the JSON Schema refuses, then duplicate step ids, tools and namespaces the document does not declare, and paths that name no declared input or earlier step.',
      tags,
      params: orgParams,
      responses: { '200': json(ProblemListSchema, 'The problems; none when `valid`.'), ...errors },
      handler: async (c) => {
        const document = await readDocument(c, limit);
        const { problems } = await ctx.clients.playbooks.validatePlaybook({ organizationId: c.input.params.organization_id, document });
        sendJson(c.res, 200, { valid: problems.length === 0, problems: problems.map((p) => ({ path: p.path, message: p.message })) });
      },
    }),
    body: PlaybookDraftSchema,
    yamlBody: true,
  };
}

function importRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/playbooks/import',
      operationId: 'importPlaybook',
      summary: 'Import a playbook document',
      description:
        'A document as `exportPlaybook` gives it (JSON or YAML): a new playbook (201), or the next version of the playbook of the same name (200). `?publish=true` publishes the imported version. A refused document is a 422 listing every problem.',
      tags,
      params: orgParams,
      query: z.object({ publish: z.enum(['true', 'false']).default('false').meta({ description: 'Publish the imported version.' }) }),
      responses: {
        '200': { ...json(PlaybookDetailSchema, 'A new version of an existing playbook.') },
        '201': json(PlaybookDetailSchema, 'A new playbook.'),
        ...errors,
      },
      handler: async (c) => {
        const document = await readDocument(c, limit);
        const organizationId = c.input.params.organization_id;
        const res = await withDocumentProblems(ctx.clients.playbooks, organizationId, document, [], () =>
          ctx.clients.playbooks.importPlaybook({
            organizationId,
            document,
            publish: c.input.query.publish === 'true',
            createdBy: callerOf(c).subject,
          }),
        );
        sendJson(c.res, res.created ? 201 : 200, playbookDetailJson(res.playbook!, res.version!), { etag: quoteEtag(res.playbook!.etag) });
      },
    }),
    body: PlaybookDocumentSchema,
    yamlBody: true,
    creates: true,
  };
}

function exportRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/playbooks/:playbook_id/export',
    operationId: 'exportPlaybook',
    summary: 'Export a playbook document',
    description: 'The document of a version (the published one by default) as a file to keep in a repository or import elsewhere.',
    tags,
    params: playbookParams,
    query: exportQuery,
    responses: {
      '200': { description: 'The document.', content: { 'application/json': PlaybookDocumentSchema, 'application/yaml': z.string() } },
      ...errors,
      ...notFound,
    },
    handler: async (c) => {
      const { organization_id: organizationId, playbook_id: playbookId } = c.input.params;
      const { version, format } = c.input.query;
      const res = await notFoundAs404(() => ctx.clients.playbooks.getPlaybookVersion({ organizationId, playbookId, version }));
      const document = res.version!.document ?? {};
      const disposition = { 'content-disposition': `attachment; filename="${playbookId}-v${res.version!.version}.${format}"` };
      if (format === 'yaml') sendText(c.res, 200, toYaml(document), 'application/yaml', disposition);
      else sendJson(c.res, 200, document, disposition);
    },
  });
}

/** The service's refusal of one input (`inputs.<name>: …`) as the 422 of that body field. */
async function inputFields<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const match =
      err instanceof ConnectError && err.code === Code.InvalidArgument ? /^inputs\.([a-z0-9_]+): (.*)$/s.exec(err.rawMessage) : null;
    if (!match) throw err;
    throw new RequestValidationError([{ type: 'value_error', loc: ['body', 'inputs', match[1]], msg: match[2] }]);
  }
}

function runPlaybookRoute({ ctx, limit }: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/playbooks/:playbook_id/runs',
      operationId: 'runPlaybook',
      summary: 'Run a playbook',
      description:
        'Opens a thread and queues a run bound to the published version (recorded on the run as `playbook_id` and `playbook_version`). A version with steps goes to the built-in runner (`executor: playbook`), one without to the LLM runner or an external agent. `inputs` are checked against the declared ones (422 naming the input). 409 `playbook-unpublished` while no version is published.',
      tags,
      params: playbookParams,
      responses: { '201': withEtag('The queued run (its thread is `thread_id`).'), ...errors, ...notFound, '409': 'Conflict' },
      handler: async (c) => {
        const body = await readJson(c, RunPlaybookSchema, limit);
        const { organization_id: organizationId, playbook_id: playbookId } = c.input.params;
        const executor = body.executor === 'external' ? Executor.EXTERNAL : body.executor === 'llm' ? Executor.LLM : Executor.UNSPECIFIED;
        const { run } = await inputFields(() =>
          notFoundAs404(() =>
            ctx.clients.playbooks.startPlaybookRun({
              organizationId,
              playbookId,
              inputs: (body.inputs ?? {}) as never,
              title: body.title ?? '',
              timeoutSeconds: body.timeout_seconds ?? 0,
              executor,
              brainFeedback: body.brain_feedback ?? false,
              createdBy: callerOf(c).subject,
            }),
          ),
        );
        sendJson(c.res, 201, runJson(run!), { etag: quoteEtag(run!.etag) });
      },
    }),
    body: RunPlaybookSchema,
    creates: true,
  };
}

export function playbookDocumentRoutes(deps: RouteDeps): RestRoute[] {
  return [validateRoute(deps), importRoute(deps), exportRoute(deps), runPlaybookRoute(deps)];
}
