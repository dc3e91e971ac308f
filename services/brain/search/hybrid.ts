// Hybrid retrieval over one (organization, namespace): BM25 from the in-memory lexical index and
// cosine similarity from the vectors port, fused (ranking.ts), then adjusted by feedback and
// recency read from the records themselves.
import type { BrainContext } from '../context.ts';
import { isLive, memoryId, type MemoryRecord, type NamespaceName } from '../memory-record.ts';
import { eventTimeOf } from '../event-time.ts';
import { hasFilter, type LexicalFilter, type LexicalIndex } from './lexical-index.ts';
import { cueScore, type QueryCues, queryCues } from './query-cues.ts';
import {
  failureWarning,
  feedbackScore,
  finalScore,
  fuse,
  rankHistoryBelow,
  recencyScore,
  type Candidate,
  type FusedScore,
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
  cues: number;
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

/**
 * Candidates each signal contributes before fusion, and candidates whose records are read and
 * ranked with feedback and recency. Neither depends on the request's limit (at most 50): when
 * they did, the normalisation of each signal (over its candidates) and the cut before feedback
 * moved with the limit, and the first ten results for limit 10 and limit 20 differed for over
 * half of the queries. Now a longer limit only shows more of the same ranking.
 */
const POOL = 50;
const SHORTLIST = 50;
/** Candidates added by each cue of the query. */
const CUE_POOL = 20;

export async function hybridSearch(ctx: BrainContext, q: HybridQuery): Promise<HybridResult> {
  // The query embedding runs in a worker thread while the index refreshes.
  const vectorPromise = q.vector ? Promise.resolve(q.vector) : ctx.queryEmbeddings.embed(q.query);
  vectorPromise.catch(() => {});
  const index = await ctx.indexes.fresh(q.organizationId, q.namespace);
  const vector = await vectorPromise;
  if (index.size === 0) return { results: [], searched: 0, index };
  const cues = queryCues(q.query, index, ctx.now());
  const candidates = await gatherCandidates(ctx, q, index, vector!, cues);
  const cueOf = new Map([...candidates.keys()].map((key) => [key, cueScore(cues, index, key)]));
  // Ordered by what is known without reading records; feedback and recency can then lift a
  // result by at most weights.feedback + weights.recency, so enough candidates are read that a
  // lifted one is not cut before it is scored.
  const early = (f: FusedScore) => f.relevance + ctx.weights.cues * cueOf.get(f.key)!;
  const fused = fuse([...candidates.values()], ctx.weights.lexical).sort((a, b) => early(b) - early(a) || (a.key < b.key ? -1 : 1));
  const shortlist = fused.slice(0, SHORTLIST);
  const records = await ctx.memories.getMany(shortlist.map((f) => memoryId(q.organizationId, q.namespace, f.key)));
  const byKey = new Map(records.filter(isLive).map((r) => [r.key, r]));
  const now = ctx.now();
  const results: RankedMemory[] = [];
  for (const f of shortlist) {
    const record = byKey.get(f.key);
    if (!record) continue;
    const feedback = feedbackScore(record.stats, now);
    const recency = recencyScore(eventTimeOf(record), now);
    const cue = cueOf.get(f.key)!;
    const final = finalScore(f.relevance, feedback, recency, cue, ctx.weights);
    results.push({
      record,
      scores: { semantic: f.semantic, lexical: f.lexical, relevance: f.relevance, feedback, recency, cues: cue, final },
      warning: failureWarning(record.stats, now),
    });
  }
  rankHistoryBelow(results, ctx.weights);
  return { results: results.slice(0, q.limit), searched: index.size, index };
}

/**
 * The candidates of both signals: the best BM25 hits, the best BM25 hits within what the query
 * names (its period, its entities), and the nearest embeddings that pass the filter.
 */
async function gatherCandidates(
  ctx: BrainContext,
  q: HybridQuery,
  index: LexicalIndex,
  vector: Float32Array,
  cues: QueryCues,
): Promise<Map<string, Candidate>> {
  const filter = q.filter ?? {};
  // Filters other than tags are checked against the lexical index after the vector search.
  const postFiltered = hasFilter({ ...filter, tags: undefined });
  const semMatches = await ctx.stores.vectors.search(q.organizationId, vector, {
    limit: postFiltered ? POOL * 4 : POOL,
    filter: filter.tags?.length ? { namespace: q.namespace, tags: filter.tags } : { namespace: q.namespace },
  });
  const candidates = new Map<string, Candidate>();
  const lexical = [...index.search(q.query, POOL, filter)];
  if (cues.period) {
    lexical.push(...index.search(q.query, CUE_POOL, { ...filter, eventAfter: cues.period.after, eventBefore: cues.period.before }));
  }
  if (cues.entities.length && !filter.entities?.length) {
    lexical.push(...index.search(q.query, CUE_POOL, { ...filter, entities: cues.entities }));
  }
  for (const hit of lexical) if (!candidates.has(hit.key)) candidates.set(hit.key, { key: hit.key, lexical: hit.score });
  const bm25 = index.scorer(q.query);
  let semKept = 0;
  for (const match of semMatches) {
    const key = String(match.payload.key);
    // The lexical index is the authority on what exists and passes the filters.
    if (!index.matches(key, filter)) continue;
    if (semKept++ >= POOL) break;
    const existing = candidates.get(key);
    if (existing) existing.semantic = match.score;
    else candidates.set(key, { key, lexical: bm25(key), semantic: match.score });
  }
  return candidates;
}
