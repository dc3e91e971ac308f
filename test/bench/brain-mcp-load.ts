// The load of the Brain MCP benchmark, in a process of its own as agents are: SDK clients call
// one tool `count` times, `concurrency` calls in flight, and the latency summary is printed as
// one JSON line. Run by brain-mcp.bench.ts (fork), so that the clients' own CPU (HTTP, JSON-RPC,
// the SDK's output validation) is not counted against the server's event loop.
// Message in: { url, token, tool, calls: arguments[], concurrency }; message out: LatencySummary.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { measure } from './support.ts';

interface Load {
  url: string;
  token: string;
  tool: string;
  calls: Record<string, unknown>[];
  concurrency: number;
}

process.once('message', async (load: Load) => {
  // One connection per caller in flight, as separate agents would have.
  const clients = await Promise.all(
    Array.from({ length: load.concurrency }, async () => {
      const client = new Client({ name: 'bench-load', version: '1.0.0' });
      const headers = { authorization: `Bearer ${load.token}` };
      await client.connect(new StreamableHTTPClientTransport(new URL(load.url), { requestInit: { headers } }));
      return client;
    }),
  );
  let free = [...clients];
  const summary = await measure(load.calls.length, load.concurrency, async (i) => {
    const client = free.pop()!;
    try {
      const r = await client.callTool({ name: load.tool, arguments: load.calls[i]! });
      if (r.isError) throw new Error(JSON.stringify(r.content));
    } finally {
      free.push(client);
    }
  });
  await Promise.all(clients.map((c) => c.close()));
  free = [];
  process.send!(summary, () => process.exit(0));
});
