// Hybrid retrieval over one (organization, namespace): BM25 from the in-memory lexical index and
// cosine similarity from the vectors port, fused (ranking.ts), then adjusted by feedback and
// recency read from the records themselves.
import type { BrainContext } from '../context.ts';
import { isLive, memoryId, type MemoryRecord, type NamespaceName } from '../memory-record.ts';
import type { LexicalFilter, LexicalIndex } from './lexical-index.ts';
import {
  failureWarning,
  feedbackScore,
  finalScore,
  fuse,
  rankHistoryBelow,
  recencyScore,
  type Candidate,
  type Warning,
} from './ranking.ts';

export interface HybridQuery {
  organizationId: string;
  namespace: NamespaceName;
  query: string;
  /** The query's embedding, when the caller already has it. */
  vector?: Float32Array;
  limit: number;
  filter?: LexicalFilter;
}

export interface ResultScores {
  semantic: number;
  lexical: number;
  relevance: number;
  feedback: number;
  recency: number;
  final: number;
}

export interface RankedMemory {
  record: MemoryRecord;
  scores: ResultScores;
  warning?: Warning;
}

export interface HybridResult {
  results: RankedMemory[];
  /** Live memories in the searched (organization, namespace). */
  searched: number;
  index: LexicalIndex;
}

/** Candidates each signal contributes before fusion. */
const POOL = 50;

export async function hybridSearch(ctx: BrainContext, q: HybridQuery): Promise<HybridResult> {
  const filter = q.filter ?? {};
  // The query embedding runs in a worker thread while the index refreshes.
  const vectorPromise = q.vector ? Promise.resolve(q.vector) : ctx.stores.embedder.embed([q.query]).then((v) => v[0]);
  vectorPromise.catch(() => {});
  const index = await ctx.indexes.fresh(q.organizationId, q.namespace);
  const vector = await vectorPromise;
  if (index.size === 0) return { results: [], searched: 0, index };
  const pool = Math.max(POOL, q.limit * 3);
  const lexHits = index.search(q.query, pool, filter);
  const postFiltered =
    filter.updatedAfter !== undefined ||
    filter.updatedBefore !== undefined ||
    Boolean(filter.entities?.length) ||
    Boolean(filter.excludeKeys?.size) ||
    filter.allowKey !== undefined;
  const semMatches = await ctx.stores.vectors.search(q.organizationId, vector, {
    limit: postFiltered ? pool * 4 : pool,
    filter: filter.tags?.length ? { namespace: q.namespace, tags: filter.tags } : { namespace: q.namespace },
  });

  const candidates = new Map<string, Candidate>();
  for (const hit of lexHits) candidates.set(hit.key, { key: hit.key, lexical: hit.score });
  let semKept = 0;
  for (const match of semMatches) {
    const key = String(match.payload.key);
    // The lexical index is the authority on what exists and passes the filters.
    if (!index.matches(key, filter)) continue;
    if (semKept++ >= pool) break;
    const existing = candidates.get(key);
    if (existing) existing.semantic = match.score;
    else candidates.set(key, { key, lexical: index.score(q.query, key), semantic: match.score });
  }
  const fused = fuse([...candidates.values()], ctx.weights.lexical).sort((a, b) => b.relevance - a.relevance || (a.key < b.key ? -1 : 1));
  // Feedback can lift a result by at most weights.feedback + weights.recency; fetch enough
  // candidates that a lifted one is not cut before it is scored.
  const shortlist = fused.slice(0, Math.max(q.limit * 3, 30));
  const records = await ctx.memories.getMany(shortlist.map((f) => memoryId(q.organizationId, q.namespace, f.key)));
  const byKey = new Map(records.filter(isLive).map((r) => [r.key, r]));
  const now = ctx.now();
  const results: RankedMemory[] = [];
  for (const f of shortlist) {
    const record = byKey.get(f.key);
    if (!record) continue;
    const feedback = feedbackScore(record.stats, now);
    const recency = recencyScore(record.updatedAt, now);
    results.push({
      record,
      scores: {
        semantic: f.semantic,
        lexical: f.lexical,
        relevance: f.relevance,
        feedback,
        recency,
        final: finalScore(f.relevance, feedback, recency, ctx.weights),
      },
      warning: failureWarning(record.stats, now),
    });
  }
  rankHistoryBelow(results, ctx.weights);
  return { results: results.slice(0, q.limit), searched: index.size, index };
}
