// Errors from internal services arrive as ConnectError codes; this is the one place that turns
// them into HTTP statuses. Each surface then renders the status in its own body shape.
import { Code, ConnectError } from '@connectrpc/connect';
import { RequestTimeoutError } from './http/body-deadlines.ts';
import { reasonOf } from '../services/common/rpc/reasons.ts';
import { BodyTooLargeError } from './http/respond.ts';
import { edgeFailureOf, isTransportFailure } from './service-failures.ts';

const STATUS_BY_CODE: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 412,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

/** Reasons services attach to a failure (services/common/rpc/reasons.ts) whose status differs from their code's. */
const STATUS_BY_REASON: Record<string, number> = {
  'etag-mismatch': 412,
  'last-owner': 409,
  'sign-in-throttled': 429,
  'invalid-credentials': 401,
  'password-required': 409,
  'lease-lost': 409,
  'run-finished': 409,
  'run-active': 409,
  'playbook-unpublished': 409,
  'alert-resolved': 409,
  'dataset-empty': 409,
  'dataset-full': 409,
  'evaluation-not-finished': 409,
  'plan-limit': 403,
  'subscription-state': 409,
};

export interface HttpError {
  status: number;
  /** The service's stable reason (services/common/rpc/reasons.ts), when it gave one. */
  reason?: string;
  /** Short machine-readable name (the Connect code name, `payload_too_large` or `request_timeout`). */
  code: string;
  /** Safe to show to the caller: internal failures are reduced to a generic message. */
  message: string;
  /** True when the failure is ours, not the caller's (log it). */
  internal: boolean;
}

export function toHttpError(err: unknown): HttpError {
  if (err instanceof BodyTooLargeError) {
    return { status: 413, code: 'payload_too_large', message: err.message, internal: false };
  }
  if (err instanceof RequestTimeoutError) {
    return { status: 408, code: 'request_timeout', message: err.message, internal: false };
  }
  if (err instanceof ConnectError) {
    // A connection cut under a call (marked or not) is a service unavailable, never its socket text.
    if (edgeFailureOf(err) === undefined && isTransportFailure(err)) {
      return { status: 503, code: 'unavailable', message: 'a service of the platform is unavailable; retry shortly', internal: false };
    }
    const reason = reasonOf(err);
    const status = (reason && STATUS_BY_REASON[reason]) || (STATUS_BY_CODE[err.code] ?? 500);
    const internal = status >= 500 && err.code !== Code.Unavailable && err.code !== Code.DeadlineExceeded;
    return {
      status,
      reason,
      code: Code[err.code].replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase(),
      message: internal ? 'internal error' : err.rawMessage,
      internal,
    };
  }
  return { status: 500, code: 'internal', message: 'internal error', internal: true };
}
