// Calls the internal services handle, by service, method and code, with the conventional names
// of gRPC server metrics (grpc_server_handled_total, grpc_server_handling_seconds). As a router
// interceptor it counts calls on the gRPC ports and through the edge's in-process transports
// alike: both run the same routes.
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import { Counter, Histogram, type Registry } from 'prom-client';

/** `InvalidArgument` → `INVALID_ARGUMENT`, the names gRPC tools show. */
function codeName(code: Code | undefined): string {
  if (code === undefined) return 'OK';
  return (Code[code] ?? 'Unknown').replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}

export function createGrpcMetricsInterceptor(registry: Registry): Interceptor {
  const handled = new Counter({
    name: 'grpc_server_handled_total',
    help: 'Calls completed by the internal services, by service, method and gRPC code.',
    labelNames: ['grpc_service', 'grpc_method', 'grpc_code'] as const,
    registers: [registry],
  });
  const seconds = new Histogram({
    name: 'grpc_server_handling_seconds',
    help: 'Time the internal services took to answer a call (to its first message, for a stream).',
    labelNames: ['grpc_service', 'grpc_method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return (next) => async (req) => {
    const started = performance.now();
    let code: Code | undefined;
    try {
      return await next(req);
    } catch (error) {
      code = ConnectError.from(error).code;
      throw error;
    } finally {
      const service = req.service.typeName;
      const method = req.method.name;
      handled.labels(service, method, codeName(code)).inc();
      seconds.labels(service, method).observe((performance.now() - started) / 1000);
    }
  };
}
