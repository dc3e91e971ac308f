// Finding entities by name or alias, tolerating typos: one pass over the organization's entities
// in memory (100,000 entities take a few milliseconds), scoring each name against the query and
// keeping an entity's best name.
import { distance } from 'fastest-levenshtein';
import type { GraphIndex } from '../graph-index.ts';
import { normalizeName, type EntityRecord } from '../records.ts';

export interface EntityHit {
  entity: EntityRecord;
  matched: string;
  score: number;
}

/** Edits tolerated for a query of this length: none for very short names, up to three. */
function editsAllowed(length: number): number {
  if (length < 4) return 0;
  if (length < 7) return 1;
  if (length < 12) return 2;
  return 3;
}

/** How well a normalized name matches the normalized query, 0 for not at all. */
export function nameScore(query: string, name: string): number {
  if (name === query) return 1;
  if (name.startsWith(query)) return 0.9 - Math.min(0.1, (name.length - query.length) / 200);
  const words = name.split(/[\s\-_./]+/);
  const queryWords = query.split(/[\s\-_./]+/).filter(Boolean);
  if (queryWords.every((q) => words.some((w) => w.startsWith(q)))) return 0.8;
  if (name.includes(query)) return 0.7;
  const edits = editsAllowed(query.length);
  if (edits === 0 || Math.abs(name.length - query.length) > edits) return 0;
  const d = distance(query, name);
  return d <= edits ? 0.6 - 0.1 * d : 0;
}

export function searchEntities(graph: GraphIndex, rawQuery: string, kind: string, limit: number): EntityHit[] {
  const query = normalizeName(rawQuery);
  if (!query) return [];
  const hits: EntityHit[] = [];
  for (const entity of graph.entities()) {
    if (kind && entity.kind !== kind) continue;
    let best: EntityHit | undefined;
    for (const name of entity.names) {
      const score = nameScore(query, name);
      if (score > 0 && (!best || score > best.score)) best = { entity, matched: name, score };
    }
    if (best) hits.push(best);
  }
  hits.sort((a, b) => b.score - a.score || a.matched.length - b.matched.length || a.entity.entityId.localeCompare(b.entity.entityId));
  return hits.slice(0, limit);
}
