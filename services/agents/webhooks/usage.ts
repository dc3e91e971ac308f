// Events counted per organization and calendar month (UTC), shared by every replica: those
// published to endpoints, and those dropped because the plan's limit was reached. Test events are
// not counted.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { GetWebhookUsageResponseSchema, type GetWebhookUsageRequest } from '../../../gen/mindgate/agents/v1/webhooks_pb.js';
import { requireOrganization } from '../../common/rpc/validate.ts';
import type { WebhooksContext } from './context.ts';

/** The calendar month (UTC) of `at`: its key, start and end. */
export function monthOf(at: number): { key: string; start: number; end: number } {
  const d = new Date(at);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return { key: `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`, start, end };
}

const usageId = (organizationId: string, at: number) => `${organizationId}|${monthOf(at).key}`;

/**
 * Counts one event against the month's limit; false when the limit is reached, and the event is
 * then counted as dropped instead. The count is an atomic increment, so replicas publishing at
 * once never let more than `limit` through.
 */
export async function countEvent(ctx: WebhooksContext, organizationId: string, limit: number): Promise<boolean> {
  const now = ctx.now();
  const id = usageId(organizationId, now);
  // Kept a month past the month's end, so last month's figures can still be read.
  const init = { expiresAt: monthOf(monthOf(now).end).end };
  const counted = await ctx.usage.increment(id, 'published', 1, init);
  if ((counted.published ?? 0) <= limit) return true;
  await ctx.usage.increment(id, 'published', -1, init);
  await ctx.usage.increment(id, 'dropped', 1, init);
  return false;
}

export async function getWebhookUsage(ctx: WebhooksContext, req: GetWebhookUsageRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const now = ctx.now();
  const month = monthOf(now);
  const usage = await ctx.usage.get(usageId(organizationId, now));
  return create(GetWebhookUsageResponseSchema, {
    periodStart: timestampFromMs(month.start),
    periodEnd: timestampFromMs(month.end),
    published: BigInt(usage?.published ?? 0),
    dropped: BigInt(usage?.dropped ?? 0),
  });
}
