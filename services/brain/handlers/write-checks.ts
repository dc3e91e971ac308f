// What a memory about to be written is to the closest memories under other keys of the same
// organization and namespace: duplicates (not written unless allowed) and contradictions
// (written and flagged). The rules are in contradiction-detector.ts.
import { create } from '@bufbuild/protobuf';
import { DuplicateKind, MemoryRefSchema, SimilarMemorySchema, type SimilarMemory } from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { analyze, compareMemories, wordSet, type ComparedMemory } from '../contradiction-detector.ts';
import type { BrainContext } from '../context.ts';
import { isLive, memoryId, namespaceEnum, type MemoryRecord, type NamespaceName } from '../memory-record.ts';
import { normalizeEntity } from '../search/lexical-index.ts';

/** Memories of the same namespace compared with a new text for duplicates and contradictions. */
const CHECK_CANDIDATES = 5;

export interface CheckResult {
  duplicates: SimilarMemory[];
  disagreements: { record: MemoryRecord; reason: string }[];
}

export interface WriteDraft {
  organizationId: string;
  namespace: NamespaceName;
  key: string;
  title: string;
  content: string;
  tags: string[];
  entities: string[];
  /** contentHash of title and content. */
  hash: string;
  vector: Float32Array;
  /** Keys never compared: the memory itself, and the one it supersedes. */
  exclude: Set<string>;
  /** A narrowed writer's keys (services/brain/access.ts): nothing it cannot read is named. */
  visible?: (key: string) => boolean;
}

/**
 * Analyses of memories compared recently, by content hash and entities: the same few memories are
 * the closest candidates of many writes, and analysing a text costs far more than comparing two.
 */
const analyses = new Map<string, Pick<ComparedMemory, 'claims' | 'words'>>();
const ANALYSES = 10_000;

function compared(record: Pick<MemoryRecord, 'title' | 'content' | 'tags' | 'entities' | 'contentHash'>): ComparedMemory {
  const text = `${record.title}\n${record.content}`;
  const cacheKey = `${record.contentHash}|${record.entities.join('\n')}`;
  let known = analyses.get(cacheKey);
  if (!known) {
    known = { claims: analyze(text, record.entities), words: wordSet(text) };
    if (analyses.size >= ANALYSES) analyses.delete(analyses.keys().next().value!);
    analyses.set(cacheKey, known);
  }
  return { text, ...known, hash: record.contentHash, tags: record.tags, entities: record.entities };
}

/** Both memories name entities and share none: they are about different things. */
function aboutOtherThings(a: string[], b: string[]): boolean {
  if (!a.length || !b.length) return false;
  const set = new Set(a.map(normalizeEntity));
  return !b.some((e) => set.has(normalizeEntity(e)));
}

/** The keys worth comparing: same text, the best BM25 matches and the nearest embeddings. */
async function candidates(ctx: BrainContext, draft: WriteDraft, text: string): Promise<{ keys: Set<string>; cosine: Map<string, number> }> {
  const index = await ctx.indexes.fresh(draft.organizationId, draft.namespace);
  const keys = new Set(index.keysWithHash(draft.hash).filter((k) => !draft.exclude.has(k)));
  const cosine = new Map<string, number>();
  if (index.size === 0) return { keys, cosine };
  for (const hit of index.search(text, CHECK_CANDIDATES, { excludeKeys: draft.exclude }, 24)) keys.add(hit.key);
  const matches = await ctx.stores.vectors.search(draft.organizationId, draft.vector, {
    limit: CHECK_CANDIDATES + draft.exclude.size,
    filter: { namespace: draft.namespace },
  });
  for (const m of matches) {
    const k = String(m.payload.key);
    if (draft.exclude.has(k)) continue;
    cosine.set(k, m.score);
    keys.add(k);
  }
  return { keys, cosine };
}

export async function checkAgainstOthers(ctx: BrainContext, draft: WriteDraft): Promise<CheckResult> {
  const result: CheckResult = { duplicates: [], disagreements: [] };
  const next = compared({ ...draft, contentHash: draft.hash });
  const { keys, cosine } = await candidates(ctx, draft, next.text);
  if (keys.size === 0) return result;
  const records = (await ctx.memories.getMany([...keys].map((k) => memoryId(draft.organizationId, draft.namespace, k)))).filter(
    (r) => isLive(r) && (draft.visible?.(r.key) ?? true),
  );
  for (const other of records) {
    if (aboutOtherThings(draft.entities, other.entities) && other.contentHash !== draft.hash) continue;
    const found = compareMemories(next, compared(other), { episodes: draft.namespace === 'episodes', cosine: cosine.get(other.key) });
    if (found.disagreement) {
      result.disagreements.push({ record: other, reason: found.disagreement.reason });
      continue;
    }
    if (!found.duplicate) continue;
    result.duplicates.push(
      create(SimilarMemorySchema, {
        ref: create(MemoryRefSchema, { namespace: namespaceEnum(draft.namespace), key: other.key }),
        title: other.title,
        kind: found.duplicate === 'exact' ? DuplicateKind.EXACT : DuplicateKind.NEAR,
        semantic: cosine.get(other.key) ?? 0,
        overlap: found.overlap,
      }),
    );
  }
  result.duplicates.sort((a, b) => a.kind - b.kind || b.overlap - a.overlap);
  return result;
}
