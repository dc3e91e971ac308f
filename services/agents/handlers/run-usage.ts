// RunUsageService: an organization's runs this calendar month (UTC), counted as the plan's run
// limit counts them (run-limit.ts), for the Agents API's usage (edge/api/usage.ts).
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { ConnectRouter } from '@connectrpc/connect';
import { GetRunUsageResponseSchema, RunUsageService, type GetRunUsageRequest } from '../../../gen/mindgate/agents/v1/run_usage_pb.js';
import { requireOrganization } from '../../common/rpc/validate.ts';
import { countRunsThisMonth, monthStart } from './run-limit.ts';
import type { RunsContext } from './runs.ts';

export { RunUsageService };

export async function getRunUsage(ctx: RunsContext, req: GetRunUsageRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const now = ctx.now();
  const start = monthStart(now);
  const d = new Date(start);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return create(GetRunUsageResponseSchema, {
    periodStart: timestampFromMs(start),
    periodEnd: timestampFromMs(end),
    queued: BigInt(await countRunsThisMonth(ctx.runs, organizationId, now)),
  });
}

export function runUsageRoutes(router: ConnectRouter, ctx: RunsContext): void {
  router.service(RunUsageService, { getRunUsage: (req) => getRunUsage(ctx, req) });
}
