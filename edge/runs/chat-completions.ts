// A model reached over the OpenAI chat-completions wire protocol (`POST …/chat/completions` with
// tools), which OpenAI, Azure-style proxies, LiteLLM, vLLM, Ollama and most providers speak.
//
// Endpoint rule, as for embeddings: a URL whose path ends in `/chat/completions` is used as it is;
// a URL with no path gets `/v1/chat/completions`; any other path is the API base and gets
// `/chat/completions`. 408, 429 and 5xx answers, timeouts and network errors are retried twice,
// after the delay the server asks for (capped) or a doubling backoff; other answers fail at once.
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

export interface ToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface Completion {
  message: Extract<ChatMessage, { role: 'assistant' }>;
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export interface ChatModel {
  complete(messages: ChatMessage[], tools: ToolDefinition[], signal: AbortSignal): Promise<Completion>;
}

/** The provider failed or answered something unusable. */
export class ChatCompletionError extends Error {
  readonly status?: number;
  constructor(message: string, status?: number) {
    super(message);
    this.name = 'ChatCompletionError';
    this.status = status;
  }
}

const Answer = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullable().optional(),
          tool_calls: z
            .array(
              z.object({
                id: z.string(),
                type: z.literal('function').optional(),
                function: z.object({ name: z.string(), arguments: z.string() }),
              }),
            )
            .nullable()
            .optional(),
        }),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: z.number().optional(), completion_tokens: z.number().optional() }).nullable().optional(),
});

export function chatCompletionsEndpoint(url: string): string {
  const parsed = new URL(url);
  const path = parsed.pathname.replace(/\/+$/, '');
  if (path.endsWith('/chat/completions')) parsed.pathname = path;
  else if (path === '') parsed.pathname = '/v1/chat/completions';
  else parsed.pathname = `${path}/chat/completions`;
  return parsed.href;
}

const RETRIES = 2;
const MAX_DELAY_MS = 20_000;
const retriable = (status: number) => status === 408 || status === 429 || status >= 500;

function delayOf(res: Response | undefined, attempt: number): number {
  const asked = Number(res?.headers.get('retry-after'));
  return Math.min(Number.isFinite(asked) && asked > 0 ? asked * 1000 : 500 * 2 ** attempt, MAX_DELAY_MS);
}

export interface ChatModelOptions {
  url: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
}

async function post(endpoint: string, options: ChatModelOptions, body: string, signal: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  return fetch(endpoint, { method: 'POST', headers, body, signal: AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs)]) });
}

function parse(json: unknown, fallbackModel: string): Completion {
  const answer = Answer.safeParse(json);
  if (!answer.success) throw new ChatCompletionError('the model answered something that is not a chat completion');
  const { message } = answer.data.choices[0]!;
  const toolCalls = (message.tool_calls ?? []).map((c) => ({ id: c.id, type: 'function' as const, function: c.function }));
  return {
    message: { role: 'assistant', content: message.content ?? null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
    model: answer.data.model ?? fallbackModel,
    inputTokens: answer.data.usage?.prompt_tokens ?? 0,
    outputTokens: answer.data.usage?.completion_tokens ?? 0,
  };
}

export function createChatModel(options: ChatModelOptions): ChatModel {
  const endpoint = chatCompletionsEndpoint(options.url);
  return {
    async complete(messages, tools, signal) {
      const body = JSON.stringify({ model: options.model, messages, ...(tools.length > 0 ? { tools } : {}) });
      for (let attempt = 0; ; attempt += 1) {
        let res: Response | undefined;
        try {
          res = await post(endpoint, options, body, signal);
        } catch (err) {
          if (signal.aborted || attempt >= RETRIES) throw new ChatCompletionError(`the model did not answer: ${(err as Error).message}`);
        }
        if (res?.ok) return parse(await res.json().catch(() => undefined), options.model);
        if (res && (!retriable(res.status) || attempt >= RETRIES)) {
          const text = (await res.text().catch(() => '')).slice(0, 500);
          throw new ChatCompletionError(`the model answered ${res.status}: ${text}`, res.status);
        }
        await res?.body?.cancel();
        await sleep(delayOf(res, attempt), undefined, { signal });
      }
    },
  };
}
