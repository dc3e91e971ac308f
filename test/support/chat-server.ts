// A scripted model speaking the OpenAI chat-completions wire protocol, on port 0: each request is
// recorded and answered by the script (a completion, an HTTP error, or no answer at all, as a model
// that hangs). Tests script the model; the runner talks to it over real HTTP.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequest {
  model: string;
  messages: {
    role: string;
    content: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  tools?: { function: { name: string; description?: string; parameters?: Record<string, unknown> } }[];
  authorization?: string;
}

export type ChatReply =
  | { content: string }
  | { toolCalls: { id: string; name: string; arguments: unknown }[] }
  | { status: number; body?: string }
  | 'hang';

export interface ChatServer {
  url: string;
  requests: ChatRequest[];
  close(): Promise<void>;
}

function completion(reply: { content: string } | { toolCalls: { id: string; name: string; arguments: unknown }[] }, model: string) {
  const message =
    'content' in reply
      ? { role: 'assistant', content: reply.content }
      : {
          role: 'assistant',
          content: null,
          tool_calls: reply.toolCalls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.arguments) },
          })),
        };
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    model,
    choices: [{ index: 0, message, finish_reason: 'content' in reply ? 'stop' : 'tool_calls' }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  };
}

export async function startChatServer(script: (req: ChatRequest, index: number) => ChatReply): Promise<ChatServer> {
  const requests: ChatRequest[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
      const parsed = { ...(JSON.parse(body) as ChatRequest), authorization: req.headers.authorization };
      requests.push(parsed);
      const reply = script(parsed, requests.length - 1);
      if (reply === 'hang') return;
      if ('status' in reply) return void res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body ?? '{}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion(reply, parsed.model)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
