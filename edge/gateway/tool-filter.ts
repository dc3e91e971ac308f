// Applying a server's tool policy to MCP messages (JSON-RPC 2.0, single or batched): a `tools/call`
// of a tool the policy does not allow is answered by the gateway with a JSON-RPC error and never
// reaches the backend; a `tools/list` result (recognised by its shape, `result.tools`, so a result
// replayed on a resumed SSE stream is filtered too) loses the tools the policy does not allow, in
// JSON responses and in SSE events alike. Only the messages of servers that have a policy are
// parsed (proxy.ts); everything else passes byte for byte.
import { StringDecoder } from 'node:string_decoder';
import type { ToolPolicy } from './tool-policy.ts';

type Json = Record<string, unknown>;

/** Invalid params: what MCP servers answer for a tool they do not have. */
export const TOOL_NOT_ALLOWED = -32602;

export interface RequestVerdict {
  /** The body to send instead of the original (denied calls taken out of a batch); undefined: unchanged. */
  body?: Buffer;
  /** Errors the gateway answers for the denied calls. */
  denied: Json[];
  /** Nothing is left for the backend: the gateway answers alone. */
  answerAlone: boolean;
  /** The request was a batch (the answer is an array). */
  batch: boolean;
  /**
   * The answer must be read: it may hold a tools/list result, or the gateway's errors join it.
   * A POST's answer holds results of its own requests only, so a call alone streams through.
   */
  readsAnswer: boolean;
}

function deniedCall(message: unknown, policy: ToolPolicy): string | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as Json;
  if (m.method !== 'tools/call' || m.id === undefined) return undefined;
  const name = (m.params as Json | undefined)?.name;
  return typeof name === 'string' && !policy.allows(name) ? name : undefined;
}

export function toolNotAllowed(id: unknown, tool: string, server: string): Json {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: TOOL_NOT_ALLOWED, message: `Tool ${tool} is not available: the tool policy of server ${server} does not allow it.` },
  };
}

const BACKSLASH = 0x5c;

/** What to do with a request body bound for the server's MCP endpoint. */
export function inspectRequest(raw: Buffer, policy: ToolPolicy, server: string): RequestVerdict {
  // Most messages call no tool: a byte search spares them the parse. It is sound only without
  // escapes (`"tools\/call"` is the same JSON string), so a body with a backslash is parsed.
  const escaped = raw.indexOf(BACKSLASH) !== -1;
  const readsAnswer = escaped || raw.indexOf('tools/list') !== -1;
  if (!escaped && raw.indexOf('tools/call') === -1) return { denied: [], answerAlone: false, batch: false, readsAnswer };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    // Not JSON: the backend answers its parse error.
    return { denied: [], answerAlone: false, batch: false, readsAnswer: false };
  }
  const batch = Array.isArray(parsed);
  const messages = batch ? (parsed as unknown[]) : [parsed];
  const denied: Json[] = [];
  const kept: unknown[] = [];
  for (const message of messages) {
    const tool = deniedCall(message, policy);
    if (tool === undefined) kept.push(message);
    else denied.push(toolNotAllowed((message as Json).id, tool, server));
  }
  if (denied.length === 0) return { denied, answerAlone: false, batch, readsAnswer };
  if (kept.length === 0) return { denied, answerAlone: true, batch, readsAnswer: true };
  return { body: Buffer.from(JSON.stringify(kept)), denied, answerAlone: false, batch, readsAnswer: true };
}

/** Filters a tools/list result in place; true when it was one. */
export function filterMessage(message: unknown, policy: ToolPolicy): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const result = (message as Json).result as Json | undefined;
  if (!result || !Array.isArray(result.tools)) return false;
  result.tools = result.tools.filter((tool) => typeof (tool as Json)?.name !== 'string' || policy.allows((tool as Json).name as string));
  return true;
}

/** A JSON response body with tools/list results filtered and the gateway's errors added. */
export function filterJsonBody(raw: Buffer, policy: ToolPolicy, extra: Json[]): Buffer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    return raw;
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  let changed = extra.length > 0;
  for (const message of messages) changed = filterMessage(message, policy) || changed;
  if (!changed) return raw;
  return Buffer.from(JSON.stringify(extra.length > 0 ? [...messages, ...extra] : parsed));
}

/** An SSE event carrying one JSON-RPC message. */
export function sseEvent(message: Json): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

const EVENT_END = /\r\n\r\n|\n\n|\r\r/;

/**
 * Filters an SSE stream event by event: each complete event whose data is a tools/list result is
 * rewritten (its other fields, `id:` included, kept); every other event goes out as it came. An
 * event is held only until its end arrives, so events still flow one by one.
 */
export class SseToolFilter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private readonly policy: ToolPolicy;
  private readonly maxEventBytes: number;

  constructor(policy: ToolPolicy, maxEventBytes: number) {
    this.policy = policy;
    this.maxEventBytes = maxEventBytes;
  }

  /** The complete events of `chunk` (and what was held), filtered; throws past the event size cap. */
  push(chunk: Buffer): string {
    this.pending += this.decoder.write(chunk);
    let out = '';
    for (let match = EVENT_END.exec(this.pending); match; match = EVENT_END.exec(this.pending)) {
      const end = match.index + match[0].length;
      out += this.rewrite(this.pending.slice(0, match.index), match[0]);
      this.pending = this.pending.slice(end);
    }
    if (this.pending.length > this.maxEventBytes) throw new Error('an SSE event is larger than the gateway reads to apply the tool policy');
    return out;
  }

  /** Whatever is left at the end of the stream, as it is. */
  end(): string {
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    return rest;
  }

  private rewrite(event: string, terminator: string): string {
    const lines = event.split(/\r\n|\n|\r/);
    const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
    if (data.length === 0) return event + terminator;
    let message: unknown;
    try {
      message = JSON.parse(data.join('\n'));
    } catch {
      return event + terminator;
    }
    if (!filterMessage(message, this.policy)) return event + terminator;
    const others = lines.filter((l) => !l.startsWith('data:'));
    return [...others, `data: ${JSON.stringify(message)}`].join('\n') + terminator;
  }
}
