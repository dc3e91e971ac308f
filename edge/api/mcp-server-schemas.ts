// The MCP servers of the Agents API as JSON: what a create takes (a servers-file entry, validated
// by the same field schemas, edge/gateway/server-schema.ts), what a PATCH takes (a JSON merge patch,
// RFC 7396, of the same fields), and what every answer shows. The upstream client secret is
// write-only: it is sealed under the key-encryption key before it leaves the edge, and an answer
// says only whether one is set and since when.
import * as z from 'zod';
import {
  hasUpstreamEndpoints,
  httpUrl,
  scopeList,
  SERVER_FIELDS,
  toolPolicySchema,
  UPSTREAM_ENDPOINTS_MESSAGE,
  UPSTREAM_FIELDS,
} from '../gateway/server-schema.ts';
import { OrganizationId } from './rest-route.ts';

export const ServerId = z.string().regex(/^mcs_[A-Za-z0-9]{1,60}$/, { error: 'must be an MCP server id (mcs_...)' });
export const serverParams = z.object({ organization_id: OrganizationId, server_id: ServerId });

const Description = z.string().max(1_000, { error: 'must be at most 1000 characters' });
const ClientSecret = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(4_096, { error: 'must be at most 4096 characters' })
  .meta({ description: 'Write-only: sealed at rest, never returned.' });

const OAuthBody = z
  .object({ ...UPSTREAM_FIELDS, client_secret: ClientSecret.optional() })
  .strict()
  .refine(hasUpstreamEndpoints, { error: UPSTREAM_ENDPOINTS_MESSAGE })
  .meta({
    title: 'McpServerOAuthSettings',
    description: "The gateway's OAuth facade in front of the server's identity provider, as in the servers file.",
  });

const SERVER_BODY = {
  ...SERVER_FIELDS,
  url: httpUrl.meta({ description: 'The backend base URL; `{base_url}/{name}/x` goes to `<url>/x`.' }),
  description: Description.optional(),
  oauth: OAuthBody.optional(),
  enabled: z.boolean().optional().meta({ description: 'Default true. A disabled server answers 503 server_disabled at the gateway.' }),
  shared: z
    .boolean()
    .optional()
    .meta({ description: "Default false. True shares the server with every organization (operator's organization only)." }),
};

export const exclusiveAuth = (s: { oauth?: unknown; authorization_server?: unknown }) => !(s.oauth && s.authorization_server);
const EXCLUSIVE_MESSAGE = 'oauth and authorization_server are exclusive';

export const CreateMcpServerSchema = z
  .object(SERVER_BODY)
  .strict()
  .refine(exclusiveAuth, { error: EXCLUSIVE_MESSAGE })
  .meta({ title: 'CreateMcpServer' });
export type CreateMcpServerBody = z.output<typeof CreateMcpServerSchema>;

const nullable = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

export const UpdateMcpServerSchema = z
  .object({
    name: z.never({ error: 'cannot change: create a new server instead' }).optional(),
    url: httpUrl.optional(),
    mcp_path: SERVER_FIELDS.mcp_path,
    description: nullable(Description),
    scopes: nullable(scopeList),
    authorization_server: nullable(SERVER_FIELDS.authorization_server.unwrap()),
    oauth: nullable(
      z
        .object({
          issuer: nullable(httpUrl),
          authorization_endpoint: nullable(httpUrl),
          token_endpoint: nullable(httpUrl),
          client_id: UPSTREAM_FIELDS.client_id.optional(),
          client_secret: nullable(ClientSecret),
          token_endpoint_auth_method: nullable(UPSTREAM_FIELDS.token_endpoint_auth_method.unwrap()),
          scopes: nullable(scopeList),
          resource: nullable(UPSTREAM_FIELDS.resource.unwrap()),
          audience: nullable(UPSTREAM_FIELDS.audience.unwrap()),
          extra_authorize_params: nullable(z.record(z.string(), z.string().nullable())),
        })
        .strict(),
    ),
    tool_policy: nullable(
      z.object({ allow: nullable(toolPolicySchema.shape.allow.unwrap()), deny: nullable(toolPolicySchema.shape.deny.unwrap()) }).strict(),
    ),
    enabled: z.boolean().optional(),
    shared: z.boolean().optional(),
  })
  .strict()
  .meta({
    title: 'UpdateMcpServer',
    description:
      'A JSON merge patch (RFC 7396): fields given replace the current ones, objects merge, null removes. `oauth.client_secret` left out keeps the secret.',
  });
export type UpdateMcpServerBody = z.output<typeof UpdateMcpServerSchema>;

const OAuthView = z
  .object({
    issuer: z.string().nullable(),
    authorization_endpoint: z.string().nullable(),
    token_endpoint: z.string().nullable(),
    client_id: z.string(),
    client_secret_set: z.boolean().meta({ description: 'Whether a client secret is stored (it is never shown).' }),
    client_secret_set_at: z.string().nullable().meta({ description: 'When the stored secret was set.' }),
    token_endpoint_auth_method: z.enum(['client_secret_basic', 'client_secret_post', 'none']),
    scopes: z.array(z.string()),
    resource: z.string().nullable(),
    audience: z.string().nullable(),
    extra_authorize_params: z.record(z.string(), z.string()),
  })
  .meta({ title: 'McpServerOAuth' });

export const McpServerSchema = z
  .object({
    id: z.string(),
    organization_id: z.string().meta({ description: 'The owner; for a shared server, the operator’s organization.' }),
    shared: z.boolean(),
    name: z.string(),
    description: z.string(),
    url: z.string(),
    mcp_path: z.string(),
    gateway_url: z.string().meta({ description: 'Where agents reach it: `{base_url}/{name}/{mcp_path}`.' }),
    scopes: z.array(z.string()),
    authorization_server: z.string().nullable().meta({ description: '`platform`, an issuer URL, or null.' }),
    oauth: OAuthView.nullable(),
    tool_policy: z.object({ allow: z.array(z.string()), deny: z.array(z.string()) }),
    enabled: z.boolean(),
    integration: z.string().nullable().meta({ description: 'The catalog entry it was installed from.' }),
    created_by: z.string(),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ title: 'McpServer' });
