// One delivery attempt over HTTP: a POST with the signed headers, under the outbound address
// policy (services/common/net/address-policy.ts) checked at the connection itself — the address
// the name resolves to is checked and then connected to, so DNS rebinding between the check and
// the connection is not possible — with a deadline for the whole exchange, redirects not followed
// (a 3xx is a failure), and at most RESPONSE_READ_BYTES of the answer read.
import net from 'node:net';
import { Agent, request } from 'undici';
import { guardedLookup, hostOf, isPrivateAddress } from '../../common/net/address-policy.ts';

/** The most of a response body read (and the most kept in the delivery log, RESPONSE_KEPT_BYTES). */
export const RESPONSE_READ_BYTES = 4_096;
export const RESPONSE_KEPT_BYTES = 1_024;

export interface SendResult {
  /** 0 when no answer came. */
  status: number;
  body: string;
  latencyMs: number;
  /** Why no answer came (or why the answer is a failure). */
  error: string;
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string): Promise<SendResult>;
  close(): Promise<void>;
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= RESPONSE_READ_BYTES) break;
  }
  body.destroy();
  return Buffer.concat(chunks).subarray(0, RESPONSE_KEPT_BYTES).toString('utf8');
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`;
  }
  if (e.code === 'UND_ERR_CONNECT_TIMEOUT') return `could not connect within ${timeoutMs} ms`;
  const code = e.code ?? e.cause?.code;
  const message = e.cause?.message ?? e.message ?? String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

export function createSender(options: { timeoutMs: number; allowPrivate: boolean }): Sender {
  const { timeoutMs, allowPrivate } = options;
  const agent = new Agent({
    connect: { lookup: guardedLookup(allowPrivate), timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 4_000,
    connections: 8,
  });
  async function send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const host = hostOf(url);
    // An IP literal is connected to without a lookup: the policy is applied to it here.
    if (net.isIP(host) && !allowPrivate && isPrivateAddress(host)) {
      return { status: 0, body: '', latencyMs: 0, error: `${host} is a loopback, private, link-local or reserved address` };
    }
    try {
      const res = await request(url, { method: 'POST', headers, body, dispatcher: agent, signal: AbortSignal.timeout(timeoutMs) });
      const text = await readCapped(res.body as unknown as AsyncIterable<Buffer> & { destroy(): void });
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { status: res.statusCode, body: text, latencyMs: elapsed(), error: ok ? '' : `HTTP ${res.statusCode}` };
    } catch (err) {
      return { status: 0, body: '', latencyMs: elapsed(), error: describe(err, timeoutMs) };
    }
  }
  return { send, close: () => agent.close() };
}
