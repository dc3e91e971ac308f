// Deadlines for receiving a request body, so that no client keeps a connection (and the request
// waiting on it) forever: one for progress (no byte for `idleMs` while the server is ready for
// more) and one for the whole request (`totalMs` from its start). Node's own `requestTimeout`
// cannot tell a client that stopped sending from a server that stopped reading (backpressure
// from a slow backend), and its 408 goes straight to the socket, whatever the response has
// written; this sees both, and lets the listener answer in the surface's own shape.
//
// Only requests that announce a body are watched, and only until it has arrived: responses,
// SSE streams and long-lived GETs are never cut. One coarse timer per listener checks them.
import type { IncomingMessage } from 'node:http';

/** A request body missed a deadline: rendered as a 408 by every surface (edge/errors.ts). */
export class RequestTimeoutError extends Error {
  readonly reason: 'idle' | 'total';

  constructor(reason: 'idle' | 'total') {
    super(reason === 'idle' ? 'The request body stopped arriving.' : 'The request body took too long to arrive.');
    this.name = 'RequestTimeoutError';
    this.reason = reason;
  }
}

/** Whatever the listener keeps per request; the request is all this module reads. */
export interface HasRequest {
  readonly req: IncomingMessage;
}

export interface BodyDeadlineOptions<T extends HasRequest> {
  /** Longest wait for the next body byte while the server is reading. */
  idleMs: number;
  /** Longest time from the request's start to the end of its body. */
  totalMs: number;
  /** Called once for a request that missed a deadline. */
  onExpired: (request: T, reason: 'idle' | 'total') => void;
}

export interface BodyDeadlines<T extends HasRequest> {
  /** Watches the request if it announces a body. */
  watch(request: T): void;
  close(): void;
}

interface Watched<T> {
  request: T;
  startedAt: number;
  bytesRead: number;
  progressAt: number;
}

/** True when the request announces a body (Node has validated both headers). */
function announcesBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function createBodyDeadlines<T extends HasRequest>(options: BodyDeadlineOptions<T>): BodyDeadlines<T> {
  const { idleMs, totalMs, onExpired } = options;
  const watched = new Set<Watched<T>>();
  // Deadlines are met within a quarter of the shorter one (at most a second late).
  const every = Math.max(10, Math.min(1_000, Math.floor(Math.min(idleMs, totalMs) / 4)));
  const timer = setInterval(sweep, every);
  timer.unref();

  function sweep(): void {
    const now = performance.now();
    for (const w of watched) {
      const req = w.request.req;
      const socket = req.socket;
      // A request whose socket was already detached (the answer sent, the connection reused or gone) is done.
      if (req.complete || !socket || socket.destroyed) {
        watched.delete(w);
        continue;
      }
      // A paused socket is the server's doing (the reader is behind, a backend is slow): the
      // client is not to blame, so the idle clock restarts.
      const bytes = socket.bytesRead;
      if (bytes !== w.bytesRead || socket.isPaused()) {
        w.bytesRead = bytes;
        w.progressAt = now;
      }
      const reason = now - w.startedAt >= totalMs ? 'total' : now - w.progressAt >= idleMs ? 'idle' : undefined;
      if (reason) {
        watched.delete(w);
        onExpired(w.request, reason);
      }
    }
  }

  return {
    watch(request) {
      const req = request.req;
      if (!announcesBody(req)) return;
      const now = performance.now();
      const w: Watched<T> = { request, startedAt: now, bytesRead: req.socket.bytesRead, progressAt: now };
      watched.add(w);
      // Dropped as soon as the body has arrived, so that nothing outlives its request.
      req.once('end', () => watched.delete(w));
    },
    close() {
      clearInterval(timer);
      watched.clear();
    },
  };
}
