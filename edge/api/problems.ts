// The stable problem types of the Agents API (RFC 9457 §3.1.1): one per kind of failure, so a
// client branches on `type`, never on `detail`. Types are tag URIs (RFC 4151): they name the
// problem the same way in every deployment and are not meant to be fetched; docs/api.md describes
// each one. A failure a service gave a reason for (services/common/rpc/reasons.ts) has that
// reason's type; every other failure has its status's.
import { ConnectError } from '@connectrpc/connect';
import { toHttpError } from '../errors.ts';
import { BodyTooLargeError } from '../http/respond.ts';
import { isRequestValidationError } from '../http/validation.ts';
import { ForbiddenError, UnauthenticatedError } from './auth.ts';
import { PreconditionError } from './etag.ts';
import { ConflictError, MediaTypeError, NotFoundError } from './rest-route.ts';

import { QUOTA_EXCEEDED_TYPE } from '../http/rate-limit.ts';

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
  500: 'internal',
  501: 'not-implemented',
  503: 'unavailable',
  504: 'timeout',
};

/** 429 has a registered type (RFC 9457 registry), shared with the Web API. */
export function problemType(status: number, reason?: string): string {
  if (status === 429 && reason === undefined) return QUOTA_EXCEEDED_TYPE;
  return PREFIX + (reason ?? BY_STATUS[status] ?? 'error');
}

/** What the API answers for a failure: the problem's fields and headers. */
export interface ApiProblem {
  status: number;
  type: string;
  detail: string;
  headers: Record<string, string>;
  errors?: { loc: (string | number)[]; msg: string; type: string }[];
  /** Ours, not the caller's: log it. */
  internal: boolean;
}

const own = (status: number, detail: string, headers: Record<string, string> = {}): ApiProblem => ({
  status,
  type: problemType(status),
  detail,
  headers,
  internal: false,
});

/** The one mapping of the Agents API's failures to problems (the surface sends it; the audit log records its status). */
export function problemOf(err: unknown): ApiProblem {
  if (err instanceof UnauthenticatedError) return own(401, err.message, { 'www-authenticate': err.challenge });
  if (err instanceof ForbiddenError) return own(403, err.message);
  if (err instanceof NotFoundError) return own(404, err.message);
  if (err instanceof MediaTypeError) return own(415, err.message);
  if (err instanceof BodyTooLargeError) return own(413, err.message);
  if (err instanceof PreconditionError) return own(412, err.message);
  if (err instanceof ConflictError) return own(409, err.message, err.headers);
  if (isRequestValidationError(err)) {
    return { ...own(422, 'The request is not valid.'), errors: err.detail.map((d) => ({ loc: d.loc, msg: d.msg, type: d.type })) };
  }
  const e = toHttpError(err);
  // A service that says when to try again (a throttled password check) is passed on as Retry-After.
  const retryAfter = err instanceof ConnectError ? err.metadata.get('retry-after') : null;
  const headers: Record<string, string> = retryAfter ? { 'retry-after': retryAfter } : {};
  return { status: e.status, type: problemType(e.status, e.reason), detail: e.message, headers, internal: e.internal };
}
