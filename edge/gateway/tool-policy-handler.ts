// The proxy's response relay for the MCP endpoint of a server with a tool policy (tool-filter.ts):
// a JSON answer is read whole (up to GATEWAY_MAX_BODY_BYTES), filtered and sent with its new
// length; an SSE stream is filtered event by event as it flows; anything else passes as it is. The
// errors for denied calls of a batch join the backend's answer. An encoded answer (which the
// gateway does not ask for: it drops Accept-Encoding) cannot be read, so it is refused, not passed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../services/common/log.ts';
import { sendGatewayError } from './errors.ts';
import { ProxyHandler } from './proxy-handler.ts';
import type { GatewayServer } from './registry.ts';
import { filterJsonBody, SseToolFilter, sseEvent } from './tool-filter.ts';

export interface ToolPolicyRequest {
  /** The body to forward (denied calls of a batch taken out); undefined: the client's, streamed. */
  body?: Buffer;
  /** The gateway's errors for denied calls, added to the answer. */
  denied: Record<string, unknown>[];
  /** The request was a batch. */
  batch: boolean;
  /** The answer is read and filtered (ToolPolicyHandler); otherwise it streams through as it is. */
  readsAnswer: boolean;
}

function headerOf(headers: string[], name: string): string | undefined {
  for (let i = 0; i < headers.length; i += 2) if (headers[i] === name) return headers[i + 1];
  return undefined;
}

function withoutHeader(headers: string[], name: string): string[] {
  const kept: string[] = [];
  for (let i = 0; i < headers.length; i += 2) if (headers[i] !== name) kept.push(headers[i], headers[i + 1]);
  return kept;
}

export class ToolPolicyHandler extends ProxyHandler {
  private mode: 'pass' | 'json' | 'sse' = 'pass';
  private held: { status: number; reason: string; headers: string[] } | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private sse: SseToolFilter | undefined;
  private readonly policy: ToolPolicyRequest & { maxBytes: number };

  constructor(
    req: IncomingMessage,
    res: ServerResponse,
    server: GatewayServer,
    logger: Logger,
    requestId: string,
    cors: boolean,
    policy: ToolPolicyRequest & { maxBytes: number },
  ) {
    super(req, res, server, logger, requestId, cors);
    this.policy = policy;
  }

  override onHead(status: number, reason: string, headers: string[]): void {
    const type = headerOf(headers, 'content-type') ?? '';
    const readable = type.startsWith('text/event-stream') || type.startsWith('application/json');
    if (readable && (headerOf(headers, 'content-encoding') ?? 'identity') !== 'identity') {
      this.exchange?.abort();
      return sendGatewayError(
        this.res,
        502,
        'bad_gateway',
        `Server ${this.server.name} sent an encoded answer; its tool policy cannot be applied.`,
      );
    }
    if (type.startsWith('text/event-stream')) {
      this.mode = 'sse';
      this.sse = new SseToolFilter(this.server.toolPolicy!, this.policy.maxBytes);
      // Filtered events have another length than the backend's (some backends size the stream).
      super.onHead(status, reason, withoutHeader(headers, 'content-length'));
      for (const error of this.policy.denied) this.res.write(sseEvent(error));
      return;
    }
    if (type.startsWith('application/json') || (status === 202 && this.policy.denied.length > 0)) {
      this.mode = 'json';
      this.held = { status, reason, headers };
      return;
    }
    super.onHead(status, reason, headers);
  }

  override onData(chunk: Buffer, last: boolean): boolean {
    if (this.mode === 'pass') return super.onData(chunk, last);
    if (this.mode === 'sse') {
      let out: string;
      try {
        out = this.sse!.push(chunk) + (last ? this.sse!.end() : '');
      } catch {
        this.exchange?.abort();
        this.res.destroy();
        return false;
      }
      return super.onData(Buffer.from(out), last);
    }
    this.size += chunk.length;
    if (this.size > this.policy.maxBytes) {
      this.exchange?.abort();
      sendGatewayError(
        this.res,
        502,
        'bad_gateway',
        `Server ${this.server.name} answered more than the gateway reads to apply its tool policy.`,
      );
      return false;
    }
    this.chunks.push(chunk);
    if (last) this.finishJson();
    return true;
  }

  override onEnd(): void {
    if (this.mode === 'json' && this.held) return this.finishJson();
    if (this.mode === 'sse' && !this.res.writableEnded) this.res.write(this.sse!.end());
    super.onEnd();
  }

  private finishJson(): void {
    const { denied, batch } = this.policy;
    let { status, reason, headers } = this.held!;
    this.held = undefined;
    let body: Buffer;
    if (status === 202 && denied.length > 0) {
      // Only notifications went to the backend: the answer is the gateway's errors alone.
      status = 200;
      reason = 'OK';
      headers = [...withoutHeader(headers, 'content-type'), 'content-type', 'application/json'];
      body = Buffer.from(JSON.stringify(batch ? denied : denied[0]));
    } else {
      body = filterJsonBody(Buffer.concat(this.chunks, this.size), this.server.toolPolicy!, denied);
    }
    super.onHead(status, reason, [...withoutHeader(headers, 'content-length'), 'content-length', String(body.length)]);
    super.onData(body, true);
  }
}
