// One Prometheus registry per process (per platform in tests, which run several in one process):
// the process and Node.js runtime metrics of prom-client, and what the listeners, the gRPC
// services and the Brain add to it. Served by listener.ts when METRICS_PORT is set.
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createGrpcMetricsInterceptor } from './grpc.ts';
import { createHttpMetrics, type HttpMetrics } from './http.ts';
import type { Interceptor } from '@connectrpc/connect';

export interface Metrics {
  readonly registry: Registry;
  /** Requests of the public listeners. */
  readonly http: HttpMetrics;
  /** Counts and times every call a service handles, whatever the transport. */
  readonly grpc: Interceptor;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return { registry, http: createHttpMetrics(registry), grpc: createGrpcMetricsInterceptor(registry) };
}
