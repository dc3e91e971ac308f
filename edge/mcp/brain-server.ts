// The Brain MCP server at `{base_url}/brain/mcp`: Streamable HTTP, stateless. Each POST gets a
// fresh McpServer and transport (no session id), so any replica can serve any request and no
// sticky sessions are needed. Authentication is a bearer JWT of the platform's authorization
// server, verified locally (signature, issuer, audience = this MCP URL, expiry) and checked
// against revocation by ctx.tokens, or an API key of the organization (x-api-key, as at the
// Agents API); the organization comes from the credential. What the caller may reach of the
// organization's memory (its teams' Brain access, a key's scope and team) travels to the brain
// service with every call (brain-access.ts), which enforces it.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AppContext } from '../context.ts';
import type { LocalHandler } from '../gateway/registry.ts';
import { BodyTooLargeError, readBody } from '../http/respond.ts';
import { narrowedBrain, resolveMemoryAccess } from './brain-access.ts';
import { type Caller, createBrainAuthenticator, jsonRpcError } from './brain-auth.ts';
import { SERVER_INSTRUCTIONS } from './brain-tool-definitions.ts';
import { registerBrainTools } from './brain-tools.ts';

export const BRAIN_MCP_VERSION = '1.0.0';
export { ORGANIZATION_HEADER } from './brain-auth.ts';

/** Creates the handler the gateway mounts for the `brain` server (registry.mountLocal). */
export function createBrainMcpHandler(ctx: AppContext): LocalHandler {
  const logger = ctx.logger.child({ component: 'brain-mcp' });
  const authenticate = createBrainAuthenticator(ctx);

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
    const brain = narrowedBrain(ctx.clients.brain, await resolveMemoryAccess(ctx, caller.access));
    registerBrainTools(server, brain, caller);
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
