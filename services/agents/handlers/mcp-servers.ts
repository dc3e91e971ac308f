// The MCP servers of the gateway's registry managed through the Agents API. A server belongs to
// the organization that created it; a shared one (created by the operator's organization, which
// the edge checks) is visible to every organization and changed only by its own. Names are global
// (they are URL paths of the gateway) and fixed. Secrets arrive sealed by the edge and are stored
// as they are. Every change moves the registry version the gateway replicas poll.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CreateMcpServerResponseSchema,
  DeleteMcpServerResponseSchema,
  FindMcpServerResponseSchema,
  GetMcpServerResponseSchema,
  ListMcpServersResponseSchema,
  McpAuthKind,
  McpServerSchema,
  UpdateMcpServerResponseSchema,
  type CreateMcpServerRequest,
  type DeleteMcpServerRequest,
  type FindMcpServerRequest,
  type GetMcpServerRequest,
  type ListMcpServersRequest,
  type McpServer,
  type UpdateMcpServerRequest,
} from '../../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { UniqueViolationError } from '../../common/storage/records/errors.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { bumpRegistryVersion, type RegistryVersionRecord } from './gateway-registry.ts';
import { newId } from './organizations.ts';
import { requireServerName, requireSettings, type McpServerSettings } from './mcp-server-settings.ts';

export interface McpServerRecord extends RecordDoc, McpServerSettings {
  organizationId: string;
  /** The organization id, or `*` for a shared server: what a listing filters on. */
  visibleTo: string;
  name: string;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  version: number;
}

export interface McpServersContext {
  servers: RecordCollection<McpServerRecord>;
  state: RecordCollection<RegistryVersionRecord>;
  now: () => number;
}

const SERVER_ID = /^mcs_[A-Za-z0-9]{1,60}$/;
const MAX_SERVERS_PER_ORGANIZATION = 100;
const SHARED = '*';

const KIND_BY_NAME = {
  none: McpAuthKind.NONE,
  upstream_oauth: McpAuthKind.UPSTREAM_OAUTH,
  external: McpAuthKind.EXTERNAL,
  platform: McpAuthKind.PLATFORM,
} as const;

export function toMcpServer(r: McpServerRecord): McpServer {
  const up = r.auth.upstream;
  return create(McpServerSchema, {
    serverId: r._id,
    organizationId: r.organizationId,
    shared: r.shared,
    name: r.name,
    description: r.description,
    url: r.url,
    mcpPath: r.mcpPath,
    scopes: r.scopes,
    auth: {
      kind: KIND_BY_NAME[r.auth.kind],
      authorizationServer: r.auth.authorizationServer ?? '',
      upstreamOauth: up && {
        issuer: up.issuer,
        authorizationEndpoint: up.authorizationEndpoint,
        tokenEndpoint: up.tokenEndpoint,
        clientId: up.clientId,
        sealedClientSecret: up.sealedClientSecret ?? '',
        clientSecretSetTime: up.clientSecretSetAt === undefined ? undefined : timestampFromMs(up.clientSecretSetAt),
        tokenEndpointAuthMethod: up.tokenEndpointAuthMethod,
        scopes: up.scopes,
        resource: up.resource ?? '',
        audience: up.audience ?? '',
        extraAuthorizeParams: Object.fromEntries(up.extraAuthorizeParams),
      },
    },
    enabled: r.enabled,
    toolPolicy: r.toolPolicy,
    integration: r.integration,
    createdBy: r.createdBy,
    etag: String(r.version),
    createTime: timestampFromMs(r.createdAt),
    updateTime: timestampFromMs(r.updatedAt),
  });
}

/** The organization's own server (for changes), or one it may see (for reads). */
async function findServer(ctx: McpServersContext, organizationId: string, serverId: string, change: boolean): Promise<McpServerRecord> {
  if (!SERVER_ID.test(serverId)) invalid('server_id', 'is not a server id (mcs_...)');
  const server = await ctx.servers.get(serverId);
  const visible = server && (server.organizationId === organizationId || server.shared);
  if (!server || !visible) throw new ConnectError(`MCP server "${serverId}" does not exist`, Code.NotFound);
  if (change && server.organizationId !== organizationId) {
    throw new ConnectError(`MCP server "${server.name}" is shared by the operator; only the operator changes it`, Code.PermissionDenied);
  }
  return server;
}

async function putServer(ctx: McpServersContext, server: McpServerRecord, expect: null | { version: number }): Promise<boolean> {
  try {
    const written = await ctx.servers.put(server, { expect });
    if (written) await bumpRegistryVersion(ctx.state);
    return written;
  } catch (err) {
    if (err instanceof UniqueViolationError) throw new ConnectError(`an MCP server named "${server.name}" exists`, Code.AlreadyExists);
    throw err;
  }
}

/** A new secret is timed now; the same sealed value keeps its time. */
function withSecretTime(next: McpServerSettings, previous: McpServerSettings | undefined, now: number): McpServerSettings {
  const up = next.auth.upstream;
  if (!up) return next;
  const before = previous?.auth.upstream;
  const same = before?.sealedClientSecret === up.sealedClientSecret;
  const clientSecretSetAt = up.sealedClientSecret ? (same ? before?.clientSecretSetAt : now) : undefined;
  return { ...next, auth: { ...next.auth, upstream: { ...up, clientSecretSetAt } } };
}

export async function createMcpServer(ctx: McpServersContext, req: CreateMcpServerRequest) {
  const organizationId = requireOrganization(req.organizationId);
  if (!req.server) invalid('server', 'is required');
  const settings = requireSettings(req.server);
  const name = requireServerName(req.server.name);
  const createdBy = requireText('created_by', req.createdBy, 200);
  if ((await ctx.servers.count({ organizationId })) >= MAX_SERVERS_PER_ORGANIZATION) {
    throw new ConnectError(`an organization may hold at most ${MAX_SERVERS_PER_ORGANIZATION} MCP servers`, Code.ResourceExhausted);
  }
  const now = ctx.now();
  const record: McpServerRecord = {
    _id: newId('mcs'),
    organizationId,
    visibleTo: settings.shared ? SHARED : organizationId,
    name,
    ...withSecretTime(settings, undefined, now),
    createdBy,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  await putServer(ctx, record, null);
  return create(CreateMcpServerResponseSchema, { server: toMcpServer(record) });
}

export async function getMcpServer(ctx: McpServersContext, req: GetMcpServerRequest) {
  const server = await findServer(ctx, requireOrganization(req.organizationId), req.serverId, false);
  return create(GetMcpServerResponseSchema, { server: toMcpServer(server) });
}

export async function listMcpServers(ctx: McpServersContext, req: ListMcpServersRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(ctx.servers, { visibleTo: { $in: [organizationId, SHARED] } }, req, {
    field: 'createdAt',
    scope: `mcp-servers:${organizationId}`,
  });
  return create(ListMcpServersResponseSchema, { servers: page.items.map(toMcpServer), nextPageToken: page.nextPageToken });
}

export async function updateMcpServer(ctx: McpServersContext, req: UpdateMcpServerRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const current = await findServer(ctx, organizationId, req.serverId, true);
  if (!req.server) invalid('server', 'is required');
  if (req.server.name !== '' && req.server.name !== current.name) invalid('server.name', 'cannot change: create a new server instead');
  if (req.etag !== '' && req.etag !== String(current.version)) {
    throw failure('the MCP server changed since it was read (If-Match): read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
  const settings = requireSettings(req.server);
  const now = ctx.now();
  const next: McpServerRecord = {
    ...current,
    ...withSecretTime(settings, current, now),
    visibleTo: settings.shared ? SHARED : organizationId,
    updatedAt: now,
    version: current.version + 1,
  };
  if (!(await putServer(ctx, next, { version: current.version }))) {
    throw failure('the MCP server changed since it was read: read it again', Code.FailedPrecondition, REASONS.etagMismatch);
  }
  return create(UpdateMcpServerResponseSchema, { server: toMcpServer(next) });
}

export async function deleteMcpServer(ctx: McpServersContext, req: DeleteMcpServerRequest) {
  const server = await findServer(ctx, requireOrganization(req.organizationId), req.serverId, true);
  if (await ctx.servers.delete(server._id)) await bumpRegistryVersion(ctx.state);
  return create(DeleteMcpServerResponseSchema, {});
}

export async function findMcpServer(ctx: McpServersContext, req: FindMcpServerRequest) {
  const name = requireServerName(req.name);
  const [server] = await ctx.servers.find({ name }, { limit: 1 });
  if (!server) throw new ConnectError(`no MCP server is named "${name}"`, Code.NotFound);
  return create(FindMcpServerResponseSchema, { server: toMcpServer(server) });
}
