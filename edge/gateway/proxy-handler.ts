// The proxy's relay of one backend response to its client, chunk by chunk, with backpressure
// both ways: the backend's challenge rewritten to name the gateway's metadata, the gateway's CORS
// and X-Accel-Buffering in place of the backend's, the platform's cookies protected, SSE headers
// flushed at once, and backend failures answered as 502, 503 or 504.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../services/common/log.ts';
import type { BackendError, Exchange, ResponseHandler } from './backend-client.ts';
import { isCorsHeader } from './cors.ts';
import { sendGatewayError } from './errors.ts';
import { setsPlatformCookie } from './platform-cookies.ts';
import { buildChallenge, type GatewayServer } from './registry.ts';

/** Relays one backend response to the client, chunk by chunk. */
export class ProxyHandler implements ResponseHandler {
  exchange: Exchange | undefined;
  private aborted = false;
  protected readonly req: IncomingMessage;
  protected readonly res: ServerResponse;
  protected readonly server: GatewayServer;
  private readonly logger: Logger;
  private readonly requestId: string;
  private readonly cors: boolean;

  constructor(req: IncomingMessage, res: ServerResponse, server: GatewayServer, logger: Logger, requestId: string, cors: boolean) {
    this.req = req;
    this.res = res;
    this.server = server;
    this.logger = logger;
    this.requestId = requestId;
    this.cors = cors;
  }

  /** The client went away: the backend request is closed too. */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.exchange?.abort();
  }

  onHead(status: number, reason: string, headers: string[]): void {
    const res = this.res;
    if (res.destroyed) return this.abort();
    if ((status === 401 || status === 403) && this.server.usesOAuth) {
      let challenge: string | undefined;
      for (let i = headers.length - 2; i >= 0; i -= 2) {
        if (headers[i] === 'www-authenticate') {
          challenge = challenge === undefined ? headers[i + 1] : `${headers[i + 1]}, ${challenge}`;
          headers.splice(i, 2);
        }
      }
      headers.push('www-authenticate', rewriteChallenge(challenge, this.server, status));
    }
    // The gateway's CORS headers (set before routing) replace the backend's own, and its
    // X-Accel-Buffering replaces the backend's (both were sent: `no, no`).
    // A backend may not set, overwrite or clear the platform's cookies (platform-cookies.ts),
    // nor wipe the whole site's (Clear-Site-Data: "cookies" would sign the user out of the
    // authorization server on the same host too).
    const cors = this.cors;
    for (let i = headers.length - 2; i >= 0; i -= 2) {
      const name = headers[i]!;
      if (
        name === 'x-accel-buffering' ||
        name === 'clear-site-data' ||
        (cors && isCorsHeader(name)) ||
        (name === 'set-cookie' && setsPlatformCookie(headers[i + 1]!))
      ) {
        headers.splice(i, 2);
      }
    }
    headers.push('x-accel-buffering', 'no');
    res.writeHead(status, reason || undefined, headers);
    // Headers go out now for streams, so that a client sees the stream open before any event.
    for (let i = 0; i < headers.length; i += 2) {
      if (headers[i] === 'content-type') {
        if (headers[i + 1]!.startsWith('text/event-stream')) res.flushHeaders();
        break;
      }
    }
  }

  onData(chunk: Buffer, last: boolean): boolean {
    // The last chunk of a sized body goes out with end(): one write, and less work in Node.
    if (last) {
      this.res.end(chunk);
      return true;
    }
    if (this.res.write(chunk)) return true;
    this.res.once('drain', () => this.exchange?.resume());
    return false;
  }

  onEnd(): void {
    if (!this.res.writableEnded) this.res.end();
  }

  onError(err: BackendError): void {
    const res = this.res;
    if (err.code === 'body_too_large') {
      if (!res.headersSent) {
        sendGatewayError(res, 413, 'payload_too_large', 'The request body is too large.', { connection: 'close' });
      } else {
        res.destroy();
      }
      this.req.resume();
      return;
    }
    if (this.aborted) return;
    if (res.headersSent) {
      this.logger.warn({ requestId: this.requestId, server: this.server.name, code: err.code, err: err.message }, 'backend stream failed');
      res.destroy();
      return;
    }
    this.logger.warn({ requestId: this.requestId, server: this.server.name, code: err.code, err: err.message }, 'backend request failed');
    if (err.code === 'queue_timeout') {
      // Every connection to the backend is busy: a short wait, then a clear "try again".
      sendGatewayError(res, 503, 'backend_busy', `Server ${this.server.name} is busy; try again shortly.`, { 'retry-after': '1' });
    } else if (err.code === 'connect_timeout' || err.code === 'response_timeout' || err.code === 'idle_timeout') {
      sendGatewayError(res, 504, 'gateway_timeout', `Server ${this.server.name} did not answer in time.`);
    } else {
      sendGatewayError(res, 502, 'bad_gateway', `Server ${this.server.name} is unreachable.`);
    }
  }
}

/**
 * A backend's challenge names the backend's own metadata; clients must see the gateway's.
 * The error, its description and the scopes of the backend's challenge are kept.
 */
export function rewriteChallenge(original: string | undefined, server: GatewayServer, status: number): string {
  const header = original ?? '';
  const extra: Record<string, string> = {};
  let scope: string | undefined;
  const param = /([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g;
  for (let m = param.exec(header); m; m = param.exec(header)) {
    const key = m[1].toLowerCase();
    const value = (m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1');
    if (key === 'error' || key === 'error_description') extra[key] = value;
    else if (key === 'scope') scope = value;
  }
  if (status === 403 && !extra.error) extra.error = 'insufficient_scope';
  return buildChallenge(server.resourceMetadataUrl, scope ? scope.split(' ').filter(Boolean) : server.config.scopes, extra);
}
