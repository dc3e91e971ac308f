import { timingSafeEqual, createHash, randomUUID } from 'node:crypto';
import { Code, ConnectError, type HandlerContext, type Interceptor } from '@connectrpc/connect';
import type { Logger } from '../log.ts';
import { storeUnavailableIn } from '../storage/unavailable.ts';
import { INTERNAL_TOKEN_HEADER, peerKey, REQUEST_ID_HEADER, requestIdKey } from './context.ts';
import { failure, REASONS } from './reasons.ts';

/** Services that answer without the internal credential: operators and probes use them. */
const OPEN_SERVICES = new Set(['grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection']);

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id to log a call under: x-request-id if sane, else the trace id of traceparent. */
export function pickRequestId(headers: Headers): string {
  const given = headers.get(REQUEST_ID_HEADER);
  if (given && REQUEST_ID.test(given)) return given;
  const trace = TRACEPARENT.exec(headers.get('traceparent') ?? '');
  if (trace) return trace[1];
  return randomUUID();
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Compares secrets in constant time (hashing first so lengths do not leak either). */
export function secretsEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

export interface RequestGateOptions {
  internalToken: string;
  /** Where refused credentials are reported. */
  logger: Logger;
  /** True once the server drains: new calls are refused with UNAVAILABLE (clients retry elsewhere). */
  draining?: () => boolean;
}

/**
 * A request gate: runs once headers are in, before any message is read. It records the request
 * id, refuses every new call while the server drains, and refuses calls without the internal
 * credential, except to health and reflection. A refused credential is an operator's error (two
 * processes configured with different INTERNAL_TOKEN), so it is logged here, where the caller's
 * address is known, and the refusal carries a reason the edge recognises.
 */
export function createRequestGate(options: RequestGateOptions) {
  return (ctx: HandlerContext): void => {
    const requestId = pickRequestId(ctx.requestHeader);
    ctx.values.set(requestIdKey, requestId);
    ctx.responseHeader.set(REQUEST_ID_HEADER, requestId);
    if (options.draining?.()) throw failure('the service is shutting down; retry', Code.Unavailable, REASONS.shuttingDown);
    if (OPEN_SERVICES.has(ctx.service.typeName)) return;
    const given = ctx.requestHeader.get(INTERNAL_TOKEN_HEADER);
    if (!given || !secretsEqual(given, options.internalToken)) {
      const rpc = `${ctx.service.typeName}/${ctx.method.name}`;
      const peer = ctx.values.get(peerKey);
      const why = given ? 'a wrong internal credential' : 'no internal credential';
      options.logger.warn(
        { rpc, peer, requestId, credential: given ? 'wrong' : 'missing' },
        `refused ${rpc} from ${peer}: ${why} (x-internal-token); every process must share INTERNAL_TOKEN`,
      );
      throw failure('missing or invalid internal credential', Code.Unauthenticated, REASONS.internalCredential);
    }
  };
}

/** Logs one line per call with its duration and outcome code. */
export function createLoggingInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const requestId = req.contextValues.get(requestIdKey);
    const fields = { rpc: `${req.service.typeName}/${req.method.name}`, requestId };
    try {
      const res = await next(req);
      if (!res.stream) {
        logger.info({ ...fields, code: 'ok', ms: round(performance.now() - started) }, 'rpc');
      }
      return res;
    } catch (err) {
      const error = ConnectError.from(err);
      const line = { ...fields, code: Code[error.code], ms: round(performance.now() - started) };
      if (error.code === Code.Internal || error.code === Code.Unknown) {
        logger.error({ ...line, err }, 'rpc failed');
      } else {
        logger.info({ ...line, reason: error.rawMessage }, 'rpc');
      }
      throw error;
    }
  };
}

/**
 * A store that does not answer fails the call at once with UNAVAILABLE and a plain message (the
 * client retries; readiness reports the outage), rather than as an internal error with the
 * driver's text. The driver's reason is logged here, once.
 */
export function createStoreFailureInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      const unavailable = storeUnavailableIn(err);
      if (!unavailable) throw err;
      const rpc = `${req.service.typeName}/${req.method.name}`;
      logger.warn(
        { rpc, requestId: req.contextValues.get(requestIdKey), store: unavailable.store, reason: unavailable.message },
        'store unavailable',
      );
      throw new ConnectError(`the ${unavailable.store} store is not answering; retry shortly`, Code.Unavailable);
    }
  };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
