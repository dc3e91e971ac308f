// Words, as the lexical index, the duplicate check and the contradiction detector see them.
import { createHash } from 'node:crypto';
import porter2 from 'wink-porter2-stemmer';

const STOPWORDS = new Set(
  (
    'a an and are as at be been being but by for from has have had he her his i if in into is it its ' +
    'me my of on or our she so than that the their them then there these they this those to us was we ' +
    'were what when where which while who whom why will with would you your do does did can could ' +
    'should shall may might must just also about over under again very too'
  ).split(' '),
);

/** Lower-cased words and numbers (Unicode letters and digits; '.' kept inside numbers). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/\p{L}[\p{L}\p{N}'’]*|\p{N}+(?:[.,]\p{N}+)*\p{L}*/gu) ?? [];
}

/** Stems of words seen recently: the same few thousand words recur in every write and search. */
const stems = new Map<string, string>();
const STEM_CACHE = 50_000;

/**
 * The word's Porter2 (Snowball English) stem, from a maintained package: "deploys", "deployed"
 * and "deploying" all become "deploy", and "moved" meets "move". Numbers and words with digits
 * are kept as they are.
 */
export function stem(word: string): string {
  const known = stems.get(word);
  if (known !== undefined) return known;
  const w = word.replace(/['’]s$/, '');
  const out = w.length <= 2 || /\d/.test(w) ? w : porter2(w.replace(/’/g, "'"));
  if (stems.size >= STEM_CACHE) stems.clear();
  stems.set(word, out);
  return out;
}

/** Index terms: stemmed words without stopwords. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text)) {
    if (STOPWORDS.has(word)) continue;
    out.push(stem(word));
  }
  return out;
}

export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}

/** Text normalized for exact-duplicate detection: case, punctuation and spacing do not count. */
export function normalizedText(text: string): string {
  return words(text).join(' ');
}

export function contentHash(text: string): string {
  return createHash('sha256').update(normalizedText(text)).digest('base64url').slice(0, 24);
}

/** Jaccard overlap of two term sets, 0..1. */
export function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared += 1;
  return shared / (a.size + b.size - shared);
}

/** Rough token estimate used for budgets: four characters per token. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
