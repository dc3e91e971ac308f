// Requests of the public listeners: one histogram per listener, method and status (its _count is
// the request count). No path label: proxied and resource paths are unbounded, and a label per
// value would grow the registry with every new organization or server.
import { Histogram, type Registry } from 'prom-client';

export interface HttpMetrics {
  /** The recorder of one listener: each finished (or aborted) request. */
  listener(name: string): (method: string | undefined, status: number, seconds: number) => void;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'other'];
const METHOD_INDEX = new Map(METHODS.map((m, i) => [m, i]));

export function createHttpMetrics(registry: Registry): HttpMetrics {
  const duration = new Histogram({
    name: 'mindgate_http_request_duration_seconds',
    help: 'Time from a request arriving to its response ending, by listener, method and status.',
    labelNames: ['listener', 'method', 'status'] as const,
    // Up to two minutes: a proxied MCP call may take that long (GATEWAY_RESPONSE_TIMEOUT_MS).
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
    registers: [registry],
  });
  return {
    listener(name) {
      // The children by a numeric key: labels() hashes its arguments into a string on every
      // call, which the proxy's hot path does without (measured: 1.3 µs a request instead of 2.2 to 2.9).
      const children = new Map<number, ReturnType<typeof duration.labels>>();
      return (method, status, seconds) => {
        const m = (method === undefined ? undefined : METHOD_INDEX.get(method)) ?? METHODS.length - 1;
        const key = status * METHODS.length + m;
        let child = children.get(key);
        if (!child) children.set(key, (child = duration.labels(name, METHODS[m]!, String(status))));
        child.observe(seconds);
      };
    },
  };
}
