// Requests of the public listeners: one histogram per listener, method and status (its _count is
// the request count). No path label: proxied and resource paths are unbounded, and a label per
// value would grow the registry with every new organization or server.
import { Histogram, type Registry } from 'prom-client';

export interface HttpMetrics {
  /** One finished (or aborted) request. */
  observe(listener: string, method: string | undefined, status: number, seconds: number): void;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function createHttpMetrics(registry: Registry): HttpMetrics {
  const duration = new Histogram({
    name: 'mindgate_http_request_duration_seconds',
    help: 'Time from a request arriving to its response ending, by listener, method and status.',
    labelNames: ['listener', 'method', 'status'] as const,
    // Up to two minutes: a proxied MCP call may take that long (GATEWAY_RESPONSE_TIMEOUT_MS).
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
    registers: [registry],
  });
  // The children by label values: labels() hashes its arguments on every call.
  const children = new Map<string, ReturnType<typeof duration.labels>>();
  return {
    observe(listener, method, status, seconds) {
      const m = method && METHODS.has(method) ? method : 'other';
      const key = `${listener} ${m} ${status}`;
      let child = children.get(key);
      if (!child) children.set(key, (child = duration.labels(listener, m, String(status))));
      child.observe(seconds);
    },
  };
}
