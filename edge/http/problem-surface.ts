import type { Logger } from '../../services/common/log.ts';
import { toHttpError } from '../errors.ts';
import type { Surface } from './listener.ts';
import { sendProblem } from './respond.ts';
import type { Router } from './router.ts';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  429: 'Too Many Requests',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export function statusTitle(status: number): string {
  return TITLES[status] ?? 'Error';
}

/** A surface whose errors are RFC 9457 problem documents (the REST API, the Web API). */
export function createProblemSurface(name: string, router: Router, logger: Logger): Surface {
  return {
    name,
    router,
    notFound(ctx) {
      sendProblem(ctx.res, { title: 'Not Found', status: 404, detail: `No route for ${ctx.path}`, instance: ctx.path });
    },
    methodNotAllowed(ctx, allowed) {
      sendProblem(
        ctx.res,
        { title: 'Method Not Allowed', status: 405, detail: `Allowed: ${allowed.join(', ')}`, instance: ctx.path },
        { allow: allowed.join(', ') },
      );
    },
    onError(ctx, err) {
      const e = toHttpError(err);
      if (e.internal) logger.error({ requestId: ctx.requestId, err }, 'request failed');
      sendProblem(ctx.res, { title: statusTitle(e.status), status: e.status, detail: e.message, instance: ctx.path });
    },
  };
}
