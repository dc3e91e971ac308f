// The vectors port contract, run against every implementation: the embedded store always, and
// Qdrant when QDRANT_URL points at a server.

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readString, readUrl } from '../../services/common/config.ts';
import { createEmbeddedVectorStore } from '../../services/common/storage/vectors/embedded.ts';
import type { PayloadValue, VectorPoint, VectorStore } from '../../services/common/storage/vectors/interface.ts';
import { createQdrantVectorStore } from '../../services/common/storage/vectors/qdrant.ts';
import { MAX_SEARCH_LIMIT, VectorInputError } from '../../services/common/storage/vectors/validate.ts';
import { seededRandom } from '../support/random.ts';

// Not a multiple of 8, so the embedded store's padded rows are exercised.
const DIMS = 20;

/** A store backend under test: `open` returns a new store over the same persistent data. */
interface Backend {
  open(): VectorStore;
  cleanup(): Promise<void>;
}

function randomVector(next: () => number, dims = DIMS): number[] {
  return Array.from({ length: dims }, () => next() * 2 - 1);
}

/** Cosine similarity in double precision: the reference the stores are checked against. */
function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

function bruteForce(points: VectorPoint[], query: number[], limit: number): { id: string; score: number }[] {
  return points
    .map((point) => ({ id: point.id, score: cosine(point.vector, query) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, limit);
}

/** A fresh organization name per test, so tests sharing a Qdrant collection never meet. */
function org(label: string): string {
  return `${label}-${randomUUID()}`;
}

function runContract(name: string, makeBackend: () => Promise<Backend>): void {
  describe(`vector store contract: ${name}`, () => {
    let backend: Backend;
    let store: VectorStore;

    beforeAll(async () => {
      backend = await makeBackend();
      store = backend.open();
    });

    afterAll(async () => {
      await store?.close();
      await backend?.cleanup();
    });

    it('reports its dimensions and answers ping', async () => {
      expect(store.dimensions).toBe(DIMS);
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('returns exact cosine scores in descending order, matching a brute-force reference', async () => {
      const organizationId = org('scores');
      const next = seededRandom(1);
      const points: VectorPoint[] = Array.from({ length: 300 }, (_, i) => ({
        id: `p${i}`,
        organizationId,
        // Mixed magnitudes: cosine must not depend on vector length.
        vector: randomVector(next).map((x) => x * (1 + (i % 7))),
        payload: { n: i },
      }));
      await store.upsert(points);
      for (let q = 0; q < 5; q++) {
        const query = randomVector(next);
        const expected = bruteForce(points, query, 10);
        const matches = await store.search(organizationId, query, { limit: 10 });
        expect(matches.map((m) => m.id)).toEqual(expected.map((e) => e.id));
        matches.forEach((match, i) => {
          expect(match.score).toBeCloseTo(expected[i]!.score, 5);
          if (i > 0) expect(match.score).toBeLessThanOrEqual(matches[i - 1]!.score);
        });
        expect(matches[0]!.payload).toEqual({ n: Number(matches[0]!.id.slice(1)) });
      }
    });

    it('scores a stored vector against itself as 1 and its opposite as -1', async () => {
      const organizationId = org('self');
      const vector = randomVector(seededRandom(2));
      await store.upsert([
        { id: 'same', organizationId, vector, payload: {} },
        { id: 'opposite', organizationId, vector: vector.map((x) => -x), payload: {} },
      ]);
      const matches = await store.search(organizationId, Float32Array.from(vector), { limit: 2 });
      expect(matches.map((m) => m.id)).toEqual(['same', 'opposite']);
      expect(matches[0]!.score).toBeCloseTo(1, 5);
      expect(matches[1]!.score).toBeCloseTo(-1, 5);
      for (const match of matches) {
        expect(match.score).toBeGreaterThanOrEqual(-1);
        expect(match.score).toBeLessThanOrEqual(1);
      }
    });

    it('replaces the vector and payload when an id is upserted again', async () => {
      const organizationId = org('replace');
      const next = seededRandom(3);
      const first = randomVector(next);
      const second = randomVector(next);
      await store.upsert([{ id: 'doc', organizationId, vector: first, payload: { version: 1, tag: 'old' } }]);
      // Searching first means the replacement also has to reach any in-memory index.
      expect((await store.search(organizationId, first, { limit: 1 }))[0]!.payload).toEqual({ version: 1, tag: 'old' });
      await store.upsert([{ id: 'doc', organizationId, vector: second, payload: { version: 2 } }]);
      expect(await store.count(organizationId)).toBe(1);
      const [match] = await store.search(organizationId, second, { limit: 5 });
      expect(match).toMatchObject({ id: 'doc', payload: { version: 2 } });
      expect(match!.score).toBeCloseTo(1, 5);
      expect(match!.payload).not.toHaveProperty('tag');
      expect(await store.count(organizationId, { tag: 'old' })).toBe(0);
    });

    it('keeps the last of duplicate ids within one batch', async () => {
      const organizationId = org('dupes');
      const next = seededRandom(4);
      await store.upsert([
        { id: 'x', organizationId, vector: randomVector(next), payload: { v: 'first' } },
        { id: 'x', organizationId, vector: randomVector(next), payload: { v: 'last' } },
      ]);
      expect(await store.count(organizationId)).toBe(1);
      const [match] = await store.search(organizationId, randomVector(next), { limit: 1 });
      expect(match!.payload).toEqual({ v: 'last' });
    });

    it('deletes points by id and ignores ids it does not hold', async () => {
      const organizationId = org('delete');
      const next = seededRandom(5);
      const points = Array.from({ length: 20 }, (_, i) => ({
        id: `d${i}`,
        organizationId,
        vector: randomVector(next),
        payload: { i },
      }));
      await store.upsert(points);
      expect(await store.search(organizationId, points[3]!.vector, { limit: 1 })).toHaveLength(1);
      await store.delete(organizationId, ['d3', 'd7', 'never-stored']);
      expect(await store.count(organizationId)).toBe(18);
      const remaining = points.filter((p) => p.id !== 'd3' && p.id !== 'd7');
      const query = points[3]!.vector;
      const matches = await store.search(organizationId, query, { limit: 20 });
      expect(matches.map((m) => m.id)).toEqual(bruteForce(remaining, query, 20).map((e) => e.id));
      await store.delete(organizationId, []);
      expect(await store.count(organizationId)).toBe(18);
    });

    it("deletes every point of one organization and leaves the others' points", async () => {
      const gone = org('gone');
      const kept = org('kept');
      const next = seededRandom(11);
      const points = (organizationId: string) =>
        Array.from({ length: 5 }, (_, i) => ({ id: `p${i}`, organizationId, vector: randomVector(next), payload: { i } }));
      await store.upsert([...points(gone), ...points(kept)]);
      expect(await store.search(gone, randomVector(next), { limit: 1 })).toHaveLength(1);
      await store.deleteOrganization(gone);
      expect(await store.count(gone)).toBe(0);
      expect(await store.search(gone, randomVector(next), { limit: 5 })).toEqual([]);
      expect(await store.retrieve(gone, ['p0'])).toEqual([]);
      expect(await store.count(kept)).toBe(5);
      await expect(store.deleteOrganization(gone)).resolves.toBeUndefined();
      await store.upsert(points(gone).slice(0, 1));
      expect(await store.count(gone)).toBe(1);
    });

    it('stays exact through growth and mass deletion', async () => {
      const organizationId = org('churn');
      const next = seededRandom(6);
      let points: VectorPoint[] = Array.from({ length: 700 }, (_, i) => ({
        id: `c${i}`,
        organizationId,
        vector: randomVector(next),
        payload: { i },
      }));
      // Load a small index first, then grow it several times over.
      await store.upsert(points.slice(0, 50));
      expect(await store.search(organizationId, randomVector(next), { limit: 1 })).toHaveLength(1);
      await store.upsert(points.slice(50));
      const doomed = points.filter((_, i) => i % 10 !== 0).map((p) => p.id);
      await store.delete(organizationId, doomed);
      points = points.filter((_, i) => i % 10 === 0);
      // Rewrite a few survivors so replaced rows and moved rows are both exercised.
      points = points.map((p, i) => (i % 3 === 0 ? { ...p, vector: randomVector(next), payload: { i: -i - 1, negativeZero: -0 } } : p));
      await store.upsert(points.filter((_, i) => i % 3 === 0));
      expect(await store.count(organizationId)).toBe(70);
      const query = randomVector(next);
      const matches = await store.search(organizationId, query, { limit: 70 });
      const expected = bruteForce(points, query, 70);
      expect(matches.map((m) => m.id)).toEqual(expected.map((e) => e.id));
      const byId = new Map(points.map((p) => [p.id, p.payload]));
      // -0 has no JSON form; stores answer 0 whether or not the point went through storage.
      for (const match of matches) {
        const { negativeZero, ...rest } = byId.get(match.id)!;
        expect(match.payload).toEqual(negativeZero === undefined ? rest : { ...rest, negativeZero: 0 });
        if (negativeZero !== undefined) expect(Object.is(match.payload.negativeZero, 0)).toBe(true);
      }
    });

    describe('filters', () => {
      const organizationId = org('filters');
      const next = seededRandom(7);
      const payloads: Record<string, Record<string, PayloadValue>> = {
        a: { kind: 'knowledge', priority: 1, pinned: true, tags: ['deploy', 'ops'], weight: 0.5 },
        b: { kind: 'knowledge', priority: 2, pinned: false, tags: ['deploy'], weight: 1.5 },
        c: { kind: 'episode', priority: 1, pinned: false, tags: ['ops', 'billing'] },
        d: { kind: 'episode', priority: '1', tags: [] },
        e: {},
      };
      const query = randomVector(next);

      beforeAll(async () => {
        await store.upsert(Object.entries(payloads).map(([id, payload]) => ({ id, organizationId, vector: randomVector(next), payload })));
      });

      async function ids(filter: Record<string, string | number | boolean | string[]>): Promise<string[]> {
        const matches = await store.search(organizationId, query, { limit: 10, filter });
        expect(await store.count(organizationId, filter)).toBe(matches.length);
        return matches.map((m) => m.id).sort();
      }

      it('match string, integer, fractional number and boolean fields by equality', async () => {
        expect(await ids({ kind: 'knowledge' })).toEqual(['a', 'b']);
        expect(await ids({ priority: 1 })).toEqual(['a', 'c']);
        expect(await ids({ weight: 1.5 })).toEqual(['b']);
        expect(await ids({ pinned: false })).toEqual(['b', 'c']);
        expect(await ids({ pinned: true, kind: 'knowledge' })).toEqual(['a']);
      });

      it('compare types strictly', async () => {
        expect(await ids({ priority: '1' })).toEqual(['d']);
        expect(await ids({ pinned: 'true' })).toEqual([]);
      });

      it('match an array condition only when the field holds every value', async () => {
        expect(await ids({ tags: ['deploy'] })).toEqual(['a', 'b']);
        expect(await ids({ tags: ['deploy', 'ops'] })).toEqual(['a']);
        expect(await ids({ tags: ['ops', 'billing', 'deploy'] })).toEqual([]);
      });

      it('match a scalar condition against an array field when the array holds it', async () => {
        expect(await ids({ tags: 'ops' })).toEqual(['a', 'c']);
      });

      it('never match a missing field, and an empty filter matches everything', async () => {
        expect(await ids({ missing: 'x' })).toEqual([]);
        expect(await ids({})).toEqual(['a', 'b', 'c', 'd', 'e']);
      });

      it('still rank by score within the filtered set', async () => {
        const matches = await store.search(organizationId, query, { limit: 1, filter: { kind: 'episode' } });
        const candidates = ['c', 'd'].map((id) => ({ id, score: 0 }));
        const all = await store.search(organizationId, query, { limit: 10 });
        for (const c of candidates) c.score = all.find((m) => m.id === c.id)!.score;
        candidates.sort((x, y) => y.score - x.score);
        expect(matches.map((m) => m.id)).toEqual([candidates[0]!.id]);
      });
    });

    it('returns at most `limit` matches and rejects limits outside 1..MAX_SEARCH_LIMIT', async () => {
      const organizationId = org('limit');
      const next = seededRandom(8);
      await store.upsert(Array.from({ length: 12 }, (_, i) => ({ id: `l${i}`, organizationId, vector: randomVector(next), payload: {} })));
      const query = randomVector(next);
      expect(await store.search(organizationId, query, { limit: 5 })).toHaveLength(5);
      expect(await store.search(organizationId, query, { limit: 50 })).toHaveLength(12);
      expect(await store.search(organizationId, query, { limit: 1 })).toHaveLength(1);
      for (const limit of [0, -1, 2.5, MAX_SEARCH_LIMIT + 1, Number.NaN]) {
        await expect(store.search(organizationId, query, { limit })).rejects.toThrow(VectorInputError);
      }
    });

    it('answers an organization with no points with no matches and a count of 0', async () => {
      const organizationId = org('empty');
      expect(await store.search(organizationId, randomVector(seededRandom(9)), { limit: 10 })).toEqual([]);
      expect(await store.count(organizationId)).toBe(0);
      expect(await store.count(organizationId, { kind: 'x' })).toBe(0);
      await expect(store.delete(organizationId, ['nothing'])).resolves.toBeUndefined();
    });

    it('isolates organizations, even when they use the same ids', async () => {
      const orgA = org('tenant-a');
      const orgB = org('tenant-b');
      const next = seededRandom(10);
      const shared = randomVector(next);
      await store.upsert([
        { id: 'same-id', organizationId: orgA, vector: shared, payload: { owner: 'a', secret: 'a-only' } },
        { id: 'a-private', organizationId: orgA, vector: randomVector(next), payload: { owner: 'a' } },
        { id: 'same-id', organizationId: orgB, vector: randomVector(next), payload: { owner: 'b' } },
      ]);
      // B searching with A's exact vector still sees only B's point.
      const bMatches = await store.search(orgB, shared, { limit: 10 });
      expect(bMatches.map((m) => [m.id, m.payload.owner])).toEqual([['same-id', 'b']]);
      expect(bMatches[0]!.score).toBeLessThan(0.99);
      expect(await store.search(orgB, shared, { limit: 10, filter: { secret: 'a-only' } })).toEqual([]);
      expect(await store.count(orgB)).toBe(1);
      expect(await store.count(orgB, { owner: 'a' })).toBe(0);
      expect(await store.count(orgA)).toBe(2);

      // Deleting in B leaves A's point with the same id alone.
      await store.delete(orgB, ['same-id', 'a-private']);
      expect(await store.count(orgB)).toBe(0);
      expect(await store.count(orgA)).toBe(2);
      const aMatches = await store.search(orgA, shared, { limit: 1 });
      expect(aMatches[0]).toMatchObject({ id: 'same-id', payload: { owner: 'a', secret: 'a-only' } });
      expect(aMatches[0]!.score).toBeCloseTo(1, 5);
    });

    it('returns payload copies that callers cannot use to change the store', async () => {
      const organizationId = org('copies');
      const vector = randomVector(seededRandom(11));
      await store.upsert([{ id: 'p', organizationId, vector, payload: { tags: ['one'] } }]);
      const [first] = await store.search(organizationId, vector, { limit: 1 });
      (first!.payload.tags as string[]).push('two');
      first!.payload.extra = 'x';
      const [second] = await store.search(organizationId, vector, { limit: 1 });
      expect(second!.payload).toEqual({ tags: ['one'] });
    });

    it('keeps points across close and reopen', async () => {
      const organizationId = org('persist');
      const next = seededRandom(12);
      const points = Array.from({ length: 30 }, (_, i) => ({
        id: `k${i}`,
        organizationId,
        vector: randomVector(next),
        payload: { i, tags: [`t${i % 3}`] },
      }));
      await store.upsert(points);
      await store.delete(organizationId, ['k0']);
      await store.close();
      store = backend.open();
      expect(await store.count(organizationId)).toBe(29);
      expect(await store.count(organizationId, { tags: ['t1'] })).toBe(10);
      const query = points[5]!.vector;
      const matches = await store.search(organizationId, query, { limit: 3 });
      expect(matches.map((m) => m.id)).toEqual(bruteForce(points.slice(1), query, 3).map((e) => e.id));
      expect(matches[0]!.payload).toEqual({ i: 5, tags: ['t2'] });
    });

    it('rejects vectors of the wrong dimensionality with a clear error and writes nothing', async () => {
      const organizationId = org('dims');
      const next = seededRandom(13);
      const good = { id: 'good', organizationId, vector: randomVector(next), payload: {} };
      const bad = { id: 'bad', organizationId, vector: randomVector(next, DIMS + 1), payload: {} };
      await expect(store.upsert([good, bad])).rejects.toThrow(
        new RegExp(`has ${DIMS + 1} dimensions; this store holds ${DIMS}-dimensional vectors`),
      );
      expect(await store.count(organizationId)).toBe(0);
      await expect(store.search(organizationId, randomVector(next, DIMS - 1), { limit: 1 })).rejects.toThrow(VectorInputError);
      await expect(store.search(organizationId, [], { limit: 1 })).rejects.toThrow(/0 dimensions/);
    });

    it('rejects non-finite and zero vectors with a clear error', async () => {
      const organizationId = org('finite');
      const next = seededRandom(14);
      for (const poison of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        const vector = randomVector(next);
        vector[3] = poison;
        await expect(store.upsert([{ id: 'x', organizationId, vector, payload: {} }])).rejects.toThrow(
          /non-finite value \(-?\w+\) at index 3/,
        );
        await expect(store.search(organizationId, vector, { limit: 1 })).rejects.toThrow(/non-finite value \(-?\w+\) at index 3/);
      }
      const zero = new Array(DIMS).fill(0);
      await expect(store.upsert([{ id: 'x', organizationId, vector: zero, payload: {} }])).rejects.toThrow(/zero vector/);
      await expect(store.search(organizationId, zero, { limit: 1 })).rejects.toThrow(VectorInputError);
      expect(await store.count(organizationId)).toBe(0);
    });

    it('retrieves the payloads of the ids an organization holds, and only its own', async () => {
      const organizationId = org('retrieve');
      const other = org('retrieve-other');
      const next = seededRandom(21);
      await store.upsert([
        { id: 'knowledge/a', organizationId, vector: randomVector(next), payload: { key: 'a', text: 'h1' } },
        { id: 'knowledge/b', organizationId, vector: randomVector(next), payload: { key: 'b' } },
        { id: 'knowledge/a', organizationId: other, vector: randomVector(next), payload: { key: 'theirs' } },
      ]);
      const found = await store.retrieve(organizationId, ['knowledge/a', 'knowledge/missing', 'knowledge/a']);
      expect(found).toEqual([{ organizationId, id: 'knowledge/a', payload: { key: 'a', text: 'h1' } }]);
      expect(await store.retrieve(organizationId, [])).toEqual([]);
      await expect(store.retrieve(organizationId, [''])).rejects.toThrow(VectorInputError);
      await expect(store.retrieve('', ['x'])).rejects.toThrow(VectorInputError);
    });

    it('scans every point of every organization a page at a time, each once', async () => {
      const first = org('scan-a');
      const second = org('scan-b');
      const next = seededRandom(22);
      const points = [first, second].flatMap((organizationId) =>
        Array.from({ length: 7 }, (_, i) => ({ id: `s${i}`, organizationId, vector: randomVector(next), payload: { i } })),
      );
      await store.upsert(points);
      // Other tests' points share the store: look for ours among everything scanned.
      const seen: string[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 10_000; pages++) {
        const page = await store.scan({ after, limit: 3 });
        expect(page.points.length).toBeLessThanOrEqual(3);
        seen.push(...page.points.map((p) => `${p.organizationId}|${p.id}|${JSON.stringify(p.payload)}`));
        if (!page.next) break;
        after = page.next;
      }
      expect(new Set(seen).size).toBe(seen.length);
      for (const p of points) expect(seen).toContain(`${p.organizationId}|${p.id}|${JSON.stringify(p.payload)}`);
      await expect(store.scan({ limit: 0 })).rejects.toThrow(VectorInputError);
      await expect(store.scan({ limit: 1, after: '' })).rejects.toThrow(VectorInputError);
    });

    it('rejects malformed points, ids, payloads and filters', async () => {
      const organizationId = org('malformed');
      const vector = randomVector(seededRandom(15));
      const attempts: unknown[] = [
        [{ id: '', organizationId, vector, payload: {} }],
        [{ id: 'x', organizationId: '', vector, payload: {} }],
        [{ id: 'x', organizationId, vector: 'not a vector', payload: {} }],
        [{ id: 'x', organizationId, vector: [...vector.slice(1), '1'], payload: {} }],
        [{ id: 'x', organizationId, vector, payload: { nested: { a: 1 } } }],
        [{ id: 'x', organizationId, vector, payload: { list: [1, 2] } }],
        [{ id: 'x', organizationId, vector, payload: { 'a.b': 'dots are key paths in Qdrant' } }],
        [{ id: 'x', organizationId, vector, payload: { n: Number.NaN } }],
        [{ id: 'x', organizationId, vector, payload: null }],
        [null],
        'not an array',
      ];
      for (const points of attempts) {
        await expect(store.upsert(points as VectorPoint[])).rejects.toThrow(VectorInputError);
      }
      expect(await store.count(organizationId)).toBe(0);
      await expect(store.search('', vector, { limit: 1 })).rejects.toThrow(/organizationId/);
      await expect(store.count('')).rejects.toThrow(VectorInputError);
      await expect(store.delete(organizationId, [''])).rejects.toThrow(VectorInputError);
      await expect(store.delete(organizationId, 'x' as unknown as string[])).rejects.toThrow(VectorInputError);
      const badFilters: unknown[] = [{ x: { y: 1 } }, { x: Number.POSITIVE_INFINITY }, { x: [1] }, { 'a[0]': 'x' }, 'x'];
      for (const filter of badFilters) {
        await expect(store.search(organizationId, vector, { limit: 1, filter: filter as Record<string, string> })).rejects.toThrow(
          VectorInputError,
        );
        await expect(store.count(organizationId, filter as Record<string, string>)).rejects.toThrow(VectorInputError);
      }
      await expect(store.search(organizationId, vector, undefined as never)).rejects.toThrow(VectorInputError);
    });
  });
}

runContract('embedded', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mindgate-vectors-'));
  return {
    open: () => createEmbeddedVectorStore({ path: join(dir, 'vectors.sqlite'), dimensions: DIMS }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

const qdrantUrl = readUrl(process.env, 'QDRANT_URL');
if (qdrantUrl) {
  runContract('qdrant', async () => {
    const apiKey = readString(process.env, 'QDRANT_API_KEY');
    const collectionPrefix = `mindgate_test_${randomUUID().slice(0, 8)}`;
    return {
      open: () => createQdrantVectorStore({ url: qdrantUrl, apiKey, collectionPrefix, dimensions: DIMS }),
      async cleanup() {
        const client = new QdrantClient({ url: qdrantUrl, apiKey, checkCompatibility: false });
        await client.deleteCollection(`${collectionPrefix}_${DIMS}`);
      },
    };
  });
} else {
  console.warn('Qdrant contract tests skipped: set QDRANT_URL to run them');
  describe.skip('vector store contract: qdrant (QDRANT_URL not set)', () => {
    it('needs a Qdrant server', () => {});
  });
}
