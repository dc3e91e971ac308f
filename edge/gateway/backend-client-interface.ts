// The port between the proxy and an HTTP/1.1 client for its backends: what a request is, how a
// response is handed over (with backpressure), and the errors, by code, that the proxy maps to
// 502, 503 and 504. Two implementations: backend-client.ts (the gateway's own, the default) and
// backend-client-undici.ts (undici behind the same port); GATEWAY_BACKEND_CLIENT picks one, and
// test/integration/gateway-backend-client.test.ts runs the same suite against both.
import type net from 'node:net';
import type tls from 'node:tls';
import type { Readable } from 'node:stream';

export type BackendErrorCode =
  /** Connecting failed: refused, unreachable, DNS, TLS. */
  | 'connect_failed'
  | 'connect_timeout'
  /** No free connection within the queue timeout (the backend is saturated). */
  | 'queue_timeout'
  /** No response head within the response timeout of the request body being sent. */
  | 'response_timeout'
  /** No body bytes within the idle timeout. */
  | 'idle_timeout'
  /** The connection closed or failed before the response was complete. */
  | 'connection_closed'
  /** The backend's answer is not valid HTTP/1.1. */
  | 'invalid_response'
  /** A body of unknown length went over `maxBodyBytes`. */
  | 'body_too_large';

export class BackendError extends Error {
  readonly code: BackendErrorCode;
  constructor(code: BackendErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BackendError';
    this.code = code;
  }
}

export interface BackendClientOptions {
  /** The backend's origin; `http:` or `https:`. Its path is not used here. */
  url: URL;
  /** Connections at most (idle, busy and connecting); further requests wait in line. */
  connections: number;
  connectTimeoutMs: number;
  /**
   * From the end of the request body until the response head is in; also the longest time the
   * backend may leave an upload unread (a client that is slow to send is the listener's body
   * timeout, not the backend's fault).
   */
  responseTimeoutMs: number;
  /** Longest silence inside a response body, not counting time paused for a slow client; 0 for none. */
  idleTimeoutMs: number;
  /** Longest wait for a free connection when all `connections` are busy; default 5,000 ms. */
  queueTimeoutMs?: number;
  /** Longest time an idle connection is kept; default 4,000 ms. */
  keepAliveMs?: number;
  /** Largest response head; default 64 KiB. */
  maxHeadBytes?: number;
  /** Extra TLS options (a private CA, say) for https backends. */
  tls?: tls.ConnectionOptions;
  /** Resolves the backend's host name (an organization's server: public addresses only, services/common/net/address-policy.ts). */
  lookup?: net.LookupFunction;
}

export interface BackendRequest {
  method: string;
  /** The request target, starting with `/`, as it goes on the request line. */
  path: string;
  /**
   * End-to-end header lines, each `name: value\r\n`: never Host, Content-Length,
   * Transfer-Encoding or Connection, which this client writes itself. Latin-1, as Node's
   * parser decoded them, so the bytes go out as they came in.
   */
  headerLines: string;
  /** The body to stream (the client's request, usually), or null. */
  body: Readable | null;
  /** The body's declared length; -1 when unknown (it is sent chunked). */
  bodyLength: number;
  /** Largest body of unknown length. */
  maxBodyBytes: number;
}

/** Receives one response. Called in order: onHead, onData*, then onEnd or onError (once). */
export interface ResponseHandler {
  /** `headers` is flat: lower-case name, value, name, value… without hop-by-hop fields. */
  onHead(status: number, reason: string, headers: string[]): void;
  /**
   * A part of the body, as it arrived. `last`: it completes a body of known length (onEnd
   * follows at once). False pauses reading from the backend until `Exchange.resume()`.
   */
  onData(chunk: Buffer, last: boolean): boolean;
  onEnd(): void;
  onError(error: BackendError): void;
}

export interface Exchange {
  /** Stops the exchange; its connection is closed, and the handler hears nothing more. */
  abort(): void;
  /** Resumes reading after onData returned false. */
  resume(): void;
}

export interface BackendClient {
  request(request: BackendRequest, handler: ResponseHandler): Exchange;
  /** Closes every connection; requests still running fail with `connection_closed`. */
  close(): Promise<void>;
  /** Connections open now (for tests and metrics). */
  readonly connections: number;
}
