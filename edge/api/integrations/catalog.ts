// The integrations catalog (catalog.json beside this file): the kinds of MCP server a user installs
// in a few fields. Each entry gives a server's defaults (URL, MCP path, how it is authorized, the
// upstream OAuth endpoints and scopes) and the inputs a user must supply (a URL, a client id and
// secret...). Installing one makes an ordinary MCP server (mcp-servers.ts) from the defaults and
// the inputs. The file is read and checked once, when the API starts.
import fs from 'node:fs';
import * as z from 'zod';
import { httpUrl, scopeList, serverNameSchema, UPSTREAM_FIELDS } from '../../gateway/server-schema.ts';
import { RequestValidationError } from '../../http/validation.ts';
import type { CreateMcpServerBody } from '../mcp-server-schemas.ts';

/** What an install may supply, and where it goes in the server's settings. */
export const INPUT_NAMES = [
  'url',
  'issuer',
  'authorization_endpoint',
  'token_endpoint',
  'client_id',
  'client_secret',
  'audience',
  'resource',
  'authorization_server',
] as const;
export type InputName = (typeof INPUT_NAMES)[number];

const InputSchema = z
  .object({
    name: z.enum(INPUT_NAMES),
    title: z.string().min(1),
    description: z.string().optional(),
    required: z.boolean().optional(),
    secret: z.boolean().optional(),
    default: z.string().optional(),
  })
  .strict();

export const IntegrationSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
    title: z.string().min(1),
    description: z.string().min(1),
    documentation_url: httpUrl,
    server: z.object({ name: serverNameSchema, url: httpUrl.optional(), mcp_path: z.string().min(1) }).strict(),
    authorization: z.enum(['none', 'upstream_oauth', 'external', 'platform']),
    oauth: z
      .object({
        issuer: UPSTREAM_FIELDS.issuer,
        authorization_endpoint: UPSTREAM_FIELDS.authorization_endpoint,
        token_endpoint: UPSTREAM_FIELDS.token_endpoint,
        token_endpoint_auth_method: UPSTREAM_FIELDS.token_endpoint_auth_method,
        extra_authorize_params: UPSTREAM_FIELDS.extra_authorize_params,
      })
      .strict()
      .optional(),
    scopes: scopeList,
    inputs: z.array(InputSchema),
  })
  .strict();
export type Integration = z.output<typeof IntegrationSchema>;

const CatalogSchema = z.object({ integrations: z.array(IntegrationSchema).min(1) }).strict();

export const CATALOG_FILE = new URL('./catalog.json', import.meta.url);

/** The catalog, checked: a broken file stops the API's start with the entry and the field. */
export function loadCatalog(file: URL | string = CATALOG_FILE): Integration[] {
  const parsed = CatalogSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`integrations catalog ${String(file)}: ${issue.path.join('.')}: ${issue.message}`);
  }
  const names = new Set<string>();
  for (const entry of parsed.data.integrations) {
    if (names.has(entry.name)) throw new Error(`integrations catalog ${String(file)}: duplicate integration "${entry.name}"`);
    names.add(entry.name);
  }
  return parsed.data.integrations;
}

export interface InstallRequest {
  name?: string;
  description?: string;
  inputs: Partial<Record<InputName, string>>;
  tool_policy?: CreateMcpServerBody['tool_policy'];
  enabled?: boolean;
  shared?: boolean;
}

/** The create body an install makes; 422 for a missing or unexpected input. */
export function serverBodyOf(entry: Integration, request: InstallRequest): Record<string, unknown> {
  const problems: { type: string; loc: (string | number)[]; msg: string }[] = [];
  const declared = new Map(entry.inputs.map((i) => [i.name, i]));
  for (const name of Object.keys(request.inputs)) {
    if (!declared.has(name as InputName))
      problems.push({ type: 'value_error', loc: ['body', 'inputs', name], msg: `${entry.name} takes no input ${name}` });
  }
  const value = (name: InputName): string | undefined => request.inputs[name] ?? declared.get(name)?.default;
  for (const input of entry.inputs) {
    if (input.required && !value(input.name))
      problems.push({ type: 'missing', loc: ['body', 'inputs', input.name], msg: `${input.title} is required` });
  }
  if (problems.length > 0) throw new RequestValidationError(problems);
  const oauth =
    entry.authorization === 'upstream_oauth'
      ? {
          ...entry.oauth,
          ...Object.fromEntries(
            (['issuer', 'authorization_endpoint', 'token_endpoint', 'client_id', 'client_secret', 'audience', 'resource'] as const)
              .map((name) => [name, value(name)])
              .filter(([, v]) => v !== undefined),
          ),
          scopes: entry.scopes.length > 0 ? entry.scopes : undefined,
        }
      : undefined;
  const authorizationServer =
    entry.authorization === 'platform' ? 'platform' : entry.authorization === 'external' ? value('authorization_server') : undefined;
  return {
    name: request.name ?? entry.server.name,
    url: value('url') ?? entry.server.url,
    mcp_path: entry.server.mcp_path,
    description: request.description ?? entry.title,
    scopes: entry.scopes.length > 0 ? entry.scopes : undefined,
    oauth,
    authorization_server: authorizationServer,
    tool_policy: request.tool_policy,
    enabled: request.enabled,
    shared: request.shared,
  };
}
