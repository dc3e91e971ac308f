// A client of the entity-graph service for another service (the brain): over gRPC when the graph
// runs elsewhere (ENTITY_GRAPH_SERVICE_ADDR), otherwise through an in-memory transport that runs
// the graph's routes, gate and interceptors in this process over the same stores.
import { createClient, createRouterTransport, type Client, type Interceptor } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { EntityGraphService } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { Logger } from '../common/log.ts';
import { INTERNAL_TOKEN_HEADER } from '../common/rpc/context.ts';
import { createRpcRoutes, rpcRouterOptions, type RpcServiceModule } from '../common/rpc/server.ts';

export interface EntityGraphClientOptions {
  address?: string;
  module: () => RpcServiceModule;
  internalToken: string;
  logger: Logger;
  timeoutMs?: number;
}

export function createEntityGraphClient(options: EntityGraphClientOptions): Client<typeof EntityGraphService> {
  const credential: Interceptor = (next) => (req) => {
    req.header.set(INTERNAL_TOKEN_HEADER, options.internalToken);
    return next(req);
  };
  const defaultTimeoutMs = options.timeoutMs ?? 30_000;
  if (options.address) {
    return createClient(
      EntityGraphService,
      createGrpcTransport({ baseUrl: `http://${options.address}`, interceptors: [credential], defaultTimeoutMs }),
    );
  }
  const module = options.module();
  return createClient(
    EntityGraphService,
    createRouterTransport(createRpcRoutes({ module }), {
      transport: { interceptors: [credential], defaultTimeoutMs },
      router: rpcRouterOptions({ module, internalToken: options.internalToken, logger: options.logger }),
    }),
  );
}
