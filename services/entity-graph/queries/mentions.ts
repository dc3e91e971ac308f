// The entities a text names: runs of its words that are exactly an entity's name or alias, as
// names compare (records.ts normalizeName). recall_context reads a task this way
// (services/brain/handlers/recall.ts): a task names a service in prose ("a maintenance window for
// the Inventory Service"), and the graph may know that name only from relationships the
// extractor read out of memories' text, so no memory lists it among its `entities`.
//
// At each word the longest run (up to MAX_RUN_WORDS words) that is a name wins, and the words it
// covers are not read again: "Payments API" does not also name an entity "API". Only the
// in-memory name map is read, one lookup per run and form (docs/graph.md has the cost).
import type { GraphIndex } from '../graph-index.ts';
import { normalizeName, type EntityRecord } from '../records.ts';

/** Longest name, in words, found in a text; longer names are not recognized there. */
export const MAX_RUN_WORDS = 8;

export interface Mention {
  entity: EntityRecord;
  /** The normalized name or alias that matched. */
  name: string;
  /** Where the words naming it are in the text, [start, end). */
  start: number;
  end: number;
}

interface Word {
  start: number;
  end: number;
}

const WORD = /\S+/g;
const LEADING = /^[("'`“‘[{<]+/u;
const TRAILING = /[)"'`”’\]}>.,;:!?]+$/u;
const POSSESSIVE = /['’]s$/iu;

/** The entities the text names, each once, in the order it first names them, at most `limit`. */
export function findMentions(graph: GraphIndex, text: string, limit: number): Mention[] {
  const words: Word[] = [...text.matchAll(WORD)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
  const found: Mention[] = [];
  const seen = new Set<string>();
  let i = 0;
  while (i < words.length && found.length < limit) {
    // A leading "the" is not part of a name (normalizeName drops it): the run after it is read next.
    if (i + 1 < words.length && isThe(text.slice(words[i].start, words[i].end))) {
      i += 1;
      continue;
    }
    const hit = longestAt(graph, text, words, i);
    if (!hit) {
      i += 1;
      continue;
    }
    if (!seen.has(hit.mention.entity.entityId)) {
      seen.add(hit.mention.entity.entityId);
      found.push(hit.mention);
    }
    i += hit.words;
  }
  return found;
}

function isThe(word: string): boolean {
  return word.replace(LEADING, '').toLowerCase() === 'the';
}

function longestAt(graph: GraphIndex, text: string, words: Word[], i: number): { mention: Mention; words: number } | undefined {
  for (let n = Math.min(MAX_RUN_WORDS, words.length - i); n >= 1; n--) {
    const mention = matchRun(graph, text, words[i].start, words[i + n - 1].end);
    if (mention) return { mention, words: n };
  }
  return undefined;
}

/**
 * The entity a run of words names: as written ("C++", "k8s-prod"), then without the punctuation
 * around it ("(Payments API).", "“Checkout”"), then without a possessive ("Inventory Service's").
 */
function matchRun(graph: GraphIndex, text: string, start: number, end: number): Mention | undefined {
  const run = text.slice(start, end);
  const lead = run.match(LEADING)?.[0].length ?? 0;
  const trail = run.slice(lead).match(TRAILING)?.[0].length ?? 0;
  const cleanEnd = end - trail;
  const spans: [number, number][] = [[start, end]];
  if (lead || trail) spans.push([start + lead, cleanEnd]);
  if (POSSESSIVE.test(text.slice(start + lead, cleanEnd))) spans.push([start + lead, cleanEnd - 2]);
  for (const [a, b] of spans) {
    if (b <= a) continue;
    const name = normalizeName(text.slice(a, b));
    const entity = graph.named(name);
    if (entity) return { entity, name, start: a, end: b };
  }
  return undefined;
}
