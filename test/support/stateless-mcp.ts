// An MCP server of the SDK's served as the SDK's stateless Streamable HTTP example does: a new
// server and transport for each POST to /mcp, JSON answers, both closed with the response. The
// tests' MCP backends (ops-mcp-server.ts, collecting-mcp-server.ts, gateway-backends.ts) build
// their tools and serve them through this one handler.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, Response } from 'express';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** The express handler of POST /mcp: answers one request with a server `build` makes for it. */
export function statelessMcpHandler(build: () => McpServer): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => {
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
}

export interface StatelessMcpServer {
  /** The backend URL to register (its MCP endpoint is /mcp). */
  url: string;
  close(): Promise<void>;
}

/** Serves the servers `build` makes at /mcp on 127.0.0.1, port 0. */
export async function startStatelessMcpServer(build: () => McpServer): Promise<StatelessMcpServer> {
  const app = createMcpExpressApp();
  app.post('/mcp', statelessMcpHandler(build));
  const httpServer = http.createServer(app);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`,
    close: async () => {
      httpServer.closeAllConnections();
      await new Promise((resolve) => httpServer.close(resolve));
    },
  };
}
