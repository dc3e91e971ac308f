// Each endpoint's failure streak: attempts failed in a row and since when, counted atomically
// across replicas; a success ends it. An endpoint that has failed for WEBHOOK_DISABLE_AFTER_SECONDS
// and at least WEBHOOK_DISABLE_AFTER_FAILURES attempts is disabled, which is an event
// (webhook_endpoint.disabled, written with the change through the outbox); the edge's relay
// e-mails the organization's owners about it. Its pending deliveries then end as failed when they
// come due; once enabled again, a range of them can be redelivered.
import { event, putWithEvents } from '../../common/events/outbox.ts';
import { SUBJECTS } from '../events.ts';
import type { WebhooksContext } from './context.ts';
import type { EndpointRecord } from './records.ts';

export async function recordSuccess(ctx: WebhooksContext, endpointId: string): Promise<void> {
  await Promise.all([ctx.streaks.delete(endpointId), ctx.successes.put({ _id: endpointId, at: ctx.now() })]);
}

/** Counts a failure; disables the endpoint when the streak is long enough. */
export async function recordFailure(ctx: WebhooksContext, endpoint: EndpointRecord): Promise<void> {
  const now = ctx.now();
  const streak = await ctx.streaks.increment(endpoint._id, 'failures', 1, { fields: { since: now } });
  const { disableAfterMs, disableAfterFailures } = ctx.config;
  if (streak.failures < disableAfterFailures || now - streak.since < disableAfterMs) return;
  await disable(ctx, endpoint._id, streak.since, streak.failures);
}

async function disable(ctx: WebhooksContext, endpointId: string, since: number, failures: number): Promise<void> {
  const current = await ctx.endpoints.get(endpointId);
  if (!current?.enabled) return;
  const next: EndpointRecord = {
    ...current,
    enabled: false,
    disabledReason: 'failing',
    version: current.version + 1,
    updatedAt: ctx.now(),
  };
  const disabled = event('webhook_endpoint.disabled', current.organizationId, {
    endpoint_id: current._id,
    url: current.url,
    reason: 'failing',
    failing_since: new Date(since).toISOString(),
    consecutive_failures: failures,
  });
  const subject = { collection: SUBJECTS.webhookEndpoints, records: ctx.endpoints };
  if (await putWithEvents(ctx.outbox, subject, next, current, [disabled], { expect: { version: current.version } })) {
    ctx.logger.warn(
      { endpoint: endpointId, organizationId: current.organizationId, failures },
      'webhook endpoint disabled: it kept failing',
    );
  }
}
