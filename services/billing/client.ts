// The billing service's client for another service (the brain, the agents service) running as its
// own process: over gRPC at BILLING_SERVICE_ADDR, or, without it, the billing code run in this
// process over the same stores (what the edge does for a service it runs itself).
import { createClient, createRouterTransport, type Client, type Interceptor } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { BillingService } from '../../gen/mindgate/billing/v1/billing_pb.js';
import type { Logger } from '../common/log.ts';
import { INTERNAL_TOKEN_HEADER } from '../common/rpc/context.ts';
import { createRpcRoutes, rpcRouterOptions, type RpcServiceModule } from '../common/rpc/server.ts';

export interface BillingClientOptions {
  /** host:port of a billing service; unset: `module` in this process. */
  address?: string;
  /** Builds the billing module when there is no address. */
  module: () => RpcServiceModule;
  internalToken: string;
  logger: Logger;
}

export function createBillingClient(options: BillingClientOptions): Client<typeof BillingService> {
  const credential: Interceptor = (next) => (req) => {
    req.header.set(INTERNAL_TOKEN_HEADER, options.internalToken);
    return next(req);
  };
  const transport = options.address
    ? createGrpcTransport({ baseUrl: `http://${options.address}`, interceptors: [credential], defaultTimeoutMs: 10_000 })
    : (() => {
        const module = options.module();
        return createRouterTransport(createRpcRoutes({ module }), {
          transport: { interceptors: [credential], defaultTimeoutMs: 10_000 },
          router: rpcRouterOptions({ module, internalToken: options.internalToken, logger: options.logger }),
        });
      })();
  return createClient(BillingService, transport);
}
