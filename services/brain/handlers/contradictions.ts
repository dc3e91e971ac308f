import { createHash } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  FlagContradictionResponseSchema,
  ListContradictionsResponseSchema,
  ResolveContradictionResponseSchema,
  type Contradiction,
  type FlagContradictionRequest,
  type ItemStatus,
  type ListContradictionsRequest,
  type ResolveContradictionRequest,
} from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { putWithEvents } from '../../common/events/outbox.ts';
import { invalid, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { Filter } from '../../common/storage/records/interface.ts';
import type { BrainContext } from '../context.ts';
import { contradictionClosed, contradictionFlagged, contradictionSubject } from '../events.ts';
import {
  ITEM_ID,
  itemDocId,
  newItemId,
  statusName,
  toContradiction,
  type ContradictionRecord,
  type ItemStatusName,
  type RefRecord,
} from '../items-record.ts';
import { isLive, memoryId, refString, type MemoryRecord, type SourceRecord } from '../memory-record.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import { notFound, requireNamespace, requireRefs, sourceOf } from './validate.ts';

function memberSet(refs: RefRecord[]): string {
  return refs
    .map((r) => refString(r.namespace, r.key))
    .sort()
    .join('|');
}

async function createOrFind(
  ctx: BrainContext,
  organizationId: string,
  members: (RefRecord & { version: number })[],
  reason: string,
  flaggedBy: 'detector' | 'client',
  source: SourceRecord,
): Promise<{ record: ContradictionRecord; created: boolean }> {
  const set = memberSet(members);
  const [open] = await ctx.contradictions.find({ organizationId, memberSet: set, status: 'open' }, { limit: 1 });
  if (open) return { record: open, created: false };
  const id = newItemId('ctr');
  const record: ContradictionRecord = {
    _id: itemDocId(organizationId, id),
    id,
    organizationId,
    members,
    refs: members.map((m) => refString(m.namespace, m.key)),
    memberSet: set,
    reason,
    status: 'open',
    resolution: '',
    flaggedBy,
    source,
    createdAt: ctx.now(),
    rev: 1,
  };
  await putWithEvents(ctx.events, contradictionSubject(ctx), record, undefined, [contradictionFlagged(record)], { expect: null });
  return { record, created: true };
}

/** Flags a contradiction the write-time detector found; undefined when one was already open. */
export async function flagDetected(
  ctx: BrainContext,
  organizationId: string,
  written: MemoryRecord,
  other: MemoryRecord,
  reason: string,
  source: SourceRecord,
): Promise<Contradiction | undefined> {
  const members = [written, other].map((r) => ({ namespace: r.namespace, key: r.key, version: r.version }));
  const { record, created } = await createOrFind(ctx, organizationId, members, reason, 'detector', source);
  return created ? toContradiction(record) : undefined;
}

export async function flagContradiction(ctx: BrainContext, req: FlagContradictionRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const refs = requireRefs('memories', req.memories, 2, 10);
  if (refs.length < 2) invalid('memories', 'must name at least 2 different memories');
  const reason = requireText('reason', req.reason.trim(), 2_000, { required: true });
  const records = (await ctx.memories.getMany(refs.map((r) => memoryId(organizationId, r.namespace, r.key)))).filter(isLive);
  const missing = refs.filter((r) => !records.some((m) => m.namespace === r.namespace && m.key === r.key));
  if (missing.length) notFound(`no memory ${missing.map((r) => `${r.namespace}/${r.key}`).join(', ')}: fetch or search for the right keys`);
  const members = refs.map((r) => ({ ...r, version: records.find((m) => m.namespace === r.namespace && m.key === r.key)!.version }));
  const { record, created } = await createOrFind(ctx, organizationId, members, reason, 'client', sourceOf(req.source));
  return create(FlagContradictionResponseSchema, { contradiction: toContradiction(record), created });
}

export function requireId(field: string, id: string, prefix: 'ctr' | 'q'): string {
  if (!id) invalid(field, 'is required');
  if (!ITEM_ID.test(id) || !id.startsWith(`${prefix}_`))
    invalid(field, `must be an id like ${prefix}_ followed by 20 characters of [a-z2-7]`);
  return id;
}

export function requireIds(ids: string[], prefix: 'ctr' | 'q'): string[] {
  if (ids.length > 100) invalid('ids', `must have at most 100 items, got ${ids.length}`);
  for (const [i, id] of ids.entries()) requireId(`ids[${i}]`, id, prefix);
  return ids;
}

export function requireLimit(limit: number): number {
  if (limit > 100) invalid('limit', `must be at most 100, got ${limit}`);
  return limit || 20;
}

export function optionalStatus(status: ItemStatus): ItemStatusName | undefined {
  if (status === 0) return undefined;
  return (
    statusName(status) ?? invalid('status', 'must be ITEM_STATUS_OPEN, ITEM_STATUS_RESOLVED, ITEM_STATUS_DISMISSED or ITEM_STATUS_OBSOLETE')
  );
}

export async function listContradictionRecords(
  ctx: BrainContext,
  organizationId: string,
  refs: RefRecord[],
  status: ItemStatusName | undefined,
  limit: number,
): Promise<ContradictionRecord[]> {
  const filter: Filter = { organizationId };
  if (status) filter.status = status;
  if (refs.length) filter.refs = { $in: refs.map((r) => refString(r.namespace, r.key)) };
  return ctx.contradictions.find(filter, { sort: { field: 'createdAt', direction: 'desc' }, limit });
}

export async function listContradictions(ctx: BrainContext, req: ListContradictionsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const ids = requireIds(req.ids, 'ctr');
  const limit = requireLimit(req.limit);
  const status = optionalStatus(req.status);
  if (ids.length) {
    const records = await ctx.contradictions.getMany(ids.map((id) => itemDocId(organizationId, id)));
    const byId = new Map(records.filter((r) => r.organizationId === organizationId).map((r) => [r.id, r]));
    return create(ListContradictionsResponseSchema, {
      contradictions: ids.filter((id) => byId.has(id)).map((id) => toContradiction(byId.get(id)!)),
      missingIds: ids.filter((id) => !byId.has(id)),
    });
  }
  const filter = itemFilter(organizationId, req, status);
  const page = await findPage(ctx.contradictions, filter, pageRequest(req, limit), {
    field: 'createdAt',
    direction: 'desc',
    scope: pageScope('contradictions', filter),
  });
  return create(ListContradictionsResponseSchema, {
    contradictions: page.items.map(toContradiction),
    nextPageToken: page.nextPageToken,
  });
}

/** The page asked for: page_size, else the older limit (both 1-100). */
export function pageRequest(req: { pageSize: number; pageToken: string }, limit: number) {
  if (req.pageSize > 100) invalid('page_size', `must be at most 100, got ${req.pageSize}`);
  return { pageSize: req.pageSize || limit, pageToken: req.pageToken };
}

/** A listing's scope for its page tokens: the organization and the filter (hashed, tokens stay short). */
export function pageScope(kind: string, filter: Filter): string {
  return `${kind}:${createHash('sha256').update(JSON.stringify(filter)).digest('base64url').slice(0, 22)}`;
}

/**
 * The filter of a contradiction or question listing: status, the memories named (only those of
 * the namespace, when one is given) or any memory of the namespace (`refs` hold "namespace/key",
 * and "/" sorts just before "0").
 */
export function itemFilter(
  organizationId: string,
  req: { memories: ListContradictionsRequest['memories']; namespace: number },
  status: ItemStatusName | undefined,
): Filter {
  const filter: Filter = { organizationId };
  if (status) filter.status = status;
  const namespace = req.namespace ? requireNamespace(req.namespace, 'namespace') : undefined;
  const refs = (req.memories.length ? requireRefs('memories', req.memories, 1, 100) : []).filter(
    (r) => !namespace || r.namespace === namespace,
  );
  if (refs.length || (req.memories.length && namespace)) filter.refs = { $in: refs.map((r) => refString(r.namespace, r.key)) };
  else if (namespace) filter.refs = { $gte: `${namespace}/`, $lt: `${namespace}0` };
  return filter;
}

export function requireResolution(status: ItemStatus, resolution: string): { status: ItemStatusName; resolution: string } {
  const name = statusName(status);
  if (name !== 'resolved' && name !== 'dismissed') invalid('status', 'must be ITEM_STATUS_RESOLVED or ITEM_STATUS_DISMISSED');
  return { status: name, resolution: requireText('resolution', resolution.trim(), 4_000, { required: true }) };
}

export async function resolveContradiction(ctx: BrainContext, req: ResolveContradictionRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const id = requireId('id', req.id, 'ctr');
  const change = requireResolution(req.status, req.resolution);
  const record = await ctx.contradictions.get(itemDocId(organizationId, id));
  if (!record || record.organizationId !== organizationId) notFound(`no contradiction ${id} in this organization`);
  if (record.status !== 'open') {
    throw new ConnectError(`contradiction ${id} is already ${record.status}: ${record.resolution}`, Code.FailedPrecondition);
  }
  const updated: ContradictionRecord = {
    ...record,
    ...change,
    resolvedAt: ctx.now(),
    resolvedBy: sourceOf(req.source),
    rev: record.rev + 1,
  };
  const events = [contradictionClosed(updated)];
  if (!(await putWithEvents(ctx.events, contradictionSubject(ctx), updated, record, events, { expect: { rev: record.rev } }))) {
    throw new ConnectError(`contradiction ${id} changed concurrently: fetch it again`, Code.Aborted);
  }
  return create(ResolveContradictionResponseSchema, { contradiction: toContradiction(updated) });
}

/** Open contradictions closed per memory at most: a memory rarely has more than a few. */
const CLOSE_LIMIT = 100;

export interface CloseReason {
  /** The memory that was deleted or superseded. */
  ref: RefRecord;
  /** Its successor, when superseded: contradictions between the two are resolved, not obsolete. */
  successor?: RefRecord;
  /** What happened, in words: "knowledge/x was deleted". */
  why: string;
  source: SourceRecord;
}

/**
 * Closes the open contradictions naming a memory that was deleted or superseded: RESOLVED for
 * one between a superseded memory and its successor (the write settled it), OBSOLETE otherwise
 * (one side is gone). A contradiction changed concurrently is left as it is.
 */
export async function closeContradictions(ctx: BrainContext, organizationId: string, reason: CloseReason): Promise<ContradictionRecord[]> {
  const open = await listContradictionRecords(ctx, organizationId, [reason.ref], 'open', CLOSE_LIMIT);
  const successor = reason.successor ? refString(reason.successor.namespace, reason.successor.key) : undefined;
  const closed: ContradictionRecord[] = [];
  for (const record of open) {
    const settled = successor !== undefined && record.refs.includes(successor);
    const updated: ContradictionRecord = {
      ...record,
      status: settled ? 'resolved' : 'obsolete',
      resolution: settled ? `${reason.why}: ${successor} replaces it` : reason.why,
      resolvedAt: ctx.now(),
      resolvedBy: reason.source,
      rev: record.rev + 1,
    };
    const events = [contradictionClosed(updated)];
    if (await putWithEvents(ctx.events, contradictionSubject(ctx), updated, record, events, { expect: { rev: record.rev } })) {
      closed.push(updated);
    }
  }
  return closed;
}

/** Ids of the open contradictions naming each memory (`namespace/key`), at most `per` each. */
export async function openContradictionIds(
  ctx: BrainContext,
  organizationId: string,
  refs: RefRecord[],
  per = 5,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!refs.length) return out;
  const wanted = new Set(refs.map((r) => refString(r.namespace, r.key)));
  const records = await listContradictionRecords(ctx, organizationId, refs, 'open', 20 * refs.length);
  for (const record of records) {
    for (const ref of record.refs) {
      if (!wanted.has(ref)) continue;
      const ids = out.get(ref) ?? [];
      if (ids.length < per) ids.push(record.id);
      out.set(ref, ids);
    }
  }
  return out;
}
