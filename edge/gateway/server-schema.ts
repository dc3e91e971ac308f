// The fields of a server entry, one definition for the servers file (config.ts) and for the
// Agents API's MCP servers (edge/api/mcp-servers.ts), so both validate a server the same way.
import { z } from 'zod';
import {
  isHttpUrl,
  isMcpPath,
  RESERVED_SERVER_NAMES,
  SCOPE_TOKEN,
  SERVER_NAME_PATTERN,
  TOOL_PATTERN,
} from '../../services/common/gateway-server-names.ts';

export const httpUrl = z
  .string()
  .max(2_048, 'must be at most 2048 characters')
  .refine(isHttpUrl, 'expected an http(s) URL without credentials or fragment');

export const scopeList = z.array(z.string().max(200).regex(SCOPE_TOKEN, 'invalid scope token')).max(50);

const toolList = z
  .array(z.string().regex(TOOL_PATTERN, 'must be a tool name (1-128 of [A-Za-z0-9_./-]), optionally ending with *'))
  .max(200);

/** Every tool the allow list names (all when it is empty or absent), but none the deny list names. */
export const toolPolicySchema = z.object({ allow: toolList.optional(), deny: toolList.optional() }).strict();

export const serverNameSchema = z
  .string()
  .max(64, 'must be at most 64 characters')
  .regex(SERVER_NAME_PATTERN, 'must match [A-Za-z0-9._-]+')
  .refine((n) => !RESERVED_SERVER_NAMES.has(n), 'is reserved by the gateway');

/** The upstream IdP of a facade, but for its client secret (the file and the API take it differently). */
export const UPSTREAM_FIELDS = {
  issuer: httpUrl.optional(),
  authorization_endpoint: httpUrl.optional(),
  token_endpoint: httpUrl.optional(),
  client_id: z.string().min(1).max(512),
  token_endpoint_auth_method: z.enum(['client_secret_basic', 'client_secret_post', 'none']).optional(),
  scopes: scopeList.optional(),
  resource: z.string().min(1).max(2_048).optional(),
  audience: z.string().min(1).max(2_048).optional(),
  extra_authorize_params: z
    .record(z.string().max(200), z.string().max(2_000))
    .refine((p) => Object.keys(p).length <= 20, 'must have at most 20 entries')
    .optional(),
};

export type UpstreamEntry = z.output<z.ZodObject<typeof UPSTREAM_FIELDS>>;

export const hasUpstreamEndpoints = (u: { issuer?: string; authorization_endpoint?: string; token_endpoint?: string }) =>
  Boolean(u.issuer || (u.authorization_endpoint && u.token_endpoint));
export const UPSTREAM_ENDPOINTS_MESSAGE = 'needs issuer, or both authorization_endpoint and token_endpoint';

/** A server but for its backend (url or local) and its upstream (oauth). */
export const SERVER_FIELDS = {
  name: serverNameSchema,
  mcp_path: z.string().max(200).refine(isMcpPath, 'must be a relative path such as "mcp", without . or .. segments').optional(),
  scopes: scopeList.optional(),
  authorization_server: z.union([z.literal('platform'), httpUrl]).optional(),
  tool_policy: toolPolicySchema.optional(),
};
