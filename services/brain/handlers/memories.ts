import { create } from '@bufbuild/protobuf';
import { timestampFromMs, timestampMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  DeleteMemoryResponseSchema,
  DuplicateKind,
  FailureWarningSchema,
  GetMemoriesResponseSchema,
  MemoryRefSchema,
  PutMemoryResponseSchema,
  ScoresSchema,
  SearchMemoriesResponseSchema,
  SearchResultSchema,
  SimilarMemorySchema,
  WriteOutcome,
  type Contradiction,
  type DeleteMemoryRequest,
  type GetMemoriesRequest,
  type PutMemoryRequest,
  type SearchMemoriesRequest,
  type SimilarMemory,
} from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { invalid, requireList, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import { detectDisagreement, NEAR_DUPLICATE_COSINE, NEAR_DUPLICATE_OVERLAP, textOverlap } from '../contradiction-detector.ts';
import type { BrainContext } from '../context.ts';
import {
  isLive,
  memoryId,
  memoryPointId,
  memoryText,
  namespaceEnum,
  toMemory,
  type MemoryRecord,
  type NamespaceName,
} from '../memory-record.ts';
import { hybridSearch, type ResultScores } from '../search/hybrid.ts';
import { normalizeEntity } from '../search/lexical-index.ts';
import { TOMBSTONE_TTL_MS } from '../search/index-registry.ts';
import type { Warning } from '../search/ranking.ts';
import { contentHash, estimateTokens } from '../text.ts';
import { hasCurrentVector, VECTOR_GRACE_MS, writeVector } from '../vector-sync.ts';
import { flagDetected } from './contradictions.ts';
import { requireKey, requireNamespace, sourceOf } from './validate.ts';

export { MEMORY_KEY } from './validate.ts';

const MAX_CONTENT = 32_000;
/** Memories of the same namespace compared with a new text for duplicates and contradictions. */
const CHECK_CANDIDATES = 5;

function sameText(a: MemoryRecord, b: Pick<MemoryRecord, 'title' | 'content' | 'tags' | 'entities'>): boolean {
  return (
    a.title === b.title &&
    a.content === b.content &&
    a.tags.join('\n') === b.tags.join('\n') &&
    a.entities.join('\n') === b.entities.join('\n')
  );
}

export async function putMemory(ctx: BrainContext, req: PutMemoryRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace(req.namespace);
  const key = requireKey('key', req.key);
  const content = requireText('content', req.content, MAX_CONTENT, { required: true });
  const title = requireText('title', req.title.trim(), 300);
  const tags = requireList('tags', req.tags, 32, 64);
  const entities = requireList('entities', req.entities, 64, 200);
  const source = sourceOf(req.source);

  const id = memoryId(organizationId, namespace, key);
  const stored = await ctx.memories.get(id);
  const existing = isLive(stored) ? stored : undefined;
  if (req.expectedVersion !== undefined) {
    const expected = Number(req.expectedVersion);
    const actual = existing?.version ?? 0;
    if (expected !== actual) {
      throw new ConnectError(`memory "${key}" is at version ${actual}, not ${expected}: fetch it again and retry`, Code.FailedPrecondition);
    }
  }
  const draft = { key, title, content, tags, entities };
  if (existing && sameText(existing, draft)) return repeatedWrite(ctx, existing);
  const hash = contentHash(`${title}\n${content}`);
  // Embed before writing, so a failing model leaves no record without its vector.
  const [vector] = await ctx.stores.embedder.embed([memoryText(draft)]);
  const check = await checkAgainstOthers(ctx, organizationId, namespace, key, `${title}\n${content}`, entities, hash, vector);
  if (check.duplicates.length > 0 && !req.allowDuplicate) {
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
    version: (existing?.version ?? 0) + 1,
    rev: (stored?.rev ?? 0) + 1,
    seq,
    contentHash: hash,
    stats: existing?.stats ?? { worked: 0, failed: 0 },
    // The vector is owed until verified (vector-sync.ts): one field, not a second write.
    vectorDue: now + VECTOR_GRACE_MS,
  };
  const written = await ctx.memories.put(record, { expect: stored ? { rev: stored.rev } : null });
  if (!written) {
    throw new ConnectError(`memory "${key}" changed concurrently: fetch it again and retry`, Code.Aborted);
  }
  ctx.indexes.applyLocal(organizationId, namespace, record);
  await writeVectorOrExplain(ctx, record, vector);
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
  });
}

/**
 * The same text written again. Normally UNCHANGED; but when the earlier write saved the record
 * and failed to write its vector (the client got UNAVAILABLE and retries), the retry writes
 * the vector and answers as the first write would have.
 */
async function repeatedWrite(ctx: BrainContext, existing: MemoryRecord) {
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

interface CheckResult {
  duplicates: SimilarMemory[];
  disagreements: { record: MemoryRecord; reason: string }[];
}

/**
 * Compares a text about to be written with the closest memories under other keys of the same
 * namespace: the detector's rule is in contradiction-detector.ts.
 */
async function checkAgainstOthers(
  ctx: BrainContext,
  organizationId: string,
  namespace: NamespaceName,
  key: string,
  text: string,
  entities: string[],
  hash: string,
  vector: Float32Array,
): Promise<CheckResult> {
  const index = await ctx.indexes.fresh(organizationId, namespace);
  const result: CheckResult = { duplicates: [], disagreements: [] };
  if (index.size === 0) return result;
  const exclude = new Set([key]);
  const exact = new Set(index.keysWithHash(hash).filter((k) => k !== key));
  const cosine = new Map<string, number>();
  const keys = new Set(exact);
  for (const hit of index.search(text, CHECK_CANDIDATES, { excludeKeys: exclude }, 24)) keys.add(hit.key);
  const matches = await ctx.stores.vectors.search(organizationId, vector, {
    limit: CHECK_CANDIDATES + 1,
    filter: { namespace },
  });
  for (const m of matches) {
    const k = String(m.payload.key);
    if (k === key) continue;
    cosine.set(k, m.score);
    keys.add(k);
  }
  const records = (await ctx.memories.getMany([...keys].map((k) => memoryId(organizationId, namespace, k)))).filter(isLive);
  for (const other of records) {
    const otherText = `${other.title}\n${other.content}`;
    const disagreement =
      exact.has(other.key) || aboutOtherThings(entities, other.entities) ? undefined : detectDisagreement(text, otherText);
    if (disagreement) {
      result.disagreements.push({ record: other, reason: disagreement.reason });
      continue;
    }
    const overlap = textOverlap(text, otherText);
    const semantic = cosine.get(other.key) ?? 0;
    const kind = exact.has(other.key)
      ? DuplicateKind.EXACT
      : overlap >= NEAR_DUPLICATE_OVERLAP || semantic >= NEAR_DUPLICATE_COSINE
        ? DuplicateKind.NEAR
        : undefined;
    if (kind === undefined) continue;
    result.duplicates.push(
      create(SimilarMemorySchema, {
        ref: create(MemoryRefSchema, { namespace: namespaceEnum(namespace), key: other.key }),
        title: other.title,
        kind,
        semantic,
        overlap,
      }),
    );
  }
  result.duplicates.sort((a, b) => a.kind - b.kind || b.overlap - a.overlap);
  return result;
}

/** Both memories name entities and share none: they are about different things. */
function aboutOtherThings(a: string[], b: string[]): boolean {
  if (!a.length || !b.length) return false;
  const set = new Set(a.map(normalizeEntity));
  return !b.some((e) => set.has(normalizeEntity(e)));
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

export async function searchMemories(ctx: BrainContext, req: SearchMemoriesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace(req.namespace);
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
    filter: { tags, entities, updatedAfter: after, updatedBefore: before },
  });
  let budget = req.tokenBudget || Infinity;
  let truncated = false;
  const results = [];
  for (const r of found.results) {
    const cost = resultTokens(r.record);
    if (cost > budget) {
      truncated = true;
      break;
    }
    budget -= cost;
    results.push(create(SearchResultSchema, { memory: toMemory(r.record), scores: toScores(r.scores), warning: toWarning(r.warning) }));
  }
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
  };
  const written = await ctx.memories.put(tombstone, { expect: { rev: stored.rev } });
  if (!written) throw new ConnectError(`memory "${key}" changed concurrently: fetch it again and retry`, Code.Aborted);
  ctx.indexes.applyLocal(organizationId, namespace, tombstone);
  try {
    await ctx.stores.vectors.delete(organizationId, [memoryPointId(namespace, key)]);
  } catch (error) {
    // The deletion is committed and searches skip tombstones: vector sync removes the vector.
    ctx.logger.warn({ err: error, memory: id }, 'memory deleted but its vector is not yet removed; vector sync will');
  }
  return create(DeleteMemoryResponseSchema, {});
}
