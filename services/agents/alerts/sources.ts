// Alert sources: an organization's inbound endpoints, each with its own secret, shown once and
// kept sealed under the KEK (an envelope bound to the source, like webhook endpoint secrets). A
// payload is accepted when it carries the secret as `Authorization: Bearer` (what Alertmanager's
// http_config sends) or, for the generic format, an HMAC-SHA256 of `<timestamp>.<body>` under the
// secret (Mindgate-Timestamp, Mindgate-Signature: sha256=<hex>) within five minutes of our clock.
// Both compare in constant time; every refusal is the same UNAUTHENTICATED, so the answer does not
// tell a missing source from a wrong secret.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  AlertFormat,
  AlertSourceSchema,
  CreateAlertSourceResponseSchema,
  DeleteAlertSourceResponseSchema,
  GetAlertSourceResponseSchema,
  ListAlertSourcesResponseSchema,
  RotateAlertSourceSecretResponseSchema,
  type AlertSource,
  type CreateAlertSourceRequest,
  type DeleteAlertSourceRequest,
  type GetAlertSourceRequest,
  type ListAlertSourcesRequest,
  type ReceiveAlertsRequest,
  type RotateAlertSourceSecretRequest,
} from '../../../gen/mindgate/agents/v1/alerts_pb.js';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { newId } from '../handlers/organizations.ts';
import { alertSecretContext, type AlertSourceRecord, type AlertsContext } from './records.ts';

const SOURCE_ID = /^als_[A-Za-z0-9]{1,60}$/;
const SECRET_PREFIX = 'alsec_';
/** An organization's sources at most. */
export const MAX_SOURCES = 50;
/** How far a signed generic payload's timestamp may be from our clock. */
const SIGNATURE_TOLERANCE_MS = 5 * 60_000;

const newSecret = () => SECRET_PREFIX + randomBytes(32).toString('base64url');

export const toSource = (r: AlertSourceRecord): AlertSource =>
  create(AlertSourceSchema, {
    sourceId: r._id,
    organizationId: r.organizationId,
    name: r.name,
    format: r.format,
    secretPrefix: r.prefix,
    createdBy: r.createdBy,
    etag: String(r.version),
    createTime: timestampFromMs(r.createdAt),
    lastReceiveTime: r.lastReceivedAt === undefined ? undefined : timestampFromMs(r.lastReceivedAt),
  });

export async function ownedSource(ctx: AlertsContext, organizationId: string, sourceId: string): Promise<AlertSourceRecord> {
  if (!SOURCE_ID.test(sourceId)) invalid('source_id', 'is not an alert source id');
  const source = await ctx.sources.get(sourceId);
  if (!source || source.organizationId !== organizationId)
    throw new ConnectError(`alert source "${sourceId}" does not exist`, Code.NotFound);
  return source;
}

const sealed = (ctx: AlertsContext, id: string, secret: string) => ({
  sealed: ctx.kek.seal(secret, alertSecretContext(id)),
  prefix: secret.slice(0, SECRET_PREFIX.length + 4),
});

export async function createAlertSource(ctx: AlertsContext, req: CreateAlertSourceRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const name = requireText('name', req.name.trim(), 200, { required: true });
  if (req.format !== AlertFormat.ALERTMANAGER && req.format !== AlertFormat.GENERIC) invalid('format', 'must be alertmanager or generic');
  if ((await ctx.sources.count({ organizationId })) >= MAX_SOURCES) {
    throw new ConnectError(`an organization has at most ${MAX_SOURCES} alert sources`, Code.ResourceExhausted);
  }
  const id = newId('als');
  const secret = newSecret();
  const record: AlertSourceRecord = {
    _id: id,
    organizationId,
    name,
    format: req.format,
    ...sealed(ctx, id, secret),
    createdBy: requireText('created_by', req.createdBy, 200),
    createdAt: ctx.now(),
    version: 1,
  };
  await ctx.sources.put(record, { expect: null });
  return create(CreateAlertSourceResponseSchema, { source: toSource(record), secret });
}

export async function getAlertSource(ctx: AlertsContext, req: GetAlertSourceRequest) {
  const source = await ownedSource(ctx, requireOrganization(req.organizationId), req.sourceId);
  return create(GetAlertSourceResponseSchema, { source: toSource(source) });
}

export async function listAlertSources(ctx: AlertsContext, req: ListAlertSourcesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const page = await findPage(ctx.sources, { organizationId }, req, { field: 'createdAt', scope: `alert-sources:${organizationId}` });
  return create(ListAlertSourcesResponseSchema, { sources: page.items.map(toSource), nextPageToken: page.nextPageToken });
}

export async function deleteAlertSource(ctx: AlertsContext, req: DeleteAlertSourceRequest) {
  const source = await ownedSource(ctx, requireOrganization(req.organizationId), req.sourceId);
  await ctx.sources.delete(source._id);
  return create(DeleteAlertSourceResponseSchema, {});
}

export async function rotateAlertSourceSecret(ctx: AlertsContext, req: RotateAlertSourceSecretRequest) {
  const organizationId = requireOrganization(req.organizationId);
  for (;;) {
    const current = await ownedSource(ctx, organizationId, req.sourceId);
    const secret = newSecret();
    const next: AlertSourceRecord = { ...current, ...sealed(ctx, current._id, secret), version: current.version + 1 };
    if (await ctx.sources.put(next, { expect: { version: current.version } })) {
      return create(RotateAlertSourceSecretResponseSchema, { source: toSource(next), secret });
    }
  }
}

const same = (a: Buffer, b: Buffer) => {
  // Digests first: timingSafeEqual needs equal lengths, and the length must not leak either.
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
};

function signatureHolds(secret: string, req: ReceiveAlertsRequest, now: number): boolean {
  const seconds = Number(req.timestamp);
  if (!/^\d{1,12}$/.test(req.timestamp) || Math.abs(now - seconds * 1000) > SIGNATURE_TOLERANCE_MS) return false;
  const given = /^sha256=([0-9a-f]{64})$/i.exec(req.signature.trim())?.[1];
  if (!given) return false;
  const expected = createHmac('sha256', secret).update(`${req.timestamp}.`).update(req.payload).digest();
  return same(Buffer.from(given.toLowerCase(), 'hex'), expected);
}

const refused = () => new ConnectError('the alert source does not exist, or the credentials are not its secret', Code.Unauthenticated);

/** The source the payload was sent to, when it came with the source's secret; UNAUTHENTICATED otherwise. */
export async function authenticateSource(ctx: AlertsContext, req: ReceiveAlertsRequest): Promise<AlertSourceRecord> {
  const source = SOURCE_ID.test(req.sourceId) ? await ctx.sources.get(req.sourceId) : undefined;
  if (!source) throw refused();
  const secret = ctx.kek.open(source.sealed, alertSecretContext(source._id));
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.authorization)?.[1];
  if (bearer !== undefined && same(Buffer.from(bearer), Buffer.from(secret))) return source;
  if (source.format === AlertFormat.GENERIC && req.signature !== '' && signatureHolds(secret, req, ctx.now())) return source;
  throw refused();
}
