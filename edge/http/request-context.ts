import { AsyncLocalStorage } from 'node:async_hooks';

/** Per-request values that outgoing internal calls pick up (the request id to propagate). */
export interface RequestScope {
  requestId: string;
}

export const requestScope = new AsyncLocalStorage<RequestScope>();
