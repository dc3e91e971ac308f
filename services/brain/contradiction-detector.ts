// The write-time contradiction and duplicate rules. Model-free: they compare what sentences
// claim (detector/claims.ts). The rule (also in docs/brain.md):
//
// 1. Candidates are the memories of the same organization and namespace closest to the new
//    text (see handlers/memories.ts); memories that both list entities and share none are about
//    different things and skipped.
// 2. Sentences are aligned: each sentence of the new memory is paired with the candidate's
//    sentence whose content words (Porter2 stems, without stopwords, greetings and small talk,
//    names, numbers, dates, negations and opposite words) overlap most. A pair aligns at
//    Jaccard >= 0.5 with at least two shared content words, at most three words that only one
//    side has, and no word swapped for another (then the two are about different subjects,
//    "billing listens on 80" and "search listens on 90", or paraphrase each other).
// 3. An aligned pair disagrees when
//    a. one is negated and the other is not, with the same values (no double negation:
//       "is not enabled" agrees with "is disabled"), or
//    b. one holds a word and the other its opposite (enabled/disabled, always/never, ...), or
//    c. exactly one kind of value changed, each side holding one the other lacks: numbers
//       ("two replicas", "three replicas"), dates ("in May", "in June"; not in episodes, where a
//       date tells two occasions apart) or names and identifiers after the subject
//       ("eu-west-1", "eu-central-1"; only when neither memory mentions the other's).
// 4. A text is a duplicate of another only when it says the same thing: both state the same
//    values (signature) and their normalized text is equal (EXACT), or their stemmed word sets
//    overlap >= 0.85 or their embeddings' cosine is >= 0.97 (NEAR).
import { analyze, type Claim, type TextClaims } from './detector/claims.ts';
import { OPPOSITE } from './detector/lexicon.ts';
import { jaccard, stem, words } from './text.ts';

export { analyze, type TextClaims } from './detector/claims.ts';

export interface Disagreement {
  /** Why, in words a reader understands: quotes both sentences. */
  reason: string;
  rule: 'negation' | 'opposite' | 'number' | 'date' | 'value';
}

export interface DetectOptions {
  /** Episodes: a different date is a different occasion, not a correction. */
  episodes?: boolean;
}

const ALIGN_OVERLAP = 0.5;
const MAX_DIFFERING = 3;

function quote(s: string): string {
  return `"${s.length > 160 ? `${s.slice(0, 157)}...` : s}"`;
}

function onlyIn(a: Set<string>, b: Set<string>): string[] {
  return [...a].filter((x) => !b.has(x));
}

/** Each side holds a value the other lacks: a changed value, not an added one. */
function changed(a: Set<string>, b: Set<string>): boolean {
  return onlyIn(a, b).length > 0 && onlyIn(b, a).length > 0;
}

/** Content words and the units of numbers: what two sentences must share to be about the same thing. */
function topic(s: Claim): Set<string> {
  return s.units.size ? new Set([...s.content, ...s.units]) : s.content;
}

/** The sentence of `others` that `s` aligns with, if any. */
function align(s: Claim, others: Claim[]): Claim | undefined {
  const mine = topic(s);
  let best: Claim | undefined;
  let bestOverlap = 0;
  for (const t of others) {
    const overlap = jaccard(mine, topic(t));
    if (overlap > bestOverlap) {
      bestOverlap = overlap;
      best = t;
    }
  }
  if (!best || bestOverlap < ALIGN_OVERLAP) return undefined;
  const theirs = topic(best);
  const common = mine.size - onlyIn(mine, theirs).length;
  // Units may differ ("20 minutes", "2 hours"); content words swapped mean another subject.
  const onlyS = onlyIn(s.content, best.content).length;
  const onlyT = onlyIn(best.content, s.content).length;
  if (common < 2 || onlyS + onlyT > MAX_DIFFERING || (onlyS > 0 && onlyT > 0)) return undefined;
  return best;
}

function opposed(s: Claim, t: Claim): [string, string] | undefined {
  for (const w of s.opposites) {
    if (t.opposites.has(w)) continue;
    const hit = OPPOSITE.get(w)!.opposites.find((o) => t.opposites.has(o) && !s.opposites.has(o));
    if (hit) return [w, hit];
  }
  return undefined;
}

/** How one aligned pair disagrees, if it does. */
function disagreement(s: Claim, t: Claim, a: TextClaims, b: TextClaims, options: DetectOptions): Disagreement | undefined {
  // Both name who or what they are about, and not the same: different subjects.
  if (changed(s.subjects, t.subjects)) return undefined;
  const opposite = opposed(s, t);
  const sameValues = !changed(s.numbers, t.numbers) && !changed(s.dates, t.dates) && !changed(s.values, t.values);
  if (s.negated !== t.negated) {
    if (opposite || !sameValues) return undefined;
    const [neg, pos] = s.negated ? [s, t] : [t, s];
    return { rule: 'negation', reason: `one says ${quote(neg.text)} where the other says ${quote(pos.text)}` };
  }
  if (opposite && sameValues) {
    return { rule: 'opposite', reason: `"${opposite[0]}" in ${quote(s.text)} opposes "${opposite[1]}" in ${quote(t.text)}` };
  }
  // A value changed when the other memory does not mention it at all (then both are known to it).
  const namesChanged =
    changed(s.values, t.values) &&
    onlyIn(s.values, t.values).every((v) => !b.mentions.has(v)) &&
    onlyIn(t.values, s.values).every((v) => !a.mentions.has(v));
  const kinds = [
    changed(s.numbers, t.numbers) ? ('number' as const) : undefined,
    changed(s.dates, t.dates) ? ('date' as const) : undefined,
    namesChanged ? ('value' as const) : undefined,
  ].filter((k) => k !== undefined);
  // Two kinds changed at once ("600 in May", "1200 in June") are usually two time frames.
  if (kinds.length !== 1 || opposite) return undefined;
  const [rule] = kinds;
  if (rule === 'date' && options.episodes) return undefined;
  const what = rule === 'number' ? 'different numbers' : rule === 'date' ? 'different dates' : 'different names';
  return { rule, reason: `${what}: ${quote(s.text)} versus ${quote(t.text)}` };
}

/** The first aligned sentence pair of `a` (new) and `b` (existing) that disagrees, if any. */
export function detectIn(a: TextClaims, b: TextClaims, options: DetectOptions = {}): Disagreement | undefined {
  for (const s of a.sentences) {
    if (topic(s).size < 2) continue;
    const t = align(s, b.sentences);
    if (!t) continue;
    const found = disagreement(s, t, a, b, options);
    if (found) return found;
  }
  return undefined;
}

/** detectIn over two texts (and the entities each memory lists). */
export function detectDisagreement(
  a: string,
  b: string,
  options: DetectOptions & { entitiesA?: string[]; entitiesB?: string[] } = {},
): Disagreement | undefined {
  return detectIn(analyze(a, options.entitiesA), analyze(b, options.entitiesB), options);
}

/** The stemmed words of a text, as near duplicates compare them. */
export function wordSet(text: string): Set<string> {
  return new Set(words(text).map(stem));
}

/** Word-set overlap of two texts, used for near duplicates. */
export function textOverlap(a: string, b: string): number {
  return jaccard(wordSet(a), wordSet(b));
}

/**
 * Both texts state the same values, a prerequisite for being duplicates: the same numbers,
 * dates, negations, opposite words, speaker and time stamp, and each names only what the other
 * mentions (case aside: "WireGuard" and "wireguard").
 */
export function sameClaims(a: TextClaims, b: TextClaims): boolean {
  return a.signature === b.signature && [...a.names].every((n) => b.mentions.has(n)) && [...b.names].every((n) => a.mentions.has(n));
}

export const NEAR_DUPLICATE_OVERLAP = 0.85;
export const NEAR_DUPLICATE_COSINE = 0.97;

/** A memory as the write-time checks compare it. */
export interface ComparedMemory {
  /** Title and content. */
  text: string;
  claims: TextClaims;
  /** wordSet(text). */
  words: Set<string>;
  /** Hash of the normalized text (text.ts contentHash). */
  hash: string;
  tags: string[];
  entities: string[];
}

export interface Comparison {
  disagreement?: Disagreement;
  duplicate?: 'exact' | 'near';
  /** Jaccard overlap of the stemmed word sets. */
  overlap: number;
}

function sameLabels(a: string[], b: string[]): boolean {
  const norm = (xs: string[]) => [...new Set(xs.map((x) => x.trim().toLowerCase()))].sort().join('\n');
  return norm(a) === norm(b);
}

/**
 * What a new memory is to an existing one of the same namespace: a contradiction, a duplicate,
 * or neither. An episode is also its occasion: episodes whose tags or entities differ (another
 * session, other people) are two episodes however alike their words.
 */
export function compareMemories(
  next: ComparedMemory,
  existing: ComparedMemory,
  options: DetectOptions & { cosine?: number } = {},
): Comparison {
  const exact = next.hash === existing.hash;
  const disagreement = exact ? undefined : detectIn(next.claims, existing.claims, options);
  const overlap = jaccard(next.words, existing.words);
  if (disagreement) return { disagreement, overlap };
  const sameOccasion = !options.episodes || (sameLabels(next.tags, existing.tags) && sameLabels(next.entities, existing.entities));
  if (!sameOccasion) return { overlap };
  // The same normalized text says the same thing.
  if (exact) return { duplicate: 'exact', overlap };
  if (!sameClaims(next.claims, existing.claims)) return { overlap };
  const near = overlap >= NEAR_DUPLICATE_OVERLAP || (options.cosine ?? 0) >= NEAR_DUPLICATE_COSINE;
  return near ? { duplicate: 'near', overlap } : { overlap };
}
