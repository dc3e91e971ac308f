// The dashboard on the web listener: its bundle compiled, its OAuth client written, its routes
// registered (docs/dashboard.md).
import type { AppContext } from '../context.ts';
import type { Router } from '../http/router.ts';
import type { Logger } from '../../services/common/log.ts';
import { buildDashboard } from './bundle.ts';
import { dashboardUrls, registerDashboardClient } from './oauth-client.ts';
import { registerDashboardRoutes } from './routes.ts';

export async function mountDashboard(router: Router, ctx: AppContext, logger: Logger): Promise<void> {
  const [bundle] = await Promise.all([
    buildDashboard(),
    registerDashboardClient(ctx.stores.records, ctx.keyEncryption, dashboardUrls(ctx.config.publicUrls.web), logger),
  ]);
  registerDashboardRoutes(router, ctx.config, bundle);
}
