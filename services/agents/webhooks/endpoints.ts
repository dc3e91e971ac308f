// Webhook endpoints: create (the secret shown once), read, list, change (If-Match), delete, and
// rotate the secret with an overlap during which both secrets sign. The URL is checked against the
// outbound address policy when saved (services/common/net/address-policy.ts) and again at every
// delivery (sender.ts).
import { randomBytes } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CreateWebhookEndpointResponseSchema,
  DeleteWebhookEndpointResponseSchema,
  GetWebhookEndpointResponseSchema,
  ListWebhookEndpointsResponseSchema,
  RotateWebhookEndpointSecretResponseSchema,
  UpdateWebhookEndpointResponseSchema,
  WebhookEndpointSchema,
  type CreateWebhookEndpointRequest,
  type DeleteWebhookEndpointRequest,
  type GetWebhookEndpointRequest,
  type ListWebhookEndpointsRequest,
  type RotateWebhookEndpointSecretRequest,
  type UpdateWebhookEndpointRequest,
} from '../../../gen/mindgate/agents/v1/webhooks_pb.js';
import { isEventPattern } from '../../common/events/catalogue.ts';
import { refusedAddress } from '../../common/net/address-policy.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { secretContext, type WebhooksContext } from './context.ts';
import type { EndpointRecord, SecretRecord, StreakRecord } from './records.ts';
import { newSecret } from './signing.ts';

const MAX_ENDPOINTS = 50;
const MAX_SECRETS = 5;
export const ENDPOINT_ID = /^whe_[A-Za-z0-9]{20}$/;

const ms = (t: number | undefined) => (t === undefined ? undefined : timestampFromMs(t));

export function requireEndpointId(value: string): string {
  if (!ENDPOINT_ID.test(value)) invalid('endpoint_id', 'is not a webhook endpoint id (whe_...)');
  return value;
}

/** An endpoint of the organization; NOT_FOUND for another organization's, as for a missing one. */
export async function ownedEndpoint(ctx: WebhooksContext, organizationId: string, endpointId: string): Promise<EndpointRecord> {
  const record = await ctx.endpoints.get(requireEndpointId(endpointId));
  if (!record || record.organizationId !== organizationId) {
    throw new ConnectError(`webhook endpoint "${endpointId}" does not exist`, Code.NotFound);
  }
  return record;
}

async function requireUrl(ctx: WebhooksContext, value: string): Promise<string> {
  if (!value) invalid('url', 'is required');
  if (value.length > 2_000) invalid('url', 'must be at most 2000 characters');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    invalid('url', 'must be an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') invalid('url', 'must be an http or https URL');
  if (url.username || url.password) invalid('url', 'must not carry credentials (use the signature to authenticate)');
  if (url.hash) invalid('url', 'must not have a fragment');
  const refused = await refusedAddress(url.href, ctx.config.allowPrivateUrls);
  if (refused) {
    const hint = refused.endsWith('does not resolve') ? '' : '; the operator allows those with WEBHOOK_ALLOW_PRIVATE_URLS';
    invalid('url', `${refused}${hint}`);
  }
  return url.href;
}

function requireEventTypes(values: string[]): string[] {
  if (values.length === 0) invalid('event_types', 'must name at least one event type (or "*")');
  if (values.length > 100) invalid('event_types', `must have at most 100 items, got ${values.length}`);
  for (const [i, value] of values.entries()) {
    if (!isEventPattern(value)) invalid(`event_types[${i}]`, `"${value}" is not an event type of the catalogue, "<noun>.*" or "*"`);
  }
  return [...new Set(values)];
}

/** The secrets that still sign, newest first. */
export function liveSecrets(record: EndpointRecord, now: number): SecretRecord[] {
  return record.secrets.filter((s) => s.expiresAt === undefined || s.expiresAt > now);
}

export function toEndpoint(r: EndpointRecord, now: number, streak?: StreakRecord, lastSuccess?: number) {
  const previous = liveSecrets(r, now).slice(1);
  return create(WebhookEndpointSchema, {
    endpointId: r._id,
    organizationId: r.organizationId,
    url: r.url,
    eventTypes: r.eventTypes,
    description: r.description,
    enabled: r.enabled,
    disabledReason: r.disabledReason ?? '',
    secretPrefix: r.secrets[0]?.prefix ?? '',
    previousSecretExpireTime: ms(previous.length ? Math.max(...previous.map((s) => s.expiresAt!)) : undefined),
    etag: String(r.version),
    createdBy: r.createdBy,
    createTime: ms(r.createdAt),
    updateTime: ms(r.updatedAt),
    failingSince: ms(streak?.since),
    consecutiveFailures: streak?.failures ?? 0,
    lastSuccessTime: ms(lastSuccess),
  });
}

/** Endpoints as messages, with their failure streaks and last successes. */
async function withHealth(ctx: WebhooksContext, records: EndpointRecord[]) {
  const ids = records.map((r) => r._id);
  const [streaks, successes] = await Promise.all([ctx.streaks.getMany(ids), ctx.successes.getMany(ids)]);
  const streak = new Map(streaks.map((s) => [s._id, s]));
  const success = new Map(successes.map((s) => [s._id, s.at]));
  return records.map((r) => toEndpoint(r, ctx.now(), streak.get(r._id), success.get(r._id)));
}

function sealedSecret(ctx: WebhooksContext, endpointId: string, secret: string): SecretRecord {
  return { sealed: ctx.kek.seal(secret, secretContext(endpointId)), prefix: secret.slice(0, 10), createdAt: ctx.now() };
}

export async function createWebhookEndpoint(ctx: WebhooksContext, req: CreateWebhookEndpointRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const url = await requireUrl(ctx, req.url);
  const eventTypes = requireEventTypes(req.eventTypes);
  const description = requireText('description', req.description, 500);
  const createdBy = requireText('created_by', req.createdBy, 200);
  if ((await ctx.endpoints.count({ organizationId })) >= MAX_ENDPOINTS) {
    throw new ConnectError(`an organization may have at most ${MAX_ENDPOINTS} webhook endpoints`, Code.ResourceExhausted);
  }
  const id = `whe_${randomBytes(15).toString('base64url').replace(/[-_]/g, 'x')}`;
  const secret = newSecret();
  const now = ctx.now();
  const record: EndpointRecord = {
    _id: id,
    organizationId,
    url,
    eventTypes,
    description,
    enabled: !req.disabled,
    secrets: [sealedSecret(ctx, id, secret)],
    createdBy,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  await ctx.endpoints.put(record, { expect: null });
  return create(CreateWebhookEndpointResponseSchema, { endpoint: toEndpoint(record, now), secret });
}

export async function getWebhookEndpoint(ctx: WebhooksContext, req: GetWebhookEndpointRequest) {
  const record = await ownedEndpoint(ctx, requireOrganization(req.organizationId), req.endpointId);
  const [endpoint] = await withHealth(ctx, [record]);
  return create(GetWebhookEndpointResponseSchema, { endpoint });
}

export async function listWebhookEndpoints(ctx: WebhooksContext, req: ListWebhookEndpointsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(
    ctx.endpoints,
    { organizationId },
    { pageSize: req.pageSize, pageToken: req.pageToken },
    { field: 'createdAt', scope: `webhook-endpoints:${organizationId}` },
  );
  return create(ListWebhookEndpointsResponseSchema, { endpoints: await withHealth(ctx, page.items), nextPageToken: page.nextPageToken });
}

const STALE = 'the endpoint changed since it was read (If-Match): read it again';

export async function updateWebhookEndpoint(ctx: WebhooksContext, req: UpdateWebhookEndpointRequest) {
  const organizationId = requireOrganization(req.organizationId);
  if (req.etag !== '' && !/^[0-9]{1,15}$/.test(req.etag)) invalid('etag', 'is not an etag of a webhook endpoint');
  const current = await ownedEndpoint(ctx, organizationId, req.endpointId);
  if (req.etag !== '' && req.etag !== String(current.version)) throw failure(STALE, Code.FailedPrecondition, REASONS.etagMismatch);
  const next: EndpointRecord = { ...current, version: current.version + 1, updatedAt: ctx.now() };
  if (req.url !== undefined) next.url = await requireUrl(ctx, req.url);
  if (req.eventTypes) next.eventTypes = requireEventTypes(req.eventTypes.types);
  if (req.description !== undefined) next.description = requireText('description', req.description, 500);
  if (req.enabled !== undefined) next.enabled = req.enabled;
  if (next.enabled) delete next.disabledReason;
  if (!(await ctx.endpoints.put(next, { expect: { version: current.version } }))) {
    if (req.etag !== '') throw failure(STALE, Code.FailedPrecondition, REASONS.etagMismatch);
    throw new ConnectError('the endpoint changed concurrently; try again', Code.Aborted);
  }
  // Enabled again: its failures so far no longer count towards disabling it.
  if (next.enabled && !current.enabled) await ctx.streaks.delete(next._id);
  const [endpoint] = await withHealth(ctx, [next]);
  return create(UpdateWebhookEndpointResponseSchema, { endpoint });
}

export async function deleteWebhookEndpoint(ctx: WebhooksContext, req: DeleteWebhookEndpointRequest) {
  const record = await ownedEndpoint(ctx, requireOrganization(req.organizationId), req.endpointId);
  await ctx.endpoints.delete(record._id);
  await Promise.all([ctx.streaks.delete(record._id), ctx.successes.delete(record._id)]);
  // Its pending deliveries end as failed when they come due (dispatcher.ts): no endpoint to send to.
  return create(DeleteWebhookEndpointResponseSchema, {});
}

export async function rotateWebhookEndpointSecret(ctx: WebhooksContext, req: RotateWebhookEndpointSecretRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const overlap = req.overlapSeconds ?? ctx.config.secretOverlapSeconds;
  if (overlap < 0 || overlap > 604_800) invalid('overlap_seconds', `must be from 0 to 604800, got ${overlap}`);
  const current = await ownedEndpoint(ctx, organizationId, req.endpointId);
  const now = ctx.now();
  const secret = newSecret();
  const kept = liveSecrets(current, now)
    .map((s, i) => (i === 0 ? { ...s, expiresAt: now + overlap * 1000 } : s))
    .filter((s) => s.expiresAt! > now);
  const next: EndpointRecord = {
    ...current,
    secrets: [sealedSecret(ctx, current._id, secret), ...kept].slice(0, MAX_SECRETS),
    version: current.version + 1,
    updatedAt: now,
  };
  if (!(await ctx.endpoints.put(next, { expect: { version: current.version } }))) {
    throw new ConnectError('the endpoint changed concurrently; try again', Code.Aborted);
  }
  const [endpoint] = await withHealth(ctx, [next]);
  return create(RotateWebhookEndpointSecretResponseSchema, { endpoint, secret });
}
