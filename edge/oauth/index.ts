import type { AppContext } from '../context.ts';
import type { Surface } from '../http/listener.ts';
import { createProblemSurface } from '../http/problem-surface.ts';
import { sendJson } from '../http/respond.ts';
import { Router } from '../http/router.ts';

/** The authorization server `{auth_url}`. */
export function createAuthSurface(ctx: AppContext): Surface {
  const router = new Router();
  router.get('/health', ({ res }) => sendJson(res, 200, { status: 'ok', service: 'auth' }));
  return createProblemSurface('auth', router, ctx.logger);
}
