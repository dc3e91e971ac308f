// The Brain MCP server at `{base_url}/brain/mcp`: Streamable HTTP, stateless. Each POST gets a
// fresh McpServer and transport (no session id), so any replica can serve any request and no
// sticky sessions are needed. Authentication is a bearer JWT of the platform's authorization
// server, verified locally (signature, issuer, audience = this MCP URL, expiry) and checked
// against revocation by ctx.tokens; the organization comes from the token.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AppContext } from '../context.ts';
import { buildChallenge, type LocalHandler, type LocalRequest } from '../gateway/registry.ts';
import { BodyTooLargeError, readBody } from '../http/respond.ts';
import { InvalidTokenError, type AccessTokenClaims } from '../oauth/verify.ts';
import { SERVER_INSTRUCTIONS } from './brain-tool-definitions.ts';
import { registerBrainTools, type ToolCaller } from './brain-tools.ts';
import { GRAPH_TOOL_NAMES } from './graph-tool-definitions.ts';
import { registerGraphTools } from './graph-tools.ts';

export const BRAIN_MCP_VERSION = '1.0.0';
/** Header naming the organization when the operator's infrastructure calls with X-Gateway-Key. */
export const ORGANIZATION_HEADER = 'x-mindgate-organization';

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(body);
}

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+([^\s]+)\s*$/i.exec(header);
  return match?.[1];
}

type Caller = ToolCaller;

/** Creates the handler the gateway mounts for the `brain` server (registry.mountLocal). */
export function createBrainMcpHandler(ctx: AppContext): LocalHandler {
  const logger = ctx.logger.child({ component: 'brain-mcp' });

  async function authenticate(request: LocalRequest): Promise<Caller | undefined> {
    const { req, res, server } = request;
    if (request.auth === 'gateway-key') {
      // The operator's own infrastructure: the gateway checked the key; it names the organization.
      const org = req.headers[ORGANIZATION_HEADER];
      if (typeof org !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(org)) {
        jsonRpcError(res, 400, -32600, `Requests with X-Gateway-Key must name the organization in ${ORGANIZATION_HEADER}.`);
        return undefined;
      }
      return { organizationId: org, clientId: 'gateway-key', userId: '' };
    }
    const token = bearer(req);
    const challenge = (error: string, description: string) =>
      buildChallenge(server.resourceMetadataUrl, server.config.scopes, { error, error_description: description });
    if (!token) {
      jsonRpcError(res, 401, -32001, 'An access token is required.', {
        'www-authenticate':
          token === undefined && !req.headers.authorization
            ? server.challenge
            : challenge('invalid_request', 'the Authorization header is not a bearer token'),
      });
      return undefined;
    }
    let claims: AccessTokenClaims;
    try {
      claims = await ctx.tokens.verify(token, server.resource);
    } catch (err) {
      if (err instanceof InvalidTokenError) {
        jsonRpcError(res, 401, -32001, `Unauthorized: ${err.message}.`, { 'www-authenticate': challenge('invalid_token', err.message) });
        return undefined;
      }
      throw err;
    }
    return {
      organizationId: claims.organizationId,
      clientId: claims.clientId,
      userId: claims.subject,
      clientName: claims.clientName,
      userName: claims.userName,
    };
  }

  return async (request) => {
    const { req, res } = request;
    if (req.method !== 'POST') {
      // Stateless: no standalone SSE stream (GET) and no session to delete (DELETE).
      const caller = await authenticate(request);
      if (!caller) return;
      jsonRpcError(res, 405, -32000, 'Method not allowed: this server is stateless; send JSON-RPC with POST.', { allow: 'POST' });
      return;
    }
    if (request.path !== '/mcp' && request.path !== '/mcp/') {
      jsonRpcError(res, 404, -32601, `Not found: the Brain MCP endpoint is ${request.server.resource}.`);
      return;
    }
    const caller = await authenticate(request);
    if (!caller) return;

    let body: unknown;
    try {
      const raw = await readBody(req, request.maxBodyBytes);
      body = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      if (err instanceof BodyTooLargeError)
        return jsonRpcError(res, 413, -32600, `The request body exceeds ${request.maxBodyBytes} bytes.`);
      return jsonRpcError(res, 400, -32700, 'Parse error: the body is not JSON.');
    }

    const server = new McpServer(
      { name: 'mindgate-brain', title: 'Mindgate Brain', version: BRAIN_MCP_VERSION },
      { instructions: SERVER_INSTRUCTIONS, capabilities: { tools: { listChanged: false } } },
    );
    registerBrainTools(server, ctx.clients.brain, caller);
    if (await hasEntityGraph(ctx, caller.organizationId)) registerGraphTools(server, ctx.clients.entityGraph, caller.organizationId);
    else {
      const refused = refusedGraphCall(body);
      if (refused) return refuseGraphCall(res, refused);
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (err) {
      logger.error({ requestId: request.requestId, err }, 'brain MCP request failed');
      if (!res.headersSent) jsonRpcError(res, 500, -32603, 'Internal error.');
    }
  };
}

/**
 * Whether the organization's plan includes the entity graph (Professional, and its trial), as the
 * billing service says now: an expired trial loses the tools on the next request.
 */
async function hasEntityGraph(ctx: AppContext, organizationId: string): Promise<boolean> {
  const { entitlements } = await ctx.clients.billing.getEntitlements({ organizationId });
  return entitlements?.entityGraph === true;
}

/** A tools/call of an entity-graph tool by an organization whose plan lacks it: a clear tool error, not "unknown tool". */
function refusedGraphCall(body: unknown): { id: unknown; name: string } | undefined {
  const message = body as { method?: unknown; id?: unknown; params?: { name?: unknown } };
  if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') return undefined;
  return (GRAPH_TOOL_NAMES as readonly string[]).includes(message.params.name) ? { id: message.id, name: message.params.name } : undefined;
}

function refuseGraphCall(res: ServerResponse, call: { id: unknown; name: string }): void {
  const text =
    `${call.name} needs the entity graph, which this organization's plan does not include: it comes with the Professional plan ` +
    '(and its trial). Use recall_context and search_memories instead, or ask an owner of the organization to upgrade.';
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: { isError: true, content: [{ type: 'text', text }] } }));
}
