import { create } from '@bufbuild/protobuf';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  DeleteMemoryResponseSchema,
  GetMemoriesResponseSchema,
  PutMemoryResponseSchema,
  ScoresSchema,
  SearchMemoriesResponseSchema,
  SearchResultSchema,
  type DeleteMemoryRequest,
  type GetMemoriesRequest,
  type Namespace,
  type PutMemoryRequest,
  type SearchMemoriesRequest,
} from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { invalid, requireList, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { BrainContext } from '../context.ts';
import {
  memoryId,
  memoryPointId,
  memoryText,
  namespaceName,
  toMemory,
  type MemoryRecord,
  type NamespaceName,
} from '../memory-record.ts';

export const MEMORY_KEY = /^[A-Za-z0-9._:/-]{1,200}$/;
const MAX_CONTENT = 32_000;

function requireNamespace(ns: Namespace): NamespaceName {
  return namespaceName(ns) ?? invalid('namespace', 'must be NAMESPACE_EPISODES or NAMESPACE_KNOWLEDGE');
}

function requireKey(field: string, key: string): string {
  if (!key) invalid(field, 'is required');
  if (!MEMORY_KEY.test(key)) invalid(field, 'must be 1-200 characters of [A-Za-z0-9._:/-]');
  return key;
}

export async function putMemory(ctx: BrainContext, req: PutMemoryRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace(req.namespace);
  const key = requireKey('key', req.key);
  const content = requireText('content', req.content, MAX_CONTENT, { required: true });
  const title = requireText('title', req.title.trim(), 300);
  const tags = requireList('tags', req.tags, 32, 64);
  const entities = requireList('entities', req.entities, 64, 200);

  const id = memoryId(organizationId, namespace, key);
  const existing = await ctx.memories.get(id);
  if (req.expectedVersion !== undefined) {
    const expected = Number(req.expectedVersion);
    const actual = existing?.version ?? 0;
    if (expected !== actual) {
      throw new ConnectError(
        `memory "${key}" is at version ${actual}, not ${expected}: fetch it again and retry`,
        Code.FailedPrecondition,
      );
    }
  }
  const now = ctx.now();
  const record: MemoryRecord = {
    _id: id,
    organizationId,
    namespace,
    key,
    title,
    content,
    tags,
    entities,
    source: {
      clientId: req.source?.clientId ?? '',
      userId: req.source?.userId ?? '',
      clientName: req.source?.clientName ?? '',
    },
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
    version: (existing?.version ?? 0) + 1,
    stats: existing?.stats ?? { worked: 0, failed: 0 },
  };
  // Embed before writing, so a failing model leaves no record without its vector.
  const [vector] = await ctx.stores.embedder.embed([memoryText(record)]);
  const stored = await ctx.memories.put(record, {
    expect: existing ? { version: existing.version } : null,
  });
  if (!stored) {
    throw new ConnectError(`memory "${key}" changed concurrently: fetch it again and retry`, Code.Aborted);
  }
  await ctx.stores.vectors.upsert([
    {
      id: memoryPointId(namespace, key),
      organizationId,
      vector,
      payload: { namespace, key, tags, updatedAt: now },
    },
  ]);
  return create(PutMemoryResponseSchema, { memory: toMemory(record), created: !existing });
}

export async function getMemories(ctx: BrainContext, req: GetMemoriesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace(req.namespace);
  if (req.keys.length === 0) invalid('keys', 'must name at least one key');
  if (req.keys.length > 100) invalid('keys', `must have at most 100 items, got ${req.keys.length}`);
  req.keys.forEach((key, i) => requireKey(`keys[${i}]`, key));
  const records = await ctx.memories.getMany(req.keys.map((key) => memoryId(organizationId, namespace, key)));
  const byKey = new Map(records.map((r) => [r.key, r]));
  return create(GetMemoriesResponseSchema, {
    memories: req.keys.filter((k) => byKey.has(k)).map((k) => toMemory(byKey.get(k)!)),
    missingKeys: req.keys.filter((k) => !byKey.has(k)),
  });
}

export async function searchMemories(ctx: BrainContext, req: SearchMemoriesRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace(req.namespace);
  const query = requireText('query', req.query, 2_000, { required: true });
  if (req.limit > 50) invalid('limit', `must be at most 50, got ${req.limit}`);
  const limit = req.limit || 10;
  const tags = requireList('tags', req.tags, 16, 64);
  const after = req.updatedAfter ? timestampMs(req.updatedAfter) : undefined;
  const before = req.updatedBefore ? timestampMs(req.updatedBefore) : undefined;

  const [vector] = await ctx.stores.embedder.embed([query]);
  // Over-fetch so that time filters applied after the vector search still fill the page.
  const matches = await ctx.stores.vectors.search(organizationId, vector, {
    limit: after !== undefined || before !== undefined ? limit * 10 : limit,
    filter: tags.length ? { namespace, tags } : { namespace },
  });
  const records = await ctx.memories.getMany(
    matches.map((m) => memoryId(organizationId, namespace, String(m.payload.key))),
  );
  const byKey = new Map(records.map((r) => [r.key, r]));
  const results = [];
  for (const match of matches) {
    const record = byKey.get(String(match.payload.key));
    if (!record) continue;
    if (after !== undefined && record.updatedAt <= after) continue;
    if (before !== undefined && record.updatedAt >= before) continue;
    results.push(
      create(SearchResultSchema, {
        memory: toMemory(record),
        scores: create(ScoresSchema, { semantic: match.score, lexical: 0, final: match.score }),
      }),
    );
    if (results.length === limit) break;
  }
  return create(SearchMemoriesResponseSchema, { results });
}

export async function deleteMemory(ctx: BrainContext, req: DeleteMemoryRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const namespace = requireNamespace(req.namespace);
  const key = requireKey('key', req.key);
  const deleted = await ctx.memories.delete(memoryId(organizationId, namespace, key));
  if (!deleted) throw new ConnectError(`memory "${key}" does not exist`, Code.NotFound);
  await ctx.stores.vectors.delete(organizationId, [memoryPointId(namespace, key)]);
  return create(DeleteMemoryResponseSchema, {});
}
