// One listener per service that speaks gRPC (HTTP/2 with prior knowledge, as grpcurl -plaintext
// and grpc-js use it), and Connect and gRPC-Web over HTTP/1.1 or HTTP/2.
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { DescService } from '@bufbuild/protobuf';
import { type ConnectRouter, createContextValues, type Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { listen, type ListenTarget } from '../listen.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/registry.ts';
import type { Registry } from 'prom-client';
import { peerKey } from './context.ts';
import { registerHealth, type HealthProbe } from './health.ts';
import { createLoggingInterceptor, createRequestGate, createStoreFailureInterceptor } from './interceptors.ts';
import { registerReflection } from './reflection.ts';

/** What a service contributes to a server. */
export interface RpcServiceModule {
  /** Services implemented by `routes`, announced by reflection and health. */
  services: DescService[];
  routes: (router: ConnectRouter) => void;
  /** True when the service can serve (its stores answer). */
  probe: HealthProbe;
  /**
   * Work that must be done before the service answers (sealing its stored secrets again under the
   * current key-encryption key); run before the server listens. A failure stops the start: the
   * module is closed and the error thrown.
   */
  start?: () => Promise<void>;
  /** Stops the module's background work; called when its server closes, before the stores do. */
  close?: () => Promise<void>;
  /** Adds the module's own metrics to the process's registry. */
  registerMetrics?: (registry: Registry) => void;
}

export interface RpcHandlerOptions {
  module: RpcServiceModule;
  internalToken: string;
  logger: Logger;
  /** Aborted when the server shuts down; streaming handlers end with it. */
  shutdownSignal?: AbortSignal;
  /** True once the server drains: new calls are refused with UNAVAILABLE. */
  draining?: () => boolean;
  /** Per-message cap; larger messages are refused with RESOURCE_EXHAUSTED. */
  readMaxBytes?: number;
  /** The process's metrics: calls are counted, and the module registers its own. */
  metrics?: Metrics;
}

/** Routes, health and reflection of one service, with the common interceptors. */
export function createRpcRoutes(options: Pick<RpcHandlerOptions, 'module'>) {
  return (router: ConnectRouter) => {
    options.module.routes(router);
    registerHealth(router, {
      services: options.module.services.map((s) => s.typeName),
      probe: options.module.probe,
    });
    registerReflection(router, options.module.services);
  };
}

export function rpcRouterOptions(options: RpcHandlerOptions) {
  // Outermost first: the metrics count the code the caller gets, after store failures are mapped.
  const interceptors: Interceptor[] = options.metrics ? [options.metrics.grpc] : [];
  interceptors.push(createLoggingInterceptor(options.logger), createStoreFailureInterceptor(options.logger));
  return {
    interceptors,
    requestGate: createRequestGate({ internalToken: options.internalToken, logger: options.logger, draining: options.draining }),
    shutdownSignal: options.shutdownSignal,
    readMaxBytes: options.readMaxBytes ?? 8 * 1024 * 1024,
  };
}

export interface RpcServer {
  readonly port: number;
  readonly address: string;
  /**
   * Refuses new calls (UNAVAILABLE) and connections at once, lets in-flight calls finish for up
   * to `graceMs`, then ends streams and closes the connections left.
   */
  close(graceMs?: number): Promise<void>;
}

export interface RpcServerOptions extends RpcHandlerOptions, ListenTarget {
  /** A new connection must send its first bytes, and an HTTP/2 client its settings, this soon. */
  handshakeTimeoutMs?: number;
  /** An HTTP/2 connection with no call in progress for this long is closed (GOAWAY). */
  idleTimeoutMs?: number;
}

export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/**
 * No connection is kept for ever: a session must complete its handshake (the client's SETTINGS
 * after the preface) within `handshakeMs`, and one without a call in progress is closed after
 * `idleMs`. Idle means no open stream, not no traffic: a health Watch may stay silent for hours
 * and is still a call. Clients reconnect on their next call.
 */
function limitSession(session: http2.ServerHttp2Session, handshakeMs: number, idleMs: number): void {
  const handshake = setTimeout(() => session.destroy(), handshakeMs);
  session.once('remoteSettings', () => clearTimeout(handshake));
  let open = 0;
  let idle: NodeJS.Timeout | undefined;
  const arm = () => {
    idle = setTimeout(() => session.close(), idleMs);
  };
  session.on('stream', (stream: http2.ServerHttp2Stream) => {
    open++;
    clearTimeout(idle);
    stream.once('close', () => {
      if (--open === 0 && !session.closed) arm();
    });
  });
  session.once('close', () => {
    clearTimeout(handshake);
    clearTimeout(idle);
  });
  arm();
}

/**
 * Sniffs the first bytes: an HTTP/2 connection preface goes to the h2c server, anything else is
 * HTTP/1.1 (Connect or gRPC-Web from curl or a browser proxy). A connection that sends nothing
 * within `handshakeMs` is closed.
 */
function sniff(socket: net.Socket, h1: http.Server, h2: http2.Http2Server, handshakeMs: number): void {
  socket.setTimeout(handshakeMs, () => socket.destroy());
  socket.once('readable', () => {
    const head: Buffer | null = socket.read(HTTP2_PREFACE.length) ?? socket.read();
    if (!head) {
      socket.destroy();
      return;
    }
    socket.setTimeout(0);
    socket.unshift(head);
    const target = head.subarray(0, 3).equals(HTTP2_PREFACE.subarray(0, 3)) ? h2 : h1;
    target.emit('connection', socket);
  });
  socket.on('error', () => socket.destroy());
}

export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  try {
    await options.module.start?.();
  } catch (err) {
    await options.module.close?.();
    throw err;
  }
  if (options.metrics) options.module.registerMetrics?.(options.metrics.registry);
  const shutdown = new AbortController();
  let draining = false;
  const handler = connectNodeAdapter({
    routes: createRpcRoutes(options),
    ...rpcRouterOptions({ ...options, shutdownSignal: shutdown.signal, draining: () => draining }),
    contextValues: (req) => createContextValues().set(peerKey, peerOf(req.socket)),
  });
  const handshakeMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const h2 = http2.createServer({}, handler);
  // Node checks HTTP/1.1 heads on this interval; the handshake deadline is the head's too.
  const h1 = http.createServer(
    { headersTimeout: handshakeMs, connectionsCheckingInterval: Math.max(10, Math.floor(handshakeMs / 4)) },
    handler,
  );
  h1.keepAliveTimeout = 5_000;
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.Http2Session>();
  h2.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    limitSession(session, handshakeMs, idleMs);
  });
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    sniff(socket, h1, h2, handshakeMs);
  });

  await listen(server, options);
  const addr = server.address() as net.AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;

  return {
    port: addr.port,
    address: `${host}:${addr.port}`,
    async close(graceMs = 10_000) {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // GOAWAY: clients open no new stream here; the streams in progress go on.
      for (const session of sessions) session.close();
      // HTTP/1.1 keep-alive connections close as their last response ends.
      const sweep = setInterval(() => h1.closeIdleConnections(), 50);
      h1.closeIdleConnections();
      const timer = setTimeout(() => {
        // Streams (health Watch, reflection) end with the shutdown signal; what is left is cut.
        shutdown.abort();
        for (const socket of sockets) socket.destroy();
      }, graceMs);
      if (sessions.size === 0 && sockets.size === 0) shutdown.abort();
      await closed;
      clearTimeout(timer);
      clearInterval(sweep);
      shutdown.abort();
      await options.module.close?.();
    },
  };
}

function peerOf(socket: net.Socket | undefined): string {
  if (!socket?.remoteAddress) return 'unknown';
  const host = socket.remoteFamily === 'IPv6' ? `[${socket.remoteAddress}]` : socket.remoteAddress;
  return `${host}:${socket.remotePort}`;
}
