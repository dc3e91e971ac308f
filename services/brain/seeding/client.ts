// A client of the brain's SeedingService for another service (the agents service's scheduled
// jobs, whose seeding targets start runs): over gRPC to the brain at BRAIN_SERVICE_ADDR. In the
// edge's process the agents service uses the edge's own client instead (edge/platform.ts).
import { createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { SeedingService } from '../../../gen/mindgate/brain/v1/seeding_pb.js';
import { INTERNAL_TOKEN_HEADER } from '../../common/rpc/context.ts';

export function createSeedingClient(options: {
  address: string;
  internalToken: string;
  timeoutMs?: number;
}): Client<typeof SeedingService> {
  const credential: Interceptor = (next) => (req) => {
    req.header.set(INTERNAL_TOKEN_HEADER, options.internalToken);
    return next(req);
  };
  return createClient(
    SeedingService,
    createGrpcTransport({
      baseUrl: `http://${options.address}`,
      interceptors: [credential],
      defaultTimeoutMs: options.timeoutMs ?? 30_000,
    }),
  );
}
