// The write-time contradiction and duplicate detector. Model-free: it compares words, numbers
// and negations of sentences that say nearly the same thing. The rule (also in docs/brain.md):
//
// 1. Candidates are the memories of the same organization and namespace that the hybrid search
//    of the new text ranks first (see handlers/memories.ts).
// 2. Sentences are aligned: each sentence of the new memory is paired with the most similar
//    sentence of the candidate by Jaccard overlap of their content words, where numbers,
//    negation words and the words of known opposite pairs are left out of the comparison
//    (so that "is enabled" and "is disabled" can align). A pair aligns at overlap >= 0.5
//    with at least two shared content words and at most three content words that only one
//    of the two sentences has (so "billing listens on 80" and "search listens on 90", about
//    different subjects, still align, but long sentences about other things do not).
//    Memories that both list entities but share none are about different things: skipped.
// 3. An aligned pair disagrees when
//    a. one sentence is negated and the other is not (not, never, no, cannot, n't, ...), or
//    b. one holds a word and the other its opposite (enabled/disabled, always/never, ...), or
//    c. both state numbers and the numbers differ (30 seconds vs 60 seconds).
// 4. A memory that disagrees is a contradiction, whatever its overall similarity. A memory that
//    does not disagree is a duplicate when its normalized text is equal (EXACT) or its word
//    sets overlap >= 0.85, or its embedding's cosine similarity is >= 0.97 (NEAR).
import { isStopword, jaccard, stem, words } from './text.ts';

const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'nothing', 'nobody', 'neither', 'nor', 'cannot', 'without', 'nowhere']);

const OPPOSITES: [string, string][] = [
  ['enabled', 'disabled'],
  ['enable', 'disable'],
  ['true', 'false'],
  ['allow', 'deny'],
  ['allowed', 'denied'],
  ['allowed', 'forbidden'],
  ['always', 'never'],
  ['on', 'off'],
  ['yes', 'no'],
  ['increase', 'decrease'],
  ['start', 'stop'],
  ['started', 'stopped'],
  ['open', 'closed'],
  ['success', 'failure'],
  ['succeeded', 'failed'],
  ['works', 'fails'],
  ['worked', 'failed'],
  ['safe', 'unsafe'],
  ['required', 'optional'],
  ['include', 'exclude'],
  ['included', 'excluded'],
  ['before', 'after'],
  ['synchronous', 'asynchronous'],
  ['sync', 'async'],
  ['public', 'private'],
  ['supported', 'unsupported'],
  ['valid', 'invalid'],
  ['accept', 'reject'],
  ['accepted', 'rejected'],
  ['online', 'offline'],
  ['higher', 'lower'],
  ['more', 'less'],
  ['faster', 'slower'],
  ['larger', 'smaller'],
  ['above', 'below'],
  ['up', 'down'],
  ['add', 'remove'],
  ['added', 'removed'],
  ['internal', 'external'],
  ['available', 'unavailable'],
  ['correct', 'incorrect'],
  ['possible', 'impossible'],
  ['recommended', 'discouraged'],
  ['use', 'avoid'],
  ['first', 'last'],
  ['minimum', 'maximum'],
  ['min', 'max'],
  ['inside', 'outside'],
  ['active', 'inactive'],
  ['healthy', 'unhealthy'],
  ['pass', 'fail'],
  ['passed', 'failed'],
];

const OPPOSITE = new Map<string, string[]>();
for (const [a, b] of OPPOSITES) {
  OPPOSITE.set(a, [...(OPPOSITE.get(a) ?? []), b]);
  OPPOSITE.set(b, [...(OPPOSITE.get(b) ?? []), a]);
}

const NUMBER = /^\p{N}/u;

interface Sentence {
  text: string;
  words: string[];
  content: Set<string>;
  negated: boolean;
  numbers: Set<string>;
}

function isNegation(word: string): boolean {
  return NEGATIONS.has(word) || /n['’]t$/.test(word);
}

export function sentences(text: string): Sentence[] {
  const parts = text
    .split(/(?<=[.!?;])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
  return parts.map((part) => {
    const ws = words(part);
    const content = new Set<string>();
    const numbers = new Set<string>();
    let negated = false;
    for (const w of ws) {
      if (isNegation(w)) negated = true;
      else if (NUMBER.test(w)) numbers.add(w.replace(',', '.'));
      else if (!isStopword(w) && !OPPOSITE.has(w)) content.add(stem(w));
    }
    return { text: part, words: ws, content, negated, numbers };
  });
}

export interface Disagreement {
  /** Why, in words a reader understands: quotes both sentences. */
  reason: string;
  rule: 'negation' | 'opposite' | 'number';
}

const ALIGN_OVERLAP = 0.5;
const MAX_DIFFERING = 3;

function shared(a: Set<string>, b: Set<string>): number {
  let n = 0;
  for (const t of a) if (b.has(t)) n += 1;
  return n;
}

function quote(s: string): string {
  return `"${s.length > 160 ? `${s.slice(0, 157)}...` : s}"`;
}

/** The first aligned sentence pair of `a` (new) and `b` (existing) that disagrees, if any. */
export function detectDisagreement(a: string, b: string): Disagreement | undefined {
  const left = sentences(a);
  const right = sentences(b);
  for (const s of left) {
    let best: Sentence | undefined;
    let bestOverlap = 0;
    for (const t of right) {
      const overlap = jaccard(s.content, t.content);
      if (overlap > bestOverlap) {
        bestOverlap = overlap;
        best = t;
      }
    }
    if (!best || bestOverlap < ALIGN_OVERLAP) continue;
    const common = shared(s.content, best.content);
    if (common < 2 || s.content.size + best.content.size - 2 * common > MAX_DIFFERING) continue;
    if (s.negated !== best.negated) {
      return {
        rule: 'negation',
        reason: `one says ${quote(s.negated ? s.text : best.text)} where the other says ${quote(s.negated ? best.text : s.text)}`,
      };
    }
    for (const w of s.words) {
      const opposites = OPPOSITE.get(w);
      if (!opposites) continue;
      const hit = opposites.find((o) => best.words.includes(o) && !s.words.includes(o));
      if (hit && !best.words.includes(w)) {
        return { rule: 'opposite', reason: `"${w}" in ${quote(s.text)} opposes "${hit}" in ${quote(best.text)}` };
      }
    }
    if (s.numbers.size > 0 && best.numbers.size > 0) {
      const differs = [...s.numbers].some((n) => !best.numbers.has(n)) || [...best.numbers].some((n) => !s.numbers.has(n));
      if (differs) {
        return { rule: 'number', reason: `different numbers: ${quote(s.text)} versus ${quote(best.text)}` };
      }
    }
  }
  return undefined;
}

/** Word-set overlap of two texts, used for near duplicates. */
export function textOverlap(a: string, b: string): number {
  const set = (t: string) => new Set(words(t).map(stem));
  return jaccard(set(a), set(b));
}

export const NEAR_DUPLICATE_OVERLAP = 0.85;
export const NEAR_DUPLICATE_COSINE = 0.97;
