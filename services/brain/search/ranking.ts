// How search results are scored. The formula (also in docs/brain.md):
//
//   lexicalNorm  = bm25 / max bm25 among the candidates                       (0..1)
//   semanticNorm = (cos - cosFloor) / (cosTop - cosFloor), clamped to 0..1, where cosTop and
//                  cosFloor are the highest and lowest cosine among the semantic candidates
//   relevance    = wLex * lexicalNorm + (1 - wLex) * semanticNorm
//   feedback     = (2p - 1) * n / (n + 3) - 0.5 * exp(-daysSinceLastFailure / 14), clamped to -1..1,
//                  with n = worked + failed and p = (worked + 1) / (n + 2)
//   recency      = exp(-daysSinceEvent / 90)
//   cues         = share of the query's cues (a period, entities) the memory matches  (0..1)
//   final        = relevance + wFeedback * feedback + wRecency * recency + wCues * cues
//                  - wSuperseded * superseded
//
// A superseded memory (history) also ranks below its successor whenever both are results.
//
// wLex was tuned on the labeled set of test/fixtures/brain-quality.json: on it (as on the public
// conversational benchmark in agent-memory.md) BM25 alone beats the embedding alone, and the
// fusion only helps when the embedding gets the smaller weight. wCues was swept with it on that
// set and on the conversational one (test/fixtures/brain-conversations.json): 0.3 was best on
// both, and 0.7 stayed the best lexical weight. Figures in docs/brain.md.
import type { OutcomeStatsRecord } from '../memory-record.ts';

export interface RankingWeights {
  lexical: number;
  feedback: number;
  recency: number;
  /** Bonus for matching what the query names (query-cues.ts). */
  cues: number;
  /** Subtracted from a superseded memory's score: history, still findable. */
  superseded: number;
}

export const DEFAULT_WEIGHTS: RankingWeights = { lexical: 0.7, feedback: 0.2, recency: 0.05, cues: 0.3, superseded: 0.3 };

const DAY_MS = 24 * 3600_000;
/** A failure this recent puts a warning on the memory. */
export const WARNING_WINDOW_MS = 30 * DAY_MS;

export function feedbackScore(stats: OutcomeStatsRecord, now: number): number {
  const n = stats.worked + stats.failed;
  const p = (stats.worked + 1) / (n + 2);
  let score = (2 * p - 1) * (n / (n + 3));
  // A recent failure weighs until the memory works again.
  if (lastUseFailed(stats)) {
    score -= 0.5 * Math.exp(-Math.max(0, now - stats.lastFailedAt!) / DAY_MS / 14);
  }
  return Math.max(-1, Math.min(1, score));
}

/** The last reported use failed: a success reported after it clears the failure's weight and warning. */
export function lastUseFailed(stats: OutcomeStatsRecord): boolean {
  return stats.lastFailedAt !== undefined && (stats.lastWorkedAt === undefined || stats.lastWorkedAt < stats.lastFailedAt);
}

export function recencyScore(updatedAt: number, now: number): number {
  return Math.exp(-Math.max(0, now - updatedAt) / DAY_MS / 90);
}

export interface Candidate {
  key: string;
  /** BM25, 0 when no query word matched. */
  lexical: number;
  /** Cosine similarity, undefined when outside the semantic candidates. */
  semantic?: number;
}

export interface FusedScore {
  key: string;
  semantic: number;
  lexical: number;
  relevance: number;
}

/** Fuses the two signals into one relevance per candidate. */
export function fuse(candidates: Candidate[], lexicalWeight: number): FusedScore[] {
  let maxLex = 0;
  let cosTop = -Infinity;
  let cosFloor = Infinity;
  for (const c of candidates) {
    maxLex = Math.max(maxLex, c.lexical);
    if (c.semantic !== undefined) {
      cosTop = Math.max(cosTop, c.semantic);
      cosFloor = Math.min(cosFloor, c.semantic);
    }
  }
  // With a single semantic candidate (or all equal), the floor is taken at zero similarity.
  if (cosFloor >= cosTop) cosFloor = Math.min(0, cosTop - 1e-6);
  return candidates.map((c) => {
    const lex = maxLex > 0 ? c.lexical / maxLex : 0;
    const sem = c.semantic === undefined ? 0 : Math.max(0, Math.min(1, (c.semantic - cosFloor) / (cosTop - cosFloor)));
    return {
      key: c.key,
      semantic: c.semantic ?? 0,
      lexical: c.lexical,
      relevance: lexicalWeight * lex + (1 - lexicalWeight) * sem,
    };
  });
}

export function finalScore(relevance: number, feedback: number, recency: number, cues: number, weights: RankingWeights): number {
  return relevance + weights.feedback * feedback + weights.recency * recency + weights.cues * cues;
}

export interface Warning {
  failedAt: number;
  clientId: string;
  note: string;
  message: string;
  failed: number;
  worked: number;
}

function ago(ms: number): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'} ago`;
  const hours = Math.round(ms / 3600_000);
  if (hours < 48) return `${hours} hour${hours === 1 ? '' : 's'} ago`;
  return `${Math.round(ms / DAY_MS)} days ago`;
}

/** A warning when the memory failed in use within the warning window and has not worked since. */
export function failureWarning(stats: OutcomeStatsRecord, now: number): Warning | undefined {
  const failedAt = stats.lastFailedAt;
  if (failedAt === undefined || !lastUseFailed(stats) || now - failedAt > WARNING_WINDOW_MS) return undefined;
  const by = stats.lastFailedBy ? ` by ${stats.lastFailedBy}` : '';
  const note = stats.lastFailedNote ? `: ${stats.lastFailedNote}` : '';
  const when = new Date(failedAt).toISOString().slice(0, 16).replace('T', ' ');
  return {
    failedAt,
    clientId: stats.lastFailedBy ?? '',
    note: stats.lastFailedNote ?? '',
    failed: stats.failed,
    worked: stats.worked,
    message: `failed in use ${ago(now - failedAt)} (${when} UTC)${by}${note} [worked ${stats.worked}, failed ${stats.failed}]`,
  };
}

interface Ranked {
  record: { key: string; namespace: string; supersededBy?: { namespace: string; key: string } };
  scores: { final: number };
}

/**
 * History below what replaced it: a superseded memory loses `weights.superseded`, and ranks
 * under its successor when both are among the results. Sorts `results` in place, best first.
 */
export function rankHistoryBelow<T extends Ranked>(results: T[], weights: RankingWeights): T[] {
  const byRef = new Map(results.map((r) => [`${r.record.namespace}/${r.record.key}`, r]));
  for (const r of results) if (r.record.supersededBy) r.scores.final -= weights.superseded;
  for (const r of results) {
    const next = r.record.supersededBy && byRef.get(`${r.record.supersededBy.namespace}/${r.record.supersededBy.key}`);
    if (next && r.scores.final >= next.scores.final) r.scores.final = next.scores.final - 1e-6;
  }
  return results.sort((a, b) => b.scores.final - a.scores.final || (a.record.key < b.record.key ? -1 : 1));
}
