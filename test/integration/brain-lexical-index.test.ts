// The lexical index's pruned BM25 (MaxScore: common words only update documents rarer words
// found, once no other document can make the top) returns exactly what scoring every posting
// returns: same keys, same order, same scores, with and without filters; and a search restricted to
// the memories listing an entity (scored one by one when they are few) returns what scoring every
// memory that passes the filter returns.
import { describe, expect, it } from 'vitest';
import { type LexicalFilter, LexicalIndex } from '../../services/brain/search/lexical-index.ts';

const COMMON = ['service', 'team', 'deploy', 'database', 'alert', 'release', 'cache', 'region', 'owner', 'latency'];
const RARE = Array.from({ length: 400 }, (_, i) => `term${i}x`);

let seed = 42;
function random(): number {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
}
const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)]!;

function corpus(size: number): LexicalIndex {
  const index = new LexicalIndex();
  for (let i = 0; i < size; i++) {
    const words = Array.from({ length: 4 + Math.floor(random() * 20) }, () => (random() < 0.7 ? pick(COMMON) : pick(RARE)));
    index.upsert({
      key: `doc-${i}`,
      title: random() < 0.3 ? pick(RARE) : '',
      content: words.join(' '),
      tags: [`t${i % 5}`],
      // A rare entity (a dozen documents each) and a common one (a third of them).
      entities: [...(i % 500 < 12 ? [`Service ${i % 500}`] : []), ...(i % 3 === 0 ? ['Platform Team'] : [])],
      updatedAt: i,
      seq: i + 1,
      contentHash: String(i),
    });
  }
  // Some deletions, so that dead slots are skipped too.
  for (let i = 0; i < size; i += 7) index.remove(`doc-${i}`);
  return index;
}

describe('pruned BM25 of the lexical index', () => {
  it('returns the same top hits as scoring every posting', () => {
    const index = corpus(6_000);
    for (let q = 0; q < 300; q++) {
      const query = Array.from({ length: 1 + Math.floor(random() * 6) }, () => (random() < 0.5 ? pick(COMMON) : pick(RARE))).join(' ');
      const cases: [number, LexicalFilter][] = [
        [10, {}],
        [50, {}],
        [10, { tags: ['t3'] }],
      ];
      for (const [limit, filter] of cases) {
        const pruned = index.search(query, limit, filter);
        // A limit above the number of matching documents never prunes.
        const full = index.search(query, 1_000_000, filter).slice(0, limit);
        expect(pruned.map((h) => h.key)).toEqual(full.map((h) => h.key));
        for (const [i, h] of pruned.entries()) expect(h.score).toBeCloseTo(full[i]!.score, 9);
      }
    }
  });

  it('restricted to an entity, returns what scoring every document that lists it returns', () => {
    const index = corpus(6_000);
    const keys = Array.from({ length: 6_000 }, (_, i) => `doc-${i}`);
    for (let q = 0; q < 200; q++) {
      const query = Array.from({ length: 1 + Math.floor(random() * 6) }, () => (random() < 0.5 ? pick(COMMON) : pick(RARE))).join(' ');
      const entity = q % 2 ? `service ${q % 12}` : 'PLATFORM  team';
      for (const filter of [{ entities: [entity] }, { entities: [entity], tags: ['t2'] }] as LexicalFilter[]) {
        const bm25 = index.scorer(query);
        const expected = keys
          .filter((key) => index.matches(key, filter))
          .map((key) => ({ key, score: bm25(key) }))
          .filter((h) => h.score > 0)
          .sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1))
          .slice(0, 20);
        const found = index.search(query, 20, filter);
        expect(found.map((h) => h.key)).toEqual(expected.map((h) => h.key));
        for (const [i, h] of found.entries()) expect(h.score).toBeCloseTo(expected[i]!.score, 9);
      }
    }
  });
});
