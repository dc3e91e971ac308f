// The stable problem types of the Agents API (RFC 9457 §3.1.1): one per kind of failure, so a
// client branches on `type`, never on `detail`. Types are tag URIs (RFC 4151): they name the
// problem the same way in every deployment and are not meant to be fetched; docs/api.md describes
// each one. A failure a service gave a reason for (services/common/rpc/reasons.ts) has that
// reason's type; every other failure has its status's.
const PREFIX = 'tag:mindgate.dev,2026:problem/';

const BY_STATUS: Record<number, string> = {
  400: 'bad-request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  408: 'request-timeout',
  409: 'conflict',
  412: 'precondition-failed',
  413: 'content-too-large',
  415: 'unsupported-media-type',
  422: 'validation-failed',
  429: 'rate-limited',
  500: 'internal',
  501: 'not-implemented',
  503: 'unavailable',
  504: 'timeout',
};

export function problemType(status: number, reason?: string): string {
  return PREFIX + (reason ?? BY_STATUS[status] ?? 'error');
}

/** Every type the API may answer with, for the documentation test. */
export const PROBLEM_TYPES = [...new Set([...Object.values(BY_STATUS), 'etag-mismatch', 'last-owner'])].map((t) => PREFIX + t);
