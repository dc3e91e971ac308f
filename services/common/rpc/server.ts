// One listener per service that speaks gRPC (HTTP/2 with prior knowledge, as grpcurl -plaintext
// and grpc-js use it), and Connect and gRPC-Web over HTTP/1.1 or HTTP/2.
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { DescService } from '@bufbuild/protobuf';
import type { ConnectRouter, Interceptor } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { Logger } from '../log.ts';
import { registerHealth, type HealthProbe } from './health.ts';
import { createLoggingInterceptor, createRequestGate } from './interceptors.ts';
import { registerReflection } from './reflection.ts';

/** What a service contributes to a server. */
export interface RpcServiceModule {
  /** Services implemented by `routes`, announced by reflection and health. */
  services: DescService[];
  routes: (router: ConnectRouter) => void;
  /** True when the service can serve (its stores answer). */
  probe: HealthProbe;
  /** Stops the module's background work; called when its server closes, before the stores do. */
  close?: () => Promise<void>;
}

export interface RpcHandlerOptions {
  module: RpcServiceModule;
  internalToken: string;
  logger: Logger;
  /** Aborted when the server shuts down; streaming handlers end with it. */
  shutdownSignal?: AbortSignal;
  /** Per-message cap; larger messages are refused with RESOURCE_EXHAUSTED. */
  readMaxBytes?: number;
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
  const interceptors: Interceptor[] = [createLoggingInterceptor(options.logger)];
  return {
    interceptors,
    requestGate: createRequestGate(options.internalToken),
    shutdownSignal: options.shutdownSignal,
    readMaxBytes: options.readMaxBytes ?? 8 * 1024 * 1024,
  };
}

export interface RpcServer {
  readonly port: number;
  readonly address: string;
  /** Stops accepting, lets in-flight calls finish for up to `graceMs`, then closes the rest. */
  close(graceMs?: number): Promise<void>;
}

export interface RpcServerOptions extends RpcHandlerOptions {
  host: string;
  port: number;
}

const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const shutdown = new AbortController();
  const handler = connectNodeAdapter({
    routes: createRpcRoutes(options),
    ...rpcRouterOptions({ ...options, shutdownSignal: shutdown.signal }),
  });
  const h2 = http2.createServer({}, handler);
  const h1 = http.createServer(handler);
  h1.keepAliveTimeout = 5_000;
  const sockets = new Set<net.Socket>();
  const sessions = new Set<http2.Http2Session>();
  h2.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });

  // Sniff the first bytes: an HTTP/2 connection preface goes to the h2c server, anything else
  // is HTTP/1.1 (Connect or gRPC-Web from curl or a browser proxy).
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('readable', () => {
      const head: Buffer | null = socket.read(HTTP2_PREFACE.length) ?? socket.read();
      if (!head) {
        socket.destroy();
        return;
      }
      socket.unshift(head);
      const target = head.subarray(0, 3).equals(HTTP2_PREFACE.subarray(0, 3)) ? h2 : h1;
      target.emit('connection', socket);
    });
    socket.on('error', () => socket.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as net.AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;

  return {
    port: addr.port,
    address: `${host}:${addr.port}`,
    async close(graceMs = 10_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) session.close();
      h1.closeIdleConnections();
      const timer = setTimeout(() => {
        shutdown.abort();
        for (const socket of sockets) socket.destroy();
      }, graceMs);
      timer.unref();
      // Streams (health watch, reflection) end when the shutdown signal aborts.
      if (sessions.size === 0 && sockets.size === 0) shutdown.abort();
      await closed;
      clearTimeout(timer);
      shutdown.abort();
      await options.module.close?.();
    },
  };
}
