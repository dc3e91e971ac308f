import { toHttpError } from '../errors.ts';
import type { AppContext } from '../context.ts';
import type { Surface } from '../http/listener.ts';
import { sendJson } from '../http/respond.ts';
import { Router } from '../http/router.ts';

export const GATEWAY_VERSION = '0.3.0';

/** The gateway `{base_url}`. Errors follow FastAPI's shape: `{"detail": "..."}`. */
export function createGatewaySurface(ctx: AppContext): Surface {
  const router = new Router();
  router.get('/health', ({ res }) => sendJson(res, 200, { status: 'ok', service: 'gateway', version: GATEWAY_VERSION }));
  return {
    name: 'gateway',
    router,
    notFound: ({ res }) => sendJson(res, 404, { detail: 'Not Found' }),
    methodNotAllowed: ({ res }, allowed) => sendJson(res, 405, { detail: 'Method Not Allowed' }, { allow: allowed.join(', ') }),
    onError({ res, requestId }, err) {
      const e = toHttpError(err);
      if (e.internal) ctx.logger.error({ requestId, err }, 'gateway request failed');
      sendJson(res, e.status, { detail: e.message });
    },
  };
}
