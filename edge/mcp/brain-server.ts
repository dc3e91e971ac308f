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
    await registerPlanTools(ctx, server, caller);
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
 * Tools that depend on the organization's plan. The entity-graph tools (explain_entity,
 * entity_path, affected_entities) are listed only with the entity-graph entitlement; they are
 * implemented by a later issue, so until then no organization gets them.
 */
const ENTITY_GRAPH_TOOLS_IMPLEMENTED = false;

async function registerPlanTools(ctx: AppContext, _server: McpServer, caller: Caller): Promise<void> {
  if (!ENTITY_GRAPH_TOOLS_IMPLEMENTED) return;
  const { entitlements } = await ctx.clients.billing.getEntitlements({ organizationId: caller.organizationId });
  if (!entitlements?.entityGraph) return;
  // registerEntityGraphTools(_server, ctx.clients.entityGraph, caller) — issue 6.
}
