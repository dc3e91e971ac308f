// The REST API's integrations: the catalog of MCP server kinds (catalog.ts), and installing one,
// which registers an MCP server of the organization from the entry's defaults and the user's
// inputs (as createMcpServer does, with the same checks), remembering the entry it came from.
import * as z from 'zod';
import { serverNameSchema, toolPolicySchema } from '../../gateway/server-schema.ts';
import { defineApiRoute } from '../../http/api-route.ts';
import { RequestValidationError, validate } from '../../http/validation.ts';
import { callerOf } from '../access.ts';
import { CreateMcpServerSchema, McpServerSchema } from '../mcp-server-schemas.ts';
import { createServer, sendServer } from '../mcp-servers.ts';
import {
  errors,
  json,
  listEnvelope,
  NotFoundError,
  OrganizationId,
  orgParams,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from '../rest-route.ts';
import { IntegrationSchema, INPUT_NAMES, loadCatalog, serverBodyOf, type Integration } from './catalog.ts';

const tags = ['Integrations'];
const integrationParams = z.object({
  organization_id: OrganizationId,
  integration: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, { error: 'must be an integration name' }),
});

export const InstallIntegrationSchema = z
  .object({
    name: serverNameSchema.optional().meta({ description: "The server's name on the gateway; default the catalog's suggestion." }),
    description: z.string().max(1_000).optional(),
    inputs: z
      .partialRecord(z.enum(INPUT_NAMES), z.string().min(1).max(4_096))
      .default({})
      .meta({ description: 'The values the integration asks for (its `inputs`); `client_secret` is sealed at rest and never returned.' }),
    tool_policy: toolPolicySchema.optional(),
    enabled: z.boolean().optional(),
    shared: z.boolean().optional(),
  })
  .strict()
  .meta({ title: 'InstallIntegration' });

/** Where a field of the created server came from in the install body, for 422s that name the input. */
function inputLoc(loc: (string | number)[]): (string | number)[] {
  const [, first, second] = loc;
  if (first === 'url' || first === 'authorization_server') return ['body', 'inputs', first];
  if (first === 'oauth' && typeof second === 'string' && (INPUT_NAMES as readonly string[]).includes(second))
    return ['body', 'inputs', second];
  return loc;
}

/** One page of a fixed list: the token is the offset, bound to the listing like every page token. */
function arrayPage<T>(items: T[], query: { page_size: number; page_token: string }, scope: string): { items: T[]; next: string } {
  let offset = 0;
  if (query.page_token) {
    const cursor = (() => {
      try {
        return JSON.parse(Buffer.from(query.page_token, 'base64url').toString('utf8')) as { s?: string; o?: number };
      } catch {
        return {};
      }
    })();
    if (cursor.s !== scope || !Number.isInteger(cursor.o) || cursor.o! < 0) {
      throw new RequestValidationError([
        { type: 'value_error', loc: ['query', 'page_token'], msg: 'is not a token of this listing; start again without it' },
      ]);
    }
    offset = cursor.o!;
  }
  const end = offset + query.page_size;
  const next = end < items.length ? Buffer.from(JSON.stringify({ s: scope, o: end })).toString('base64url') : '';
  return { items: items.slice(offset, end), next };
}

function listRoute(catalog: Integration[]): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/integrations',
    operationId: 'listIntegrations',
    summary: 'List integrations',
    description: 'The catalog of MCP server kinds to install: what each is, how it is authorized, and the inputs it needs.',
    tags,
    params: orgParams,
    query: pageQuery,
    responses: {
      '200': json(
        listEnvelope('integrations', IntegrationSchema.meta({ title: 'Integration' }), 'IntegrationList'),
        'One page of the catalog.',
      ),
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: (c) => {
      const page = arrayPage(catalog, c.input.query, 'integrations');
      sendPage(c, 'integrations', page.items, page.next);
    },
  });
}

function installRoute(deps: RouteDeps, catalog: Integration[]): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/integrations/:integration/install',
      operationId: 'installIntegration',
      summary: 'Install an integration',
      description:
        "Registers an MCP server of the organization from the integration's defaults and the `inputs` it asks for, checked as createMcpServer checks a server. Test it next with testMcpServer.",
      tags,
      params: integrationParams,
      responses: {
        '201': { ...json(McpServerSchema, 'The server.'), headers: { ETag: { description: 'The version.', schema: { type: 'string' } } } },
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '409': 'Conflict',
        '422': errors['422'],
      },
      handler: async (c) => {
        const entry = catalog.find((e) => e.name === c.input.params.integration);
        if (!entry) throw new NotFoundError(`no integration is named "${c.input.params.integration}"`);
        const request = await readJson(c, InstallIntegrationSchema, deps.limit);
        let body: z.output<typeof CreateMcpServerSchema>;
        try {
          body = validate(CreateMcpServerSchema, serverBodyOf(entry, request), 'body');
        } catch (err) {
          if (!(err instanceof RequestValidationError)) throw err;
          throw new RequestValidationError(err.detail.map((d) => ({ ...d, loc: inputLoc(d.loc) })));
        }
        const target = { organizationId: c.input.params.organization_id, createdBy: callerOf(c).subject };
        sendServer(deps, c.res, 201, await createServer(deps, target, body, entry.name));
      },
    }),
    body: InstallIntegrationSchema,
    creates: true,
  };
}

export function integrationRoutes(deps: RouteDeps): RestRoute[] {
  const catalog = loadCatalog();
  return [listRoute(catalog), installRoute(deps, catalog)];
}
