import { createContextKey } from '@connectrpc/connect';

/** The request id of the call: taken from x-request-id or traceparent, or minted here. */
export const requestIdKey = createContextKey<string>('', { description: 'request id' });

/** Header that carries the internal credential between the edge and the services. */
export const INTERNAL_TOKEN_HEADER = 'x-internal-token';
export const REQUEST_ID_HEADER = 'x-request-id';

/** Who called: `host:port` of the connection on a network port, `in-process` for the edge's own transport. */
export const peerKey = createContextKey<string>('in-process', { description: 'peer address' });
