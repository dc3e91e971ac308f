import { create } from '@bufbuild/protobuf';
import { timestampFromMs, timestampMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  DeleteMemoryResponseSchema,
  FailureWarningSchema,
  GetMemoriesResponseSchema,
  PutMemoryResponseSchema,
  ScoresSchema,
  SearchMemoriesResponseSchema,
  SearchResultSchema,
  WriteOutcome,
  type Contradiction,
  type DeleteMemoryRequest,
  type GetMemoriesRequest,
  type PutMemoryRequest,
  type SearchMemoriesRequest,
} from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { putWithEvents } from '../../common/events/outbox.ts';
import { invalid, requireList, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { MemoryAccess } from '../access.ts';
import type { BrainContext } from '../context.ts';
import { eventRange, optionalEventTime } from '../event-time.ts';
import { memoryDeleted, memorySubject, memoryWritten } from '../events.ts';
import { toContradiction } from '../items-record.ts';
import {
  isLive,
  memoryId,
  memoryPointId,
  memoryText,
  refString,
  toMemory,
  type MemoryRecord,
  type MemoryRefRecord,
  type NamespaceName,
  type RelationshipRecord,
  type SourceRecord,
} from '../memory-record.ts';
import { hybridSearch, type ResultScores } from '../search/hybrid.ts';
import { TOMBSTONE_TTL_MS } from '../search/index-registry.ts';
import type { Warning } from '../search/ranking.ts';
import { contentHash, estimateTokens } from '../text.ts';
import { hasCurrentVector, VECTOR_GRACE_MS, writeVector } from '../vector-sync.ts';
import { GRAPH_GRACE_MS, syncGraphNow } from '../graph-sync.ts';
import { deletionOf, versionOf } from '../version-record.ts';
import { flagDetected, openContradictionIds } from './contradictions.ts';
import { markSuperseded, releaseDeleted, requireSuperseded } from './supersede.ts';
import { requireKey, requireNamespace, requireRelationships, sameRelationships, sourceOf } from './validate.ts';
import { checkAgainstOthers } from './write-checks.ts';

export { MEMORY_KEY } from './validate.ts';

const MAX_CONTENT = 32_000;

function sameText(a: MemoryRecord, b: Pick<MemoryRecord, 'title' | 'content' | 'tags' | 'entities'>): boolean {
  return (
    a.title === b.title &&
    a.content === b.content &&
    a.tags.join('\n') === b.tags.join('\n') &&
    a.entities.join('\n') === b.entities.join('\n')
  );
}

/** A PutMemoryRequest, validated. */
export interface MemoryWrite {
  organizationId: string;
  namespace: NamespaceName;
  key: string;
  title: string;
  content: string;
  tags: string[];
  entities: string[];
  source: SourceRecord;
  expectedVersion?: bigint;
  allowDuplicate: boolean;
  /** The memory this write corrects, as asked (checked by requireSuperseded). */
  supersedes?: PutMemoryRequest['supersedes'];
  eventAt?: number;
  /** Relationships the writer states (the entity graph asserts them, citing the memory). */
  relationships: RelationshipRecord[];
}

export function validatePut(req: PutMemoryRequest): MemoryWrite {
  return {
    organizationId: requireOrganization(req.organizationId),
    namespace: requireNamespace(req.namespace),
    key: requireKey('key', req.key),
    content: requireText('content', req.content, MAX_CONTENT, { required: true }),
    title: requireText('title', req.title.trim(), 300),
    tags: requireList('tags', req.tags, 32, 64),
    entities: requireList('entities', req.entities, 64, 200),
    source: sourceOf(req.source),
    expectedVersion: req.expectedVersion,
    allowDuplicate: req.allowDuplicate,
    supersedes: req.supersedes,
    eventAt: optionalEventTime('event_time', req.eventTime),
    relationships: requireRelationships('relationships', req.relationships),
  };
}

export async function putMemory(ctx: BrainContext, req: PutMemoryRequest, access = MemoryAccess.everything) {
  return writeMemory(ctx, validatePut(req), { access });
}

/**
 * One validated write. `vector` is the embedding of the memory's text when the caller already
 * has it (PutMemories embeds a batch in one call); `access` narrows the duplicate check to what
 * the caller may reach (services/brain/access.ts), so a refusal never names a hidden memory.
 */
export async function writeMemory(
  ctx: BrainContext,
  w: MemoryWrite,
  { vector, access = MemoryAccess.everything }: { vector?: Float32Array; access?: MemoryAccess } = {},
) {
  const { organizationId, namespace, key, content, title, tags, entities, source, relationships } = w;
  const id = memoryId(organizationId, namespace, key);
  const stored = await ctx.memories.get(id);
  const existing = isLive(stored) ? stored : undefined;
  if (w.expectedVersion !== undefined) {
    const expected = Number(w.expectedVersion);
    const actual = existing?.version ?? 0;
    if (expected !== actual) {
      throw new ConnectError(`memory "${key}" is at version ${actual}, not ${expected}: fetch it again and retry`, Code.FailedPrecondition);
    }
  }
  const superseded = await requireSuperseded(ctx, organizationId, w.supersedes, { namespace, key });
  const supersedes = superseded ? { namespace: superseded.namespace, key: superseded.key } : existing?.supersedes;
  const draft = { key, title, content, tags, entities };
  const eventAt = w.eventAt ?? existing?.eventAt ?? existing?.createdAt;
  if (existing && unchanged(existing, draft, supersedes, relationships) && eventAt === (existing.eventAt ?? existing.createdAt)) {
    return repeatedWrite(ctx, existing, source);
  }
  // A new memory must fit the plan's max_memories; refused here, before anything is stored.
  if (!existing) await ctx.memoryLimit?.(organizationId);
  const hash = contentHash(`${title}\n${content}`);
  // Embed before writing, so a failing model leaves no record without its vector.
  vector ??= (await ctx.stores.embedder.embed([memoryText(draft)]))[0]!;
  const exclude = new Set([key]);
  if (supersedes?.namespace === namespace) exclude.add(supersedes.key);
  const visible = access.keyFilter(namespace);
  const check = await checkAgainstOthers(ctx, { organizationId, namespace, ...draft, hash, vector, exclude, visible });
  if (check.duplicates.length > 0 && !w.allowDuplicate) {
    return create(PutMemoryResponseSchema, {
      memory: existing ? toMemory(existing) : undefined,
      created: false,
      outcome: WriteOutcome.DUPLICATE,
      duplicates: check.duplicates,
    });
  }

  const now = ctx.now();
  const seq = await ctx.indexes.nextSeq(organizationId, namespace);
  const record: MemoryRecord = {
    _id: id,
    organizationId,
    namespace,
    key,
    title,
    content,
    tags,
    entities,
    source,
    createdBy: existing?.createdBy ?? source,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
    eventAt: eventAt ?? now,
    version: (existing?.version ?? 0) + 1,
    rev: (stored?.rev ?? 0) + 1,
    seq,
    contentHash: hash,
    stats: existing?.stats ?? { worked: 0, failed: 0 },
    supersedes,
    supersededBy: existing?.supersededBy,
    // The vector is owed until verified (vector-sync.ts): one field, not a second write.
    vectorDue: now + VECTOR_GRACE_MS,
    relationships: relationships.length > 0 ? relationships : undefined,
    graphDue: ctx.graph ? now + GRAPH_GRACE_MS : undefined,
  };
  // The version this write replaces is saved first (version-record.ts says why that is enough).
  if (existing) await ctx.versions.put(versionOf(existing));
  const written = await putWithEvents(ctx.events, memorySubject(ctx), record, stored, [memoryWritten(record, !existing)], {
    expect: stored ? { rev: stored.rev } : null,
  });
  if (!written) {
    throw new ConnectError(`memory "${key}" changed concurrently: fetch it again and retry`, Code.Aborted);
  }
  ctx.indexes.applyLocal(organizationId, namespace, record);
  await syncGraphNow(ctx, record);
  await writeVectorOrExplain(ctx, record, vector);
  const closed = superseded ? await markSuperseded(ctx, record, source) : [];
  const contradictions: Contradiction[] = [];
  for (const found of check.disagreements) {
    const flagged = await flagDetected(ctx, organizationId, record, found.record, found.reason, source);
    if (flagged) contradictions.push(flagged);
  }
  return create(PutMemoryResponseSchema, {
    memory: toMemory(record),
    created: !existing,
    outcome: existing ? WriteOutcome.UPDATED : WriteOutcome.CREATED,
    duplicates: check.duplicates,
    contradictions,
    closedContradictions: closed.map(toContradiction),
  });
}

/** The write says what the memory already says: same text, same correction, same relationships. */
function unchanged(
  existing: MemoryRecord,
  draft: Parameters<typeof sameText>[1],
  supersedes: MemoryRefRecord | undefined,
  relationships: RelationshipRecord[],
): boolean {
  return sameText(existing, draft) && sameRef(existing.supersedes, supersedes) && sameRelationships(existing.relationships, relationships);
}

function sameRef(a: MemoryRefRecord | undefined, b: MemoryRefRecord | undefined): boolean {
  return (a ? refString(a.namespace, a.key) : '') === (b ? refString(b.namespace, b.key) : '');
}

/**
 * The same text written again. Normally UNCHANGED; but when the earlier write saved the record
 * and failed to write its vector (the client got UNAVAILABLE and retries), the retry writes
 * the vector and answers as the first write would have.
 */
async function repeatedWrite(ctx: BrainContext, existing: MemoryRecord, source: SourceRecord) {
  // A retried write that superseded a memory completes the marking a failure may have left undone.
  if (existing.supersedes) await markSuperseded(ctx, existing, source);
  if (existing.graphDue !== undefined) await syncGraphNow(ctx, existing);
  if (existing.vectorDue === undefined || (await hasCurrentVector(ctx, existing))) {
    return create(PutMemoryResponseSchema, { memory: toMemory(existing), created: false, outcome: WriteOutcome.UNCHANGED });
  }
  await writeVectorOrExplain(ctx, existing);
  const created = existing.version === 1;
  return create(PutMemoryResponseSchema, {
    memory: toMemory(existing),
    created,
    outcome: created ? WriteOutcome.CREATED : WriteOutcome.UPDATED,
  });
}

/** The record is saved: a failed vector write is retryable and repaired anyway. */
async function writeVectorOrExplain(ctx: BrainContext, record: MemoryRecord, vector?: Float32Array): Promise<void> {
  try {
    await writeVector(ctx, record, vector);
  } catch (error) {
    ctx.logger.warn({ err: error, memory: record._id }, 'memory saved without its vector; vector sync will write it');
    throw new ConnectError(
      `memory "${record.key}" was saved, but its vector for search by meaning could not be written: ` +
        'it is written automatically once the vector store answers, and retrying the same write is safe',
      Code.Unavailable,
    );
  }
}

export async function getMemories(ctx: BrainContext, req: GetMemoriesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace(req.namespace);
  if (req.keys.length === 0) invalid('keys', 'must name at least one key');
  if (req.keys.length > 100) invalid('keys', `must have at most 100 items, got ${req.keys.length}`);
  for (const [i, key] of req.keys.entries()) requireKey(`keys[${i}]`, key);
  const records = (await ctx.memories.getMany(req.keys.map((key) => memoryId(organizationId, namespace, key)))).filter(isLive);
  const byKey = new Map(records.map((r) => [r.key, r]));
  return create(GetMemoriesResponseSchema, {
    memories: req.keys.filter((k) => byKey.has(k)).map((k) => toMemory(byKey.get(k)!)),
    missingKeys: req.keys.filter((k) => !byKey.has(k)),
  });
}

export function toScores(s: ResultScores) {
  return create(ScoresSchema, s);
}

export function toWarning(w: Warning | undefined) {
  if (!w) return undefined;
  return create(FailureWarningSchema, {
    failedAt: timestampFromMs(w.failedAt),
    clientId: w.clientId,
    note: w.note,
    message: w.message,
    failed: w.failed,
    worked: w.worked,
  });
}

/** Tokens a search result costs a model: its text plus a little framing. */
export function resultTokens(record: MemoryRecord): number {
  return estimateTokens(`${record.key} ${record.title}\n${record.content}`) + 16;
}

export async function searchMemories(ctx: BrainContext, req: SearchMemoriesRequest, access = MemoryAccess.everything) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace(req.namespace);
  access.requireNamespace(namespace);
  const query = requireText('query', req.query, 2_000, { required: true });
  if (req.limit > 50) invalid('limit', `must be at most 50, got ${req.limit}`);
  if (req.tokenBudget !== 0 && (req.tokenBudget < 100 || req.tokenBudget > 50_000)) {
    invalid('token_budget', `must be 0 (no budget) or 100-50000, got ${req.tokenBudget}`);
  }
  const limit = req.limit || 10;
  const tags = requireList('tags', req.tags, 16, 64);
  const entities = requireList('entities', req.entities, 16, 200);
  const after = req.updatedAfter ? timestampMs(req.updatedAfter) : undefined;
  const before = req.updatedBefore ? timestampMs(req.updatedBefore) : undefined;
  if (after !== undefined && before !== undefined && after >= before) {
    invalid('updated_after', 'must be earlier than updated_before');
  }

  const found = await hybridSearch(ctx, {
    organizationId,
    namespace,
    query,
    limit,
    filter: {
      tags,
      entities,
      updatedAfter: after,
      updatedBefore: before,
      ...eventRange(req.eventAfter, req.eventBefore),
      allowKey: access.keyFilter(namespace),
    },
  });
  let budget = req.tokenBudget || Infinity;
  let truncated = false;
  const kept = [];
  for (const r of found.results) {
    const cost = resultTokens(r.record);
    if (cost > budget) {
      truncated = true;
      break;
    }
    budget -= cost;
    kept.push(r);
  }
  const open = await openContradictionIds(
    ctx,
    organizationId,
    kept.map((r) => ({ namespace, key: r.record.key })),
  );
  const results = kept.map((r) =>
    create(SearchResultSchema, {
      memory: toMemory(r.record),
      scores: toScores(r.scores),
      warning: toWarning(r.warning),
      openContradictions: open.get(refString(namespace, r.record.key)) ?? [],
    }),
  );
  return create(SearchMemoriesResponseSchema, {
    results,
    organizationId,
    namespace: req.namespace,
    searchedMemories: found.searched,
    truncated,
  });
}

export async function deleteMemory(ctx: BrainContext, req: DeleteMemoryRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace(req.namespace);
  const key = requireKey('key', req.key);
  const id = memoryId(organizationId, namespace, key);
  const stored = await ctx.memories.get(id);
  if (!isLive(stored)) throw new ConnectError(`memory "${key}" does not exist`, Code.NotFound);
  if (req.expectedVersion !== undefined && Number(req.expectedVersion) !== stored.version) {
    throw new ConnectError(
      `memory "${key}" is at version ${stored.version}, not ${req.expectedVersion}: fetch it again and retry`,
      Code.FailedPrecondition,
    );
  }
  const now = ctx.now();
  const seq = await ctx.indexes.nextSeq(organizationId, namespace);
  // A tombstone, so that other replicas' indexes learn of the deletion (index-registry.ts).
  const tombstone: MemoryRecord = {
    ...stored,
    title: '',
    content: '',
    tags: [],
    entities: [],
    deleted: true,
    updatedAt: now,
    rev: stored.rev + 1,
    seq,
    contentHash: '',
    stats: { worked: 0, failed: 0 },
    expiresAt: now + TOMBSTONE_TTL_MS,
    vectorDue: now + VECTOR_GRACE_MS,
    relationships: undefined,
    graphDue: ctx.graph ? now + GRAPH_GRACE_MS : undefined,
  };
  // The deleted version and who deleted it are saved first, as a write saves what it replaces.
  await ctx.versions.put(versionOf(stored));
  await ctx.versions.put(deletionOf(stored, now, sourceOf(req.source)));
  const events = [memoryDeleted(stored, sourceOf(req.source))];
  const written = await putWithEvents(ctx.events, memorySubject(ctx), tombstone, stored, events, { expect: { rev: stored.rev } });
  if (!written) throw new ConnectError(`memory "${key}" changed concurrently: fetch it again and retry`, Code.Aborted);
  ctx.indexes.applyLocal(organizationId, namespace, tombstone);
  await syncGraphNow(ctx, tombstone);
  await releaseDeleted(ctx, stored, sourceOf(req.source));
  try {
    await ctx.stores.vectors.delete(organizationId, [memoryPointId(namespace, key)]);
  } catch (error) {
    // The deletion is committed and searches skip tombstones: vector sync removes the vector.
    ctx.logger.warn({ err: error, memory: id }, 'memory deleted but its vector is not yet removed; vector sync will');
  }
  return create(DeleteMemoryResponseSchema, {});
}
