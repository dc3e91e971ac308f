// A client of one internal service over gRPC as a bare caller sees it: the internal credential on
// every call and nothing else (none of the edge's request ids, deadlines or failure mapping), so a
// test reads each refusal exactly as the service answered it. Each transport is its own HTTP/2
// connection, as a separate replica's would be.
import type { DescService } from '@bufbuild/protobuf';
import { createClient, type Client, type Transport } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { INTERNAL_TOKEN_HEADER } from '../../services/common/rpc/context.ts';

/** A gRPC transport to host:port `address` that sends `token` as the internal credential. */
export function internalTransport(address: string, token: string): Transport {
  return createGrpcTransport({
    baseUrl: `http://${address}`,
    interceptors: [
      (next) => (req) => {
        req.header.set(INTERNAL_TOKEN_HEADER, token);
        return next(req);
      },
    ],
  });
}

export function internalClient<S extends DescService>(service: S, address: string, token: string): Client<S> {
  return createClient(service, internalTransport(address, token));
}
