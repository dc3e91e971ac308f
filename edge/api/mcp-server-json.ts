// Between the Agents API's JSON of an MCP server and the agents service's McpServer message: the
// answer's JSON, the editable fields a merge patch applies to, and the message a create or an
// update sends (with the client secret sealed, as only the edge holds the key-encryption key).
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import {
  McpAuthKind,
  type McpServer,
  type McpServerAuthSchema,
  type McpServerSchema,
} from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import type { KeyEncryption } from '../../services/common/key-encryption.ts';
import { upstreamSecretContext } from '../../services/agents/handlers/mcp-server-settings.ts';
import { RequestValidationError } from '../http/validation.ts';
import type { CreateMcpServerBody } from './mcp-server-schemas.ts';
import { iso } from './rest-route.ts';

type Json = Record<string, unknown>;

const orNull = (value: string) => value || null;

export function mcpServerJson(s: McpServer, gatewayUrl: string) {
  const up = s.auth?.kind === McpAuthKind.UPSTREAM_OAUTH ? s.auth.upstreamOauth : undefined;
  return {
    id: s.serverId,
    organization_id: s.organizationId,
    shared: s.shared,
    name: s.name,
    description: s.description,
    url: s.url,
    mcp_path: s.mcpPath,
    gateway_url: `${gatewayUrl}/${s.name}/${s.mcpPath}`,
    scopes: s.scopes,
    authorization_server: authorizationServerOf(s),
    oauth: up
      ? {
          issuer: orNull(up.issuer),
          authorization_endpoint: orNull(up.authorizationEndpoint),
          token_endpoint: orNull(up.tokenEndpoint),
          client_id: up.clientId,
          client_secret_set: up.sealedClientSecret !== '',
          client_secret_set_at: iso(up.clientSecretSetTime as Timestamp | undefined),
          token_endpoint_auth_method: up.tokenEndpointAuthMethod,
          scopes: up.scopes,
          resource: orNull(up.resource),
          audience: orNull(up.audience),
          extra_authorize_params: { ...up.extraAuthorizeParams },
        }
      : null,
    tool_policy: { allow: s.toolPolicy?.allow ?? [], deny: s.toolPolicy?.deny ?? [] },
    enabled: s.enabled,
    integration: orNull(s.integration),
    created_by: s.createdBy,
    created_at: iso(s.createTime as Timestamp | undefined),
    updated_at: iso(s.updateTime as Timestamp | undefined),
  };
}

function authorizationServerOf(s: McpServer): string | null {
  if (s.auth?.kind === McpAuthKind.PLATFORM) return 'platform';
  if (s.auth?.kind === McpAuthKind.EXTERNAL) return s.auth.authorizationServer;
  return null;
}

/** Drops undefined, null and empty values, as a create body would leave them out. */
function compact(value: Json): Json {
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0)),
  );
}

/** The server's settings in the shape of a create body (the secret aside): what a merge patch applies to. */
export function editableOf(s: McpServer): Json {
  const view = mcpServerJson(s, '');
  const oauth = view.oauth && {
    ...compact({ ...view.oauth, client_secret_set: undefined, client_secret_set_at: undefined }),
    ...(Object.keys(view.oauth.extra_authorize_params).length === 0 ? {} : { extra_authorize_params: view.oauth.extra_authorize_params }),
  };
  const policy = compact({ ...view.tool_policy });
  return compact({
    name: view.name,
    url: view.url,
    mcp_path: view.mcp_path,
    description: view.description,
    scopes: view.scopes,
    authorization_server: view.authorization_server,
    oauth,
    tool_policy: Object.keys(policy).length > 0 ? policy : undefined,
    enabled: view.enabled,
    shared: view.shared,
  });
}

/** RFC 7396: objects merge, null removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Json = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Json) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/**
 * The McpServer a create or update sends: `sealed` is the client secret's envelope (new or kept),
 * or '' for none. A token endpoint method that needs a secret without one is a 422.
 */
export function serverMessage(body: CreateMcpServerBody, sealed: string, integration = ''): MessageInitShape<typeof McpServerSchema> {
  const o = body.oauth;
  let auth: MessageInitShape<typeof McpServerAuthSchema> = { kind: McpAuthKind.NONE };
  if (o) {
    const method = o.token_endpoint_auth_method ?? (sealed ? 'client_secret_basic' : 'none');
    if (method !== 'none' && !sealed) {
      throw new RequestValidationError([
        { type: 'value_error', loc: ['body', 'oauth', 'client_secret'], msg: `${method} needs client_secret` },
      ]);
    }
    auth = {
      kind: McpAuthKind.UPSTREAM_OAUTH,
      upstreamOauth: {
        issuer: o.issuer?.replace(/\/+$/, '') ?? '',
        authorizationEndpoint: o.authorization_endpoint ?? '',
        tokenEndpoint: o.token_endpoint ?? '',
        clientId: o.client_id,
        sealedClientSecret: sealed,
        tokenEndpointAuthMethod: method,
        scopes: o.scopes ?? [],
        resource: o.resource ?? '',
        audience: o.audience ?? '',
        extraAuthorizeParams: o.extra_authorize_params ?? {},
      },
    };
  } else if (body.authorization_server === 'platform') {
    auth = { kind: McpAuthKind.PLATFORM };
  } else if (body.authorization_server) {
    auth = { kind: McpAuthKind.EXTERNAL, authorizationServer: body.authorization_server.replace(/\/+$/, '') };
  }
  return {
    name: body.name,
    description: body.description ?? '',
    url: body.url,
    mcpPath: body.mcp_path ?? 'mcp',
    scopes: body.scopes ?? [],
    auth,
    enabled: body.enabled ?? true,
    shared: body.shared ?? false,
    toolPolicy: { allow: body.tool_policy?.allow ?? [], deny: body.tool_policy?.deny ?? [] },
    integration,
  };
}

export function sealClientSecret(kek: KeyEncryption, serverName: string, secret: string | undefined): string {
  return secret ? kek.seal(secret, upstreamSecretContext(serverName)) : '';
}
