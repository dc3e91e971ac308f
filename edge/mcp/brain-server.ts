// The Brain MCP server at `{base_url}/brain/mcp`: Streamable HTTP, stateless. Each POST gets a
// fresh McpServer and transport (no session id), so any replica can serve any request and no
// sticky sessions are needed. Authentication is a bearer JWT of the platform's authorization
// server, verified locally (signature, issuer, audience = this MCP URL, expiry) and checked
// against revocation by ctx.tokens, or an API key of the organization (x-api-key, as at the
// Agents API); the organization comes from the credential. What the caller may reach of the
// organization's memory (its teams' Brain access, a key's scope and team) travels to the brain
// service with every call (brain-access.ts), which enforces it.
import type { ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { graphPlanRefusal, planWithoutGraph } from '../graph-plan.ts';
import type { AppContext } from '../context.ts';
import type { LocalHandler } from '../gateway/registry.ts';
import { BodyTooLargeError, readBody } from '../http/respond.ts';
import { narrowedBrain, resolveMemoryAccess } from './brain-access.ts';
import { createBrainAuthenticator, jsonRpcError } from './brain-auth.ts';
import { SERVER_INSTRUCTIONS } from './brain-tool-definitions.ts';
import { registerBrainTools } from './brain-tools.ts';
import { GRAPH_TOOL_NAMES } from './graph-tool-definitions.ts';
import { registerGraphTools } from './graph-tools.ts';

export const BRAIN_MCP_VERSION = '1.0.0';
export { ORGANIZATION_HEADER } from './brain-auth.ts';

/** Creates the handler the gateway mounts for the `brain` server (registry.mountLocal). */
export function createBrainMcpHandler(ctx: AppContext): LocalHandler {
  const logger = ctx.logger.child({ component: 'brain-mcp' });
  const authenticate = createBrainAuthenticator(ctx);
  // The SDK builds a JSON Schema validator (a new Ajv with its formats) for every server it does
  // not hand one: once per request here, a tenth of a search's CPU in a profile. One serves all.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();

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
      { instructions: SERVER_INSTRUCTIONS, capabilities: { tools: { listChanged: false } }, jsonSchemaValidator },
    );
    const access = await resolveMemoryAccess(ctx, caller.access);
    registerBrainTools(server, narrowedBrain(ctx.clients.brain, access), caller);
    // The graph spans the whole organization's memory (its citations name memories): a caller
    // narrowed to part of it does not get the graph tools.
    const graphRefusal = access?.restricted ? NARROWED_REFUSAL : await planRefusal(ctx, caller.organizationId);
    if (!graphRefusal) registerGraphTools(server, ctx.clients.entityGraph, caller.organizationId);
    else {
      const refused = refusedGraphCall(body);
      if (refused) return refuseGraphCall(res, refused, graphRefusal);
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

const NARROWED_REFUSAL =
  "which spans the whole organization's memory, while your access is narrowed to part of it (team Brain access). " +
  'Use recall_context and search_memories instead.';

/**
 * Why the graph tools are withheld by the organization's plan, or undefined when it includes the
 * entity graph (Professional, and its trial), as the billing service says now: an expired trial
 * loses the tools on the next request.
 */
async function planRefusal(ctx: AppContext, organizationId: string): Promise<string | undefined> {
  const plan = await planWithoutGraph(ctx, organizationId);
  return plan === undefined ? undefined : graphPlanRefusal(plan);
}

/** A tools/call of an entity-graph tool by an organization whose plan lacks it: a clear tool error, not "unknown tool". */
function refusedGraphCall(body: unknown): { id: unknown; name: string } | undefined {
  const message = body as { method?: unknown; id?: unknown; params?: { name?: unknown } };
  if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') return undefined;
  return (GRAPH_TOOL_NAMES as readonly string[]).includes(message.params.name) ? { id: message.id, name: message.params.name } : undefined;
}

function refuseGraphCall(res: ServerResponse, call: { id: unknown; name: string }, why: string): void {
  const text = `${call.name} needs the entity graph, ${why}`;
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: { isError: true, content: [{ type: 'text', text }] } }));
}
