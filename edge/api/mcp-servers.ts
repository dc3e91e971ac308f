// The REST API's MCP servers: the gateway's servers an organization manages (and the operator's
// shared ones it may use), each a call to the agents service's McpServersService. A server is
// validated as an entry of the gateway's servers file is; every replica's gateway serves a change
// within about GATEWAY_REGISTRY_POLL_MS. docs/api.md, "MCP servers and integrations".
import { Code, ConnectError } from '@connectrpc/connect';
import type * as z from 'zod';
import type { McpServer } from '../../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { defineApiRoute } from '../http/api-route.ts';
import { sendJson } from '../http/respond.ts';
import { validate } from '../http/validation.ts';
import { callerOf } from './access.ts';
import { ForbiddenError } from './auth.ts';
import { ETAG_HEADER, ifMatch, quoteEtag } from './etag.ts';
import { editableOf, mcpServerJson, mergePatch, sealClientSecret, serverMessage } from './mcp-server-json.ts';
import {
  CreateMcpServerSchema,
  McpServerSchema,
  serverParams,
  UpdateMcpServerSchema,
  type CreateMcpServerBody,
} from './mcp-server-schemas.ts';
import { checkBackendAddresses } from './mcp-server-addresses.ts';
import { testMcpServerRoute } from './mcp-server-test.ts';
import {
  ConflictError,
  errors,
  json,
  listEnvelope,
  listing,
  notFoundAs404,
  orgParams,
  pageArgs,
  pageQuery,
  readJson,
  sendPage,
  type RestRoute,
  type RouteDeps,
} from './rest-route.ts';

const tags = ['MCP servers'];
const withEtag = (description: string) => ({ ...json(McpServerSchema, description), headers: ETAG_HEADER });

/** Checks what only the edge knows: who may share, names the servers file holds, backend addresses. */
export async function checkServerBody(deps: RouteDeps, organizationId: string, body: CreateMcpServerBody): Promise<void> {
  const { ctx } = deps;
  if (body.shared && organizationId !== ctx.config.api.operatorOrganizationId) {
    throw new ForbiddenError("only the operator's organization shares MCP servers (OPERATOR_ORGANIZATION_ID)");
  }
  if (ctx.config.gateway.servers.some((s) => s.name === body.name)) {
    throw new ConflictError(`the gateway's servers file has a server named "${body.name}"`);
  }
  if (!body.shared) await checkBackendAddresses(ctx.config.gateway, body);
}

/** Creates a server from a body (checked here); shared by createMcpServer and installIntegration. */
export async function createServer(
  deps: RouteDeps,
  target: { organizationId: string; createdBy: string },
  body: CreateMcpServerBody,
  integration = '',
): Promise<McpServer> {
  const { organizationId, createdBy } = target;
  const { ctx } = deps;
  await checkServerBody(deps, organizationId, body);
  const sealed = sealClientSecret(ctx.keyEncryption, body.name, body.oauth?.client_secret);
  try {
    const res = await ctx.clients.mcpServers.createMcpServer({
      organizationId,
      server: serverMessage(body, sealed, integration),
      createdBy,
    });
    return res.server!;
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.ResourceExhausted) throw new ConflictError(err.rawMessage);
    throw err;
  }
}

export function sendServer(deps: RouteDeps, res: Parameters<typeof sendJson>[0], status: number, server: McpServer): void {
  sendJson(res, status, mcpServerJson(server, deps.ctx.config.publicUrls.gateway), { etag: quoteEtag(server.etag) });
}

function createRoute(deps: RouteDeps): RestRoute {
  return {
    ...defineApiRoute({
      method: 'POST',
      path: '/organizations/:organization_id/mcp-servers',
      operationId: 'createMcpServer',
      summary: 'Register an MCP server',
      description:
        "Adds a server to the gateway, validated as an entry of the gateway's servers file is. The name is the server's URL on the gateway, unique on the platform and fixed. `oauth.client_secret` is sealed at rest and never returned. Only the organization may use the server, unless the operator's organization shares it (`shared`).",
      tags,
      params: orgParams,
      responses: { '201': withEtag('The server.'), '401': errors['401'], '403': errors['403'], '409': 'Conflict', '422': errors['422'] },
      handler: async (c) => {
        const body = await readJson(c, CreateMcpServerSchema, deps.limit);
        const target = { organizationId: c.input.params.organization_id, createdBy: callerOf(c).subject };
        sendServer(deps, c.res, 201, await createServer(deps, target, body));
      },
    }),
    body: CreateMcpServerSchema,
    creates: true,
  };
}

function listRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/mcp-servers',
    operationId: 'listMcpServers',
    summary: 'List MCP servers',
    description: "The organization's servers and the operator's shared ones, oldest first (the gateway's servers file is not listed).",
    tags,
    params: orgParams,
    query: pageQuery,
    responses: {
      '200': json(listEnvelope('mcp_servers', McpServerSchema, 'McpServerList'), 'One page of servers.'),
      '401': errors['401'],
      '403': errors['403'],
      '422': errors['422'],
    },
    handler: async (c) => {
      const res = await listing(() =>
        ctx.clients.mcpServers.listMcpServers({ organizationId: c.input.params.organization_id, ...pageArgs(c.input.query) }),
      );
      const gateway = ctx.config.publicUrls.gateway;
      sendPage(
        c,
        'mcp_servers',
        res.servers.map((s) => mcpServerJson(s, gateway)),
        res.nextPageToken,
      );
    },
  });
}

function getRoute(deps: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'GET',
    path: '/organizations/:organization_id/mcp-servers/:server_id',
    operationId: 'getMcpServer',
    summary: 'Get an MCP server',
    tags,
    params: serverParams,
    responses: { '200': withEtag('The server.'), '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
    handler: async (c) => {
      const { organization_id: organizationId, server_id: serverId } = c.input.params;
      const { server } = await notFoundAs404(() => deps.ctx.clients.mcpServers.getMcpServer({ organizationId, serverId }));
      sendServer(deps, c.res, 200, server!);
    },
  });
}

/** The patched server's message; the client secret is kept unless the patch sets or removes it. */
function patched(deps: RouteDeps, current: McpServer, patch: z.output<typeof UpdateMcpServerSchema>) {
  const { client_secret: secret, ...oauth } = patch.oauth ?? {};
  const merged = mergePatch(editableOf(current), patch.oauth ? { ...patch, oauth } : patch);
  const body = validate(CreateMcpServerSchema, merged, 'body');
  let sealed = '';
  if (body.oauth && typeof secret === 'string') sealed = sealClientSecret(deps.ctx.keyEncryption, current.name, secret);
  else if (body.oauth && secret === undefined) sealed = current.auth?.upstreamOauth?.sealedClientSecret ?? '';
  return { body, message: serverMessage(body, sealed, current.integration) };
}

function updateRoute(deps: RouteDeps): RestRoute {
  const { ctx, limit } = deps;
  return {
    ...defineApiRoute({
      method: 'PATCH',
      path: '/organizations/:organization_id/mcp-servers/:server_id',
      operationId: 'updateMcpServer',
      summary: 'Change an MCP server',
      description:
        'A JSON merge patch (RFC 7396) of the settings: enable or disable it (`enabled`), restrict its tools (`tool_policy`), change its backend or its OAuth settings. `If-Match` applies it only to the version read.',
      tags,
      params: serverParams,
      responses: {
        '200': withEtag('The server as changed.'),
        '401': errors['401'],
        '403': errors['403'],
        '404': 'NotFound',
        '409': 'Conflict',
        '412': 'PreconditionFailed',
        '422': errors['422'],
      },
      handler: async (c) => {
        const { organization_id: organizationId, server_id: serverId } = c.input.params;
        const wanted = ifMatch(c.req.headers['if-match']);
        const patch = await readJson(c, UpdateMcpServerSchema, limit);
        // Without If-Match the patch applies to the current version: read, merge and write with
        // the version read, again when another change came in between.
        for (let attempt = 1; ; attempt++) {
          const { server: current } = await notFoundAs404(() => ctx.clients.mcpServers.getMcpServer({ organizationId, serverId }));
          const { body, message } = patched(deps, current!, patch);
          await checkServerBody(deps, organizationId, body);
          try {
            const res = await ctx.clients.mcpServers.updateMcpServer({
              organizationId,
              serverId,
              server: message,
              etag: wanted || current!.etag,
            });
            return sendServer(deps, c.res, 200, res.server!);
          } catch (err) {
            const stale = err instanceof ConnectError && err.code === Code.FailedPrecondition;
            if (!stale || wanted !== '' || attempt >= 3) throw err;
          }
        }
      },
    }),
    body: UpdateMcpServerSchema,
  };
}

function deleteRoute({ ctx }: RouteDeps): RestRoute {
  return defineApiRoute({
    method: 'DELETE',
    path: '/organizations/:organization_id/mcp-servers/:server_id',
    operationId: 'deleteMcpServer',
    summary: 'Remove an MCP server',
    description: 'Every gateway replica stops serving it within about GATEWAY_REGISTRY_POLL_MS; requests in flight finish.',
    tags,
    params: serverParams,
    responses: { '204': { description: 'Removed.' }, '401': errors['401'], '403': errors['403'], '404': 'NotFound', '422': errors['422'] },
    handler: async (c) => {
      const { organization_id: organizationId, server_id: serverId } = c.input.params;
      await notFoundAs404(() => ctx.clients.mcpServers.deleteMcpServer({ organizationId, serverId }));
      c.res.writeHead(204).end();
    },
  });
}

export function mcpServerRoutes(deps: RouteDeps): RestRoute[] {
  return [createRoute(deps), listRoute(deps), getRoute(deps), updateRoute(deps), deleteRoute(deps), testMcpServerRoute(deps)];
}
