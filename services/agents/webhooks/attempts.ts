// One attempt of a claimed delivery: the event's body signed with every live secret of the
// endpoint (a fresh webhook-timestamp each time, the same webhook-id), sent, logged with its
// request headers, status, the start of the response, latency and error; then the delivery is
// completed, or its next attempt scheduled: 3 times later each time from WEBHOOK_RETRY_BASE_MS,
// at most 6 hours, ±20% (so a recovered receiver does not meet every retry at once), until
// WEBHOOK_MAX_ATTEMPTS; and the endpoint's failure streak is updated (health.ts).
import { secretContext, type WebhooksContext } from './context.ts';
import { liveSecrets } from './endpoints.ts';
import { recordFailure, recordSuccess } from './health.ts';
import { LOG_KEPT_MS, type DeliveryRecord, type EndpointRecord } from './records.ts';
import type { Sender } from './sender.ts';
import { signatures } from './signing.ts';

const MAX_DELAY_MS = 6 * 3_600_000;
export const USER_AGENT = 'Mindgate-Webhooks/1.0';

/** The wait before the next attempt of a round, after `failures` failed ones. */
export function retryDelay(baseMs: number, failures: number, random = Math.random): number {
  const delay = Math.min(baseMs * 3 ** (failures - 1), MAX_DELAY_MS);
  return Math.round(delay * (0.8 + 0.4 * random()));
}

/** What became of an attempt, or why the delivery ends without one (`attempted` false). */
export interface Outcome {
  status: number;
  error: string;
  attempted: boolean;
}

export async function finishDelivery(ctx: WebhooksContext, d: DeliveryRecord, outcome: Outcome): Promise<void> {
  const now = ctx.now();
  const ok = outcome.attempted && outcome.status >= 200 && outcome.status < 300;
  const attempts = d.attempts + (outcome.attempted ? 1 : 0);
  const failed = !ok && (!outcome.attempted || attempts - d.attemptBase >= ctx.config.maxAttempts);
  const next: DeliveryRecord = { ...d, attempts, lastStatusCode: outcome.status, lastError: outcome.error, version: d.version + 1 };
  delete next.leaseOwner;
  if (ok || failed) {
    next.status = ok ? 'succeeded' : 'failed';
    next.completedAt = now;
    delete next.dueAt;
  } else {
    next.dueAt = now + retryDelay(ctx.config.retryBaseMs, attempts - d.attemptBase);
  }
  // A redelivery meanwhile (the version moved on) takes precedence over this result.
  await ctx.deliveries.put(next, { expect: { version: d.version } });
}

export const endWithout = (ctx: WebhooksContext, d: DeliveryRecord, error: string) =>
  finishDelivery(ctx, d, { status: 0, error, attempted: false });

export async function attemptDelivery(ctx: WebhooksContext, sender: Sender, d: DeliveryRecord, endpoint: EndpointRecord): Promise<void> {
  const event = await ctx.events.get(d.eventId);
  if (!event) return endWithout(ctx, d, 'the event is no longer kept');
  const now = ctx.now();
  const timestamp = Math.floor(now / 1000);
  const secrets = liveSecrets(endpoint, now).map((s) => ctx.kek.open(s.sealed, secretContext(endpoint._id)));
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': d.eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures(secrets, d.eventId, timestamp, event.body),
  };
  const result = await sender.send(endpoint.url, headers, event.body);
  const number = d.attempts + 1;
  await ctx.attempts.put({
    _id: `${d._id}:${number}`,
    deliveryId: d._id,
    organizationId: d.organizationId,
    number,
    startedAt: now,
    url: endpoint.url,
    requestHeaders: headers,
    responseStatus: result.status,
    responseBody: result.body,
    latencyMs: result.latencyMs,
    error: result.error,
    expiresAt: now + LOG_KEPT_MS,
  });
  await finishDelivery(ctx, d, { ...result, attempted: true });
  if (d.test) return;
  if (result.error === '') await recordSuccess(ctx, endpoint._id);
  else await recordFailure(ctx, endpoint);
}
