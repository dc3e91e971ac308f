// An in-memory BM25 index of one (organization, namespace). It also answers the exact lookups the
// brain needs without a store round trip: by content hash (duplicates) and by entity (recall).
//
// Postings are packed integers (slot * 256 + term frequency) in plain arrays; removing a document
// only marks its slot dead, and postings are compacted once a quarter of the slots are dead. That
// keeps writes O(terms) and memory near 8 bytes per posting at 100,000 memories.
import { terms } from '../text.ts';

export interface IndexedMemory {
  key: string;
  title: string;
  content: string;
  tags: string[];
  entities: string[];
  updatedAt: number;
  /** Event time (event-time.ts); updatedAt when absent. */
  eventAt?: number;
  /** Write sequence that produced this state (see index-registry.ts). */
  seq: number;
  contentHash: string;
}

interface DocEntry {
  key: string;
  slot: number;
  length: number;
  terms: string[];
  freqs: number[];
  tags: string[];
  entities: string[];
  updatedAt: number;
  eventAt: number;
  seq: number;
  contentHash: string;
}

export interface LexicalFilter {
  /** Every tag must be present. */
  tags?: string[];
  /** At least one entity (lower-cased) must be present. */
  entities?: string[];
  updatedAfter?: number;
  updatedBefore?: number;
  /** Event time at or after. */
  eventAfter?: number;
  /** Event time before. */
  eventBefore?: number;
  excludeKeys?: Set<string>;
  /** Only keys this accepts (a caller narrowed to part of the memory, services/brain/access.ts). */
  allowKey?: (key: string) => boolean;
}

export interface LexicalHit {
  key: string;
  score: number;
}

const K1 = 1.2;
const B = 0.75;
const MAX_TF = 255;
/** Slots a posting can name: slot * 256 + tf stays below 2^32, for integer operations. */
const MAX_SLOTS = 2 ** 24;
/** Title words count this many times: a title is a summary, so its words weigh more. */
const TITLE_WEIGHT = 2;

export function normalizeEntity(name: string): string {
  return name.trim().toLowerCase().replace(/\s+/g, ' ');
}

/** The weighted bag of words of a memory: title twice, content, tags, entities and key words. */
export function memoryTerms(doc: Pick<IndexedMemory, 'key' | 'title' | 'content' | 'tags' | 'entities'>): string[] {
  const titleTerms = terms(doc.title);
  const out: string[] = [];
  for (let i = 0; i < TITLE_WEIGHT; i++) out.push(...titleTerms);
  out.push(...terms(doc.content));
  out.push(...terms(doc.tags.join(' ')));
  out.push(...terms(doc.entities.join(' ')));
  out.push(...terms(doc.key.replace(/[._:/-]+/g, ' ')));
  return out;
}

export class LexicalIndex {
  private docs = new Map<string, DocEntry>();
  private slots: (DocEntry | undefined)[] = [];
  private postings = new Map<string, number[]>();
  private df = new Map<string, number>();
  private byHash = new Map<string, Set<string>>();
  /** The documents listing each entity (normalized). */
  private byEntity = new Map<string, Set<DocEntry>>();
  private totalLength = 0;
  /** Distinct terms summed over the live documents, for estimatedBytes. */
  private termRefs = 0;
  private dead = 0;
  private scratch = new Float64Array(1024);
  /** Length of the document in each slot, 0 for a dead slot: read without touching the entries. */
  private lengths = new Float64Array(1024);

  get size(): number {
    return this.docs.size;
  }

  /**
   * Estimated bytes held, for the memory budget (services/common/storage/index-budget.ts): per
   * memory (its entry, key, hash, tags, lookups), per distinct term of a memory (term, frequency,
   * posting), per word of the vocabulary, per slot. Fitted to V8's heap (Node 24) on indexes of
   * 20,000 to 100,000 memories; it overstates the labeled set's variations by about 7 %.
   */
  estimatedBytes(): number {
    return this.docs.size * 780 + this.termRefs * 28 + this.postings.size * 300 + this.slots.length * 24;
  }

  has(key: string): boolean {
    return this.docs.has(key);
  }

  /** Sequence of the indexed state of `key`, or undefined when absent. */
  seqOf(key: string): number | undefined {
    return this.docs.get(key)?.seq;
  }

  updatedAtOf(key: string): number | undefined {
    return this.docs.get(key)?.updatedAt;
  }

  upsert(doc: IndexedMemory): void {
    this.remove(doc.key);
    if (this.slots.length >= MAX_SLOTS) this.compact();
    if (this.slots.length >= MAX_SLOTS) throw new Error(`a lexical index holds at most ${MAX_SLOTS} memories`);
    const counts = new Map<string, number>();
    const all = memoryTerms(doc);
    for (const t of all) counts.set(t, (counts.get(t) ?? 0) + 1);
    const entry: DocEntry = {
      key: doc.key,
      slot: this.slots.length,
      length: all.length,
      terms: [...counts.keys()],
      freqs: [...counts.values()],
      tags: doc.tags,
      entities: doc.entities.map(normalizeEntity),
      updatedAt: doc.updatedAt,
      eventAt: doc.eventAt ?? doc.updatedAt,
      seq: doc.seq,
      contentHash: doc.contentHash,
    };
    this.slots.push(entry);
    this.setLength(entry.slot, entry.length);
    this.docs.set(doc.key, entry);
    this.totalLength += entry.length;
    this.termRefs += entry.terms.length;
    for (let i = 0; i < entry.terms.length; i++) {
      const t = entry.terms[i];
      let list = this.postings.get(t);
      if (!list) this.postings.set(t, (list = []));
      list.push(entry.slot * 256 + Math.min(entry.freqs[i], MAX_TF));
      this.df.set(t, (this.df.get(t) ?? 0) + 1);
    }
    addTo(this.byHash, entry.contentHash, entry.key);
    for (const e of entry.entities) addTo(this.byEntity, e, entry);
  }

  remove(key: string): void {
    const entry = this.docs.get(key);
    if (!entry) return;
    this.docs.delete(key);
    this.slots[entry.slot] = undefined;
    this.lengths[entry.slot] = 0;
    this.dead += 1;
    this.totalLength -= entry.length;
    this.termRefs -= entry.terms.length;
    for (const t of entry.terms) {
      const n = (this.df.get(t) ?? 1) - 1;
      if (n <= 0) this.df.delete(t);
      else this.df.set(t, n);
    }
    removeFrom(this.byHash, entry.contentHash, key);
    for (const e of entry.entities) removeFrom(this.byEntity, e, entry);
    if (this.dead > 1_000 && this.dead > this.slots.length / 4) this.compact();
  }

  /** Whether some memory lists the entity (normalized). */
  hasEntity(normalized: string): boolean {
    return this.byEntity.has(normalized);
  }

  keysWithHash(hash: string): string[] {
    return [...(this.byHash.get(hash) ?? [])];
  }

  /** Keys mentioning the entity, most recently updated first. */
  keysForEntity(name: string): string[] {
    const entries = [...(this.byEntity.get(normalizeEntity(name)) ?? [])];
    return entries.sort((a, b) => b.updatedAt - a.updatedAt).map((e) => e.key);
  }

  matches(key: string, filter: LexicalFilter): boolean {
    const entry = this.docs.get(key);
    return entry !== undefined && this.passes(entry, compileFilter(filter));
  }

  private passes(entry: DocEntry, filter: CompiledFilter): boolean {
    if (filter.excludeKeys?.has(entry.key)) return false;
    if (filter.allowKey && !filter.allowKey(entry.key)) return false;
    if (filter.updatedAfter !== undefined && entry.updatedAt <= filter.updatedAfter) return false;
    if (filter.updatedBefore !== undefined && entry.updatedAt >= filter.updatedBefore) return false;
    if (filter.eventAfter !== undefined && entry.eventAt < filter.eventAfter) return false;
    if (filter.eventBefore !== undefined && entry.eventAt >= filter.eventBefore) return false;
    if (filter.tags?.length && !filter.tags.every((t) => entry.tags.includes(t))) return false;
    if (filter.entitySet && !entry.entities.some((e) => filter.entitySet!.has(e))) return false;
    return true;
  }

  /** Query terms with their inverse document frequency, rarest first, at most `maxTerms`. */
  private weightedTerms(query: string, maxTerms: number): WeightedTerm[] {
    const n = this.docs.size;
    const seen = new Set<string>();
    const out: WeightedTerm[] = [];
    for (const term of terms(query)) {
      if (seen.has(term)) continue;
      seen.add(term);
      const df = this.df.get(term);
      if (!df) continue;
      out.push({ term, idf: Math.log(1 + (n - df + 0.5) / (df + 0.5)) });
    }
    out.sort((a, b) => b.idf - a.idf);
    return out.slice(0, maxTerms);
  }

  /**
   * BM25 top hits for the query among documents passing the filter. Exact, with MaxScore
   * pruning: terms are scored rarest first, and once the most the remaining (commoner) terms
   * could add to a document is below the `limit`-th best score so far, a document none of the
   * rarer terms matched can no longer make the top: the long postings of common words then only
   * update documents already found, instead of creating an entry for most of the index.
   */
  search(query: string, limit: number, filter: LexicalFilter = {}, maxTerms = 32): LexicalHit[] {
    if (this.docs.size === 0 || limit <= 0) return [];
    const compiled = compileFilter(filter);
    const weighted = this.weightedTerms(query, maxTerms);
    const within = this.entitySlots(compiled, weighted);
    return within ? this.searchSlots(within, weighted, limit, compiled) : this.searchPostings(weighted, limit, compiled);
  }

  /**
   * The slots of the documents listing one of the filter's entities, when scoring them one by one
   * costs less than walking the query terms' postings (an entity most often names a handful of
   * memories, a query word thousands); undefined otherwise. With an entity filter the postings
   * walk can rarely prune (few of the best documents pass the filter), so it reads every posting.
   */
  private entitySlots(filter: CompiledFilter, weighted: WeightedTerm[]): number[] | undefined {
    if (!filter.entitySet) return undefined;
    let documents = 0;
    for (const e of filter.entitySet) documents += this.byEntity.get(e)?.size ?? 0;
    let postings = 0;
    for (const { term } of weighted) postings += this.postings.get(term)!.length;
    // Scoring a document looks each query term up among its distinct terms.
    if (documents * weighted.length * 4 > postings) return undefined;
    const slots = new Set<number>();
    for (const e of filter.entitySet) for (const entry of this.byEntity.get(e) ?? []) slots.add(entry.slot);
    return [...slots];
  }

  /** BM25 of the documents in `slots` one by one: the same scores the postings walk sums. */
  private searchSlots(slots: number[], weighted: WeightedTerm[], limit: number, filter: CompiledFilter): LexicalHit[] {
    const { norm0, norm1 } = this.lengthNorm();
    const scratch = this.scratchFor();
    const touched: number[] = [];
    for (const slot of slots) {
      const score = this.scoreEntry(this.slots[slot]!, weighted, norm0, norm1);
      if (score === 0) continue;
      scratch[slot] = score;
      touched.push(slot);
    }
    // Every slot lists one of the entities: only the filter's other conditions are left to check.
    return this.topTouched(touched, limit, compileFilter({ ...filter, entities: undefined }));
  }

  /** BM25's length normalisation K1 * (1 - B + B * length / avgdl) as norm0 + norm1 * length. */
  private lengthNorm(): { norm0: number; norm1: number } {
    const avgdl = this.totalLength / this.docs.size;
    return { norm0: K1 * (1 - B), norm1: (K1 * B) / avgdl };
  }

  /** A document's BM25 for the weighted terms, summed in their order as the postings walk does. */
  private scoreEntry(entry: DocEntry, weighted: WeightedTerm[], norm0: number, norm1: number): number {
    let total = 0;
    for (const { term, idf } of weighted) {
      const i = entry.terms.indexOf(term);
      if (i < 0) continue;
      const tf = Math.min(entry.freqs[i]!, MAX_TF);
      total += (idf * tf * (K1 + 1)) / (tf + norm0 + norm1 * entry.length);
    }
    return total;
  }

  /** The per-slot score buffer, all zeros between searches, as long as the slots. */
  private scratchFor(): Float64Array {
    if (this.scratch.length < this.slots.length) this.scratch = new Float64Array(this.slots.length * 2);
    return this.scratch;
  }

  private searchPostings(weighted: WeightedTerm[], limit: number, filter: CompiledFilter): LexicalHit[] {
    const scratch = this.scratchFor();
    const { norm0, norm1 } = this.lengthNorm();
    const lengths = this.lengths;
    const touched: number[] = [];
    // The most each term can add to one document: BM25 with tf -> infinity and length -> 0.
    const rest = weighted.map((w) => w.idf * (K1 + 1));
    for (let i = rest.length - 2; i >= 0; i--) rest[i]! += rest[i + 1]!;
    let pruned = false;
    for (const [i, { term, idf }] of weighted.entries()) {
      const list = this.postings.get(term)!;
      if (!pruned && touched.length >= limit && rest[i]! < this.kthScore(touched, limit, filter)) pruned = true;
      if (pruned && list.length > touched.length * 4) {
        this.scoreTouched(term, idf, touched, norm0, norm1);
        continue;
      }
      for (const packed of list) {
        // Integer operations: a posting is below 2^32 while slots are below 2^24 (see upsert).
        const slot = packed >>> 8;
        const length = lengths[slot]!;
        // A dead slot has no length; after pruning only documents found so far are updated.
        if (length === 0 || (pruned && scratch[slot] === 0)) continue;
        const tf = packed & 255;
        if (scratch[slot] === 0) touched.push(slot);
        scratch[slot] += (idf * tf * (K1 + 1)) / (tf + norm0 + norm1 * length);
      }
    }
    return this.topTouched(touched, limit, filter);
  }

  /**
   * The best `limit` of the touched slots passing the filter, by their scores in the scratch
   * buffer, which is left all zeros. Only documents scoring at least the limit-th best (ties
   * included, for the order by key) are made hits: a common word touches thousands of documents,
   * and making each one an object was the walk's largest cost.
   */
  private topTouched(touched: number[], limit: number, filter: CompiledFilter): LexicalHit[] {
    const scratch = this.scratch;
    const threshold = this.kthScore(touched, limit, filter);
    const hits: LexicalHit[] = [];
    for (const slot of touched) {
      const score = scratch[slot]!;
      scratch[slot] = 0;
      if (score < threshold) continue;
      const entry = this.slots[slot]!;
      if (filter.any && !this.passes(entry, filter)) continue;
      hits.push({ key: entry.key, score });
    }
    return topK(hits, limit);
  }

  private setLength(slot: number, length: number): void {
    if (slot >= this.lengths.length) {
      const grown = new Float64Array(this.lengths.length * 2);
      grown.set(this.lengths);
      this.lengths = grown;
    }
    this.lengths[slot] = length;
  }

  /** The `limit`-th best partial score among the found documents passing the filter (0 if fewer). */
  private kthScore(touched: number[], limit: number, filter: CompiledFilter): number {
    const filtered = filter.any;
    const best: number[] = [];
    for (const slot of touched) {
      const score = this.scratch[slot]!;
      if (best.length === limit && score <= best[limit - 1]!) continue;
      if (filtered && !this.passes(this.slots[slot]!, filter)) continue;
      let i = best.length === limit ? limit - 1 : best.length;
      if (best.length < limit) best.push(score);
      while (i > 0 && score > best[i - 1]!) {
        best[i] = best[i - 1]!;
        i -= 1;
      }
      best[i] = score;
    }
    return best.length === limit ? best[limit - 1]! : 0;
  }

  /** Adds a term's score to the documents found so far, looking the term up in each. */
  private scoreTouched(term: string, idf: number, touched: number[], norm0: number, norm1: number): void {
    for (const slot of touched) {
      const entry = this.slots[slot]!;
      const i = entry.terms.indexOf(term);
      if (i < 0) continue;
      const tf = Math.min(entry.freqs[i]!, MAX_TF);
      this.scratch[slot]! += (idf * tf * (K1 + 1)) / (tf + norm0 + norm1 * entry.length);
    }
  }

  /**
   * BM25 of single documents for the query (0 when no word matches or the key is absent): the
   * query's terms are weighed once, for every document scored.
   */
  scorer(query: string): (key: string) => number {
    const weighted = this.weightedTerms(query, 32);
    const { norm0, norm1 } = this.lengthNorm();
    return (key) => {
      const entry = this.docs.get(key);
      return entry ? this.scoreEntry(entry, weighted, norm0, norm1) : 0;
    };
  }

  /** Keys passing the filter, most recently updated first (for filter-only listings). */
  recent(limit: number, filter: LexicalFilter = {}): string[] {
    const compiled = compileFilter(filter);
    const out: DocEntry[] = [];
    for (const entry of this.docs.values()) if (this.passes(entry, compiled)) out.push(entry);
    out.sort((a, b) => b.updatedAt - a.updatedAt);
    return out.slice(0, limit).map((e) => e.key);
  }

  private compact(): void {
    const live = [...this.docs.values()];
    this.slots = [];
    this.lengths.fill(0);
    this.postings = new Map();
    this.dead = 0;
    for (const entry of live) {
      entry.slot = this.slots.length;
      this.slots.push(entry);
      this.setLength(entry.slot, entry.length);
      for (let i = 0; i < entry.terms.length; i++) {
        let list = this.postings.get(entry.terms[i]);
        if (!list) this.postings.set(entry.terms[i], (list = []));
        list.push(entry.slot * 256 + Math.min(entry.freqs[i], MAX_TF));
      }
    }
  }
}

interface WeightedTerm {
  term: string;
  idf: number;
}

/** A filter checked against many documents: its entities normalized once, into a set. */
interface CompiledFilter extends LexicalFilter {
  entitySet?: Set<string>;
  /** hasFilter() of the filter. */
  any: boolean;
}

function compileFilter(filter: LexicalFilter): CompiledFilter {
  const entitySet = filter.entities?.length ? new Set(filter.entities.map(normalizeEntity)) : undefined;
  return { ...filter, entitySet, any: hasFilter(filter) };
}

export function hasFilter(f: LexicalFilter): boolean {
  return Boolean(
    f.tags?.length ||
      f.entities?.length ||
      f.updatedAfter !== undefined ||
      f.updatedBefore !== undefined ||
      f.eventAfter !== undefined ||
      f.eventBefore !== undefined ||
      f.excludeKeys?.size ||
      f.allowKey,
  );
}

function addTo<T>(map: Map<string, Set<T>>, k: string, v: T): void {
  let set = map.get(k);
  if (!set) map.set(k, (set = new Set()));
  set.add(v);
}

function removeFrom<T>(map: Map<string, Set<T>>, k: string, v: T): void {
  const set = map.get(k);
  if (!set) return;
  set.delete(v);
  if (set.size === 0) map.delete(k);
}

/** The `limit` highest scores, best first; ties by key so results are deterministic. */
export function topK<T extends { key: string; score: number }>(items: T[], limit: number): T[] {
  const better = (a: T, b: T) => a.score > b.score || (a.score === b.score && a.key < b.key);
  if (items.length <= limit * 4) return items.sort((a, b) => (better(a, b) ? -1 : 1)).slice(0, limit);
  // Bounded insertion: O(n) for the common case where few items beat the current worst.
  const best: T[] = [];
  for (const item of items) {
    if (best.length === limit && !better(item, best[limit - 1])) continue;
    let i = best.length === limit ? limit - 1 : best.length;
    if (best.length < limit) best.push(item);
    while (i > 0 && better(item, best[i - 1])) {
      best[i] = best[i - 1];
      i -= 1;
    }
    best[i] = item;
  }
  return best;
}
