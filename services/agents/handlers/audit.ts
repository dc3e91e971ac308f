// The audit log: append-only events, one per change made through the Agents API (and per refused
// attempt), listed newest first. Each event expires after its organization's retention
// (`settings.auditRetentionDays` on the organization, 365 days by default), so the store deletes
// old events by itself.
import { randomBytes } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs, timestampMs, type Timestamp } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AuditEventSchema,
  ListEventsResponseSchema,
  RecordEventResponseSchema,
  type ListEventsRequest,
  type RecordEventRequest,
} from '../../../gen/mindgate/agents/v1/audit_pb.js';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { Filter, RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import type { OrganizationRecord } from './organizations.ts';

export const DEFAULT_AUDIT_RETENTION_DAYS = 365;
const DAY_MS = 86_400_000;
const ACTOR_KINDS = new Set(['user', 'api_key', 'client']);
const OUTCOMES = new Set(['success', 'denied', 'failed']);

export interface AuditRecord extends RecordDoc {
  organizationId: string;
  actorKind: string;
  actorId: string;
  action: string;
  target: string;
  status: number;
  outcome: string;
  ip: string;
  userAgent: string;
  requestId: string;
  createdAt: number;
  /** Absent on events without details (every REST change). */
  details?: Record<string, string>;
}

export interface AuditContext {
  events: RecordCollection<AuditRecord>;
  organizations: RecordCollection<OrganizationRecord>;
  now: () => number;
}

function toEvent(r: AuditRecord) {
  return create(AuditEventSchema, {
    eventId: r._id,
    organizationId: r.organizationId,
    actorKind: r.actorKind,
    actorId: r.actorId,
    action: r.action,
    target: r.target,
    status: r.status,
    outcome: r.outcome,
    ip: r.ip,
    userAgent: r.userAgent,
    requestId: r.requestId,
    createTime: timestampFromMs(r.createdAt),
    details: r.details ?? {},
  });
}

/** Event ids sort by time: a page of events and its ties read in the order they happened. */
function newEventId(now: number): string {
  return `evt_${now.toString(36).padStart(9, '0')}${randomBytes(8).toString('hex')}`;
}

const MAX_DETAILS = 10;
const DETAIL_KEY = /^[a-z][a-z0-9_]{0,63}$/;

function requireDetails(details: Record<string, string>): Record<string, string> | undefined {
  const entries = Object.entries(details);
  if (entries.length === 0) return undefined;
  if (entries.length > MAX_DETAILS) invalid('event.details', `must have at most ${MAX_DETAILS} entries`);
  for (const [key, value] of entries) {
    if (!DETAIL_KEY.test(key)) invalid('event.details', `key "${key.slice(0, 64)}" must be 1-64 characters of a-z, 0-9 and "_"`);
    requireText(`event.details.${key}`, value, 1_000);
  }
  return Object.fromEntries(entries);
}

export async function recordEvent(ctx: AuditContext, req: RecordEventRequest) {
  const e = req.event;
  if (!e) invalid('event', 'is required');
  const organizationId = requireOrganization(e.organizationId);
  if (!ACTOR_KINDS.has(e.actorKind)) invalid('event.actor_kind', 'must be user, api_key or client');
  if (!OUTCOMES.has(e.outcome)) invalid('event.outcome', 'must be success, denied or failed');
  if (!Number.isInteger(e.status) || e.status < 100 || e.status > 599) invalid('event.status', 'must be an HTTP status');
  const organization = await ctx.organizations.get(organizationId);
  if (!organization) throw new ConnectError(`organization "${organizationId}" does not exist`, Code.NotFound);
  const now = ctx.now();
  const retentionDays = organization.settings?.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS;
  const record: AuditRecord = {
    _id: newEventId(now),
    organizationId,
    actorKind: e.actorKind,
    actorId: requireText('event.actor_id', e.actorId, 256, { required: true }),
    action: requireText('event.action', e.action, 100, { required: true }),
    target: requireText('event.target', e.target, 1_000, { required: true }),
    status: e.status,
    outcome: e.outcome,
    ip: requireText('event.ip', e.ip, 64),
    userAgent: requireText('event.user_agent', e.userAgent, 512),
    requestId: requireText('event.request_id', e.requestId, 128),
    createdAt: now,
    expiresAt: now + retentionDays * DAY_MS,
    details: requireDetails(e.details),
  };
  await ctx.events.put(record, { expect: null });
  return create(RecordEventResponseSchema, { event: toEvent(record) });
}

const at = (t: Timestamp | undefined) => (t ? timestampMs(t) : undefined);

export async function listEvents(ctx: AuditContext, req: ListEventsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const filter: Filter = { organizationId };
  if (req.actorId) filter.actorId = requireText('actor_id', req.actorId, 256);
  if (req.action) filter.action = requireText('action', req.action, 100);
  if (req.outcome) {
    if (!OUTCOMES.has(req.outcome)) invalid('outcome', 'must be success, denied or failed');
    filter.outcome = req.outcome;
  }
  const since = at(req.since);
  const until = at(req.until);
  // The filters are part of the scope: a token keeps its meaning only for the same query.
  const scope = `audit:${organizationId}:${req.actorId}:${req.action}:${req.outcome}:${since ?? ''}:${until ?? ''}`;
  const page = await findPage(
    ctx.events,
    filter,
    { pageSize: req.pageSize, pageToken: req.pageToken },
    { field: 'createdAt', direction: 'desc', range: { gte: since, lt: until }, scope, maxPageSize: 1_000 },
  );
  return create(ListEventsResponseSchema, { events: page.items.map(toEvent), nextPageToken: page.nextPageToken });
}
