// The REST shapes of playbooks, and how a document reaches the agents service: read as JSON or
// YAML, and, when the service refuses it, answered as a 422 listing every problem at its place in
// the body (the service's ValidatePlaybook says them all; its refusal names only the first).
import type { JsonObject } from '@bufbuild/protobuf';
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError, type Client } from '@connectrpc/connect';
import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import type { Playbook, PlaybooksService, PlaybookVersion } from '../../gen/mindgate/agents/v1/playbooks_pb.js';
import { PLAYBOOK_SCHEMA_ID } from '../../services/common/playbooks/schema.ts';
import type { AnyApiRouteContext } from '../http/api-route.ts';
import { RequestValidationError } from '../http/validation.ts';
import { iso, MediaTypeError, OrganizationId, readRawBody } from './rest-route.ts';

export const PlaybookId = z
  .string()
  .regex(/^pbk_[A-Za-z0-9]{1,60}$/, { error: 'must be a playbook id (pbk_...)' })
  .meta({ description: 'Playbook id.', example: 'pbk_Rq4nT8vXz2Lk9Mw3Pa7s' });
export const playbookParams = z.object({ organization_id: OrganizationId, playbook_id: PlaybookId });

export const PlaybookDocumentSchema = z
  .object({
    name: z.string({ error: 'must be a string' }).min(1).max(200).regex(/\S/, { error: 'must not be blank' }),
    description: z.string({ error: 'must be a string' }).max(2_000).optional(),
    instructions: z.string({ error: 'must be a string' }).min(1).max(20_000),
    inputs: z
      .array(
        z
          .object({
            name: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/),
            type: z.enum(['string', 'number', 'integer', 'boolean', 'object', 'array']),
            required: z.boolean().optional(),
            description: z.string().max(1_000).optional(),
          })
          .strict(),
        { error: 'must be an array' },
      )
      .max(50)
      .optional(),
    tools: z
      .array(z.string().regex(/^[A-Za-z0-9._-]{1,100}\/[A-Za-z0-9._-]{0,200}\*?$/), { error: 'must be an array of server/tool' })
      .max(100)
      .optional(),
    namespaces: z
      .array(z.enum(['episodes', 'knowledge']))
      .max(2)
      .optional(),
    steps: z
      .array(z.record(z.string(), z.unknown()), { error: 'must be an array' })
      .max(100)
      .optional()
      .meta({ description: 'Each a tool_call, brain_read or brain_write step, as the JSON Schema says.' }),
    output: z.string({ error: 'must be a string' }).max(20_000).optional(),
  })
  .strict()
  .meta({
    title: 'PlaybookDocument',
    description: `A playbook document, as the JSON Schema at \`/schemas/playbook.json\` (${PLAYBOOK_SCHEMA_ID}) describes it.`,
  });

/** What `validatePlaybook` takes: any object, since answering what is wrong with it is its job. */
export const PlaybookDraftSchema = z
  .looseObject({
    name: z.unknown().optional(),
    instructions: z.unknown().optional(),
    steps: z.unknown().optional(),
  })
  .meta({ title: 'PlaybookDraft', description: 'A playbook document to check: any object; the answer lists what is wrong with it.' });

export const PlaybookSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    description: z.string(),
    latest_version: z.int().meta({ description: 'The newest version.' }),
    published_version: z.int().nullable().meta({ description: 'The version runs use; null while none is published.' }),
    created_by: z.string(),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
    published_at: z.string().nullable(),
  })
  .meta({ title: 'Playbook' });

export const PlaybookDetailSchema = PlaybookSchema.extend({
  document: PlaybookDocumentSchema.meta({ description: "The latest version's document." }),
  has_steps: z.boolean().meta({ description: 'The latest version has structured steps (the built-in runner executes them).' }),
}).meta({ title: 'PlaybookDetail' });

export const PlaybookVersionSchema = z
  .object({
    playbook_id: z.string(),
    version: z.int(),
    document: PlaybookDocumentSchema,
    has_steps: z.boolean(),
    created_by: z.string(),
    created_at: z.string().nullable(),
  })
  .meta({ title: 'PlaybookVersion' });

export const ProblemListSchema = z
  .object({
    valid: z.boolean(),
    problems: z.array(
      z.object({
        path: z
          .string()
          .meta({ description: 'A JSON Pointer into the document; empty for the document itself.', example: '/steps/1/tool' }),
        message: z.string(),
      }),
    ),
  })
  .meta({ title: 'PlaybookValidation' });

export const playbookJson = (p: Playbook) => ({
  id: p.playbookId,
  organization_id: p.organizationId,
  name: p.name,
  description: p.description,
  latest_version: p.latestVersion,
  published_version: p.publishedVersion === 0 ? null : p.publishedVersion,
  created_by: p.createdBy,
  created_at: iso(p.createTime as Timestamp | undefined),
  updated_at: iso(p.updateTime as Timestamp | undefined),
  published_at: iso(p.publishTime as Timestamp | undefined),
});

export const playbookDetailJson = (p: Playbook, v: PlaybookVersion) => ({
  ...playbookJson(p),
  document: v.document ?? {},
  has_steps: v.hasSteps,
});

export const versionJson = (v: PlaybookVersion) => ({
  playbook_id: v.playbookId,
  version: v.version,
  document: v.document ?? {},
  has_steps: v.hasSteps,
  created_by: v.createdBy,
  created_at: iso(v.createTime as Timestamp | undefined),
});

const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']);

/** A document sent as JSON or YAML: an object, or a 422 saying why not. */
export async function readDocument(c: AnyApiRouteContext, limit: number): Promise<JsonObject> {
  const type = (c.req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json' && !YAML_TYPES.has(type))
    throw new MediaTypeError('send the document as application/json or application/yaml');
  const text = (await readRawBody(c, limit)).toString('utf8');
  let value: unknown;
  try {
    // YAML 1.2's core schema: plain data, no custom tags; aliases are bounded against expansion bombs.
    value = type === 'application/json' ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new RequestValidationError([
      {
        type: 'value_error',
        loc: ['body'],
        msg: `is not valid ${type === 'application/json' ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`,
      },
    ]);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new RequestValidationError([{ type: 'value_error', loc: ['body'], msg: 'must be an object (a playbook document)' }]);
  }
  // Through JSON: YAML's dates and other non-JSON values become what a JSON document would hold.
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}

/** A JSON Pointer's parts, as a problem's `loc` (array indexes as numbers). */
export function pointerParts(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

/**
 * Runs a call that stores a document; when the service refuses the document, answers 422 with
 * every problem the service finds in it, located under `at` in the body.
 */
export async function withDocumentProblems<T>(
  playbooks: Client<typeof PlaybooksService>,
  organizationId: string,
  document: JsonObject,
  at: (string | number)[],
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof ConnectError) || err.code !== Code.InvalidArgument || !err.rawMessage.startsWith('document')) throw err;
    const { problems } = await playbooks.validatePlaybook({ organizationId, document });
    if (problems.length === 0) throw err;
    throw new RequestValidationError(
      problems.map((p) => ({ type: 'value_error', loc: ['body', ...at, ...pointerParts(p.path)], msg: p.message })),
    );
  }
}
