import type { AppContext } from '../context.ts';
import type { Surface } from '../http/listener.ts';
import { createProblemSurface } from '../http/problem-surface.ts';
import { sendJson } from '../http/respond.ts';
import { Router } from '../http/router.ts';

/** The REST API `{api_url}`: the system of record behind the dashboard. */
export function createApiSurface(ctx: AppContext): Surface {
  const router = new Router();
  router.get('/health', ({ res }) => sendJson(res, 200, { status: 'ok', service: 'api' }));
  return createProblemSurface('api', router, ctx.logger);
}
