// `/livez` and `/readyz` on every public listener, answered before the surface routes (so no
// gateway server name or site page can shadow them):
// - `/livez`: 200 while the process and its event loop answer. It touches no store, so a store
//   outage never restarts the process.
// - `/readyz`: 200 when what this listener needs answers within the deadline (edge/readiness.ts),
//   503 naming what does not. `?exclude=brain,billing` leaves checks out, as Kubernetes' own
//   `/readyz?exclude=` does. Reasons are kinds of failure (a timeout, ECONNREFUSED), never
//   addresses; the log has the details.
import { runChecks, type Check } from '../../services/common/readiness.ts';
import { sendJson } from './respond.ts';
import type { RouteContext } from './router.ts';

/** Answers the probe paths; returns false for every other request. */
export type ProbeHandler = (ctx: RouteContext) => boolean;

const NO_STORE = { 'cache-control': 'no-store' };

async function ready(ctx: RouteContext, listener: string, checks: Check[]): Promise<void> {
  const excluded = new Set(
    ctx.query
      .getAll('exclude')
      .flatMap((v) => v.split(','))
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const result = await runChecks(checks.filter((check) => !excluded.has(check.name)));
  const failing = result.checks.filter((c) => !c.ok).map((c) => c.name);
  sendJson(
    ctx.res,
    result.ready ? 200 : 503,
    {
      status: result.ready ? 'ready' : 'not_ready',
      listener,
      ...(failing.length ? { not_ready: failing } : {}),
      checks: result.checks,
      ...(excluded.size ? { excluded: [...excluded] } : {}),
    },
    NO_STORE,
  );
}

export function createProbeHandler(listener: string, checks: Check[]): ProbeHandler {
  return (ctx) => {
    const method = ctx.req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    if (ctx.path === '/livez') {
      sendJson(ctx.res, 200, { status: 'ok', listener }, NO_STORE);
      return true;
    }
    if (ctx.path === '/readyz') {
      // runChecks never rejects (each check turns its failure into a result).
      void ready(ctx, listener, checks);
      return true;
    }
    return false;
  };
}
