// A small BM25F: documents are made of weighted fields (a title counts more than the body), term
// frequencies and lengths are summed with those weights, and scoring walks an inverted index, so
// a query touches only the documents that contain its terms.

const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can do does for from has have how i if in into is it its ' +
    'of on or our so than that the their them then there these they this to was we were what when ' +
    'where which who why will with would you your about after all also any each more most no not ' +
    'only other over same should some such too under up use used using very via vs'
  ).split(' '),
);

/** Light English stemming: enough to join plural and verb forms, never too aggressive. */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 5) return word.slice(0, -3);
  if (word.endsWith('ed') && word.length > 4 && !word.endsWith('eed')) return word.slice(0, -2);
  if (word.endsWith('s') && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** Lower-cased, accent-free word stems without stop words. */
export function tokenize(text: string): string[] {
  const words = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/'s\b/g, '')
    .split(/[^\p{L}\p{N}]+/u);
  const out: string[] = [];
  for (const word of words) {
    if (word.length < 2 || STOP_WORDS.has(word)) continue;
    out.push(stem(word));
  }
  return out;
}

export interface Bm25Field {
  text: string;
  weight: number;
}

export interface Bm25Options {
  k1?: number;
  b?: number;
}

export interface Bm25Index {
  readonly size: number;
  /** BM25 score of every document with at least one query term, by document index. */
  score(query: string): Map<number, number>;
  /** Inverse document frequency of a (tokenized) term; 0 when no document has it. */
  idf(term: string): number;
}

export function createBm25Index(docs: Bm25Field[][], options: Bm25Options = {}): Bm25Index {
  const k1 = options.k1 ?? 1.2;
  const b = options.b ?? 0.75;
  const postings = new Map<string, Array<{ doc: number; tf: number }>>();
  const lengths = new Float64Array(docs.length);
  docs.forEach((fields, doc) => {
    const tf = new Map<string, number>();
    for (const field of fields) {
      const terms = tokenize(field.text);
      lengths[doc] += terms.length * field.weight;
      for (const term of terms) tf.set(term, (tf.get(term) ?? 0) + field.weight);
    }
    for (const [term, weight] of tf) {
      let list = postings.get(term);
      if (!list) postings.set(term, (list = []));
      list.push({ doc, tf: weight });
    }
  });
  let total = 0;
  for (const length of lengths) total += length;
  const avgLength = docs.length > 0 ? total / docs.length || 1 : 1;
  const n = docs.length;
  const idf = (term: string): number => {
    const df = postings.get(term)?.length ?? 0;
    return df === 0 ? 0 : Math.log(1 + (n - df + 0.5) / (df + 0.5));
  };

  return {
    size: n,
    idf,
    score(query) {
      const scores = new Map<number, number>();
      // A term repeated in the query counts once: queries are short and repetition is noise.
      for (const term of new Set(tokenize(query))) {
        const list = postings.get(term);
        if (!list) continue;
        const w = idf(term);
        for (const { doc, tf } of list) {
          const norm = tf + k1 * (1 - b + (b * lengths[doc]) / avgLength);
          scores.set(doc, (scores.get(doc) ?? 0) + (w * tf * (k1 + 1)) / norm);
        }
      }
      return scores;
    },
  };
}
