// Behaviour particular to each vector store adapter and to the factory that picks one; the
// shared behaviour is in vectors.test.ts.

import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStorageConfig } from '../../services/common/config.ts';
import { StoreUnavailableError } from '../../services/common/storage/unavailable.ts';
import { createEmbeddedVectorStore } from '../../services/common/storage/vectors/embedded.ts';
import { createVectorStore } from '../../services/common/storage/vectors/index.ts';
import { createQdrantVectorStore, pointUuid, qdrantFilter } from '../../services/common/storage/vectors/qdrant.ts';
import { seededRandom } from '../support/random.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mindgate-vectors-adapters-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('embedded vector store', () => {
  it('keeps each dimensionality apart in one file, so a new model starts an empty index', async () => {
    const path = join(dir, 'dims', 'vectors.sqlite');
    const small = createEmbeddedVectorStore({ path, dimensions: 3 });
    await small.upsert([{ id: 'a', organizationId: 'o', vector: [1, 0, 0], payload: {} }]);
    await small.close();

    const large = createEmbeddedVectorStore({ path, dimensions: 4 });
    expect(await large.count('o')).toBe(0);
    expect(await large.search('o', [1, 0, 0, 0], { limit: 5 })).toEqual([]);
    await large.close();

    const again = createEmbeddedVectorStore({ path, dimensions: 3 });
    expect((await again.search('o', [2, 0, 0], { limit: 5 })).map((m) => m.id)).toEqual(['a']);
    await again.close();
  });

  it('rejects every call after close', async () => {
    const store = createEmbeddedVectorStore({ path: join(dir, 'closed.sqlite'), dimensions: 2 });
    await store.close();
    await expect(store.ping()).rejects.toThrow(/closed/);
    await expect(store.search('o', [1, 0], { limit: 1 })).rejects.toThrow(/closed/);
    await expect(store.upsert([])).rejects.toThrow(/closed/);
    await expect(store.close()).resolves.toBeUndefined();
  });

  it('refuses impossible dimensions', () => {
    for (const dimensions of [0, -3, 1.5, 70_000]) {
      expect(() => createEmbeddedVectorStore({ path: ':memory:', dimensions })).toThrow(/dimensions/);
    }
  });

  it('serves organizations loaded at different times from separate indexes', async () => {
    const store = createEmbeddedVectorStore({ path: ':memory:', dimensions: 2 });
    await store.upsert([{ id: 'x', organizationId: 'a', vector: [1, 0], payload: { o: 'a' } }]);
    // Loads organization a; b is written afterwards and must not land in a's index.
    expect(await store.search('a', [1, 0], { limit: 5 })).toHaveLength(1);
    await store.upsert([{ id: 'y', organizationId: 'b', vector: [1, 0], payload: { o: 'b' } }]);
    expect((await store.search('a', [1, 0], { limit: 5 })).map((m) => m.payload.o)).toEqual(['a']);
    expect((await store.search('b', [1, 0], { limit: 5 })).map((m) => m.payload.o)).toEqual(['b']);
    await store.close();
  });
});

describe('embedded vector store: one process per file', () => {
  // Another process's view of the file: a child that opens the store and prints the outcome.
  function openInChild(path: string): { status: number | null; out: string } {
    const script = `
      import { createEmbeddedVectorStore } from './services/common/storage/vectors/embedded.ts';
      try {
        const store = createEmbeddedVectorStore({ path: ${JSON.stringify(path)}, dimensions: 2 });
        await store.upsert([{ id: 'child', organizationId: 'o', vector: [0, 1], payload: {} }]);
        await store.close();
        console.log('opened');
      } catch (error) {
        console.log(error.message);
        process.exitCode = 3;
      }`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '../..'),
      encoding: 'utf8',
    });
    return { status: child.status, out: child.stdout.trim() };
  }

  it('refuses a second process with one line naming the holder PID, and lets it in once released', async () => {
    const path = join(dir, 'locked', 'vectors.sqlite');
    const store = createEmbeddedVectorStore({ path, dimensions: 2 });
    const refused = openInChild(path);
    expect(refused.status).toBe(3);
    expect(refused.out).toContain(`in use by process ${process.pid}`);
    expect(refused.out).toContain(`${path}.lock`);
    expect(refused.out.split('\n')).toHaveLength(1);
    // The same process may open the file again (one set of stores per platform in tests).
    const again = createEmbeddedVectorStore({ path, dimensions: 2 });
    await again.close();
    expect(existsSync(`${path}.lock`)).toBe(true);
    await store.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
    expect(openInChild(path)).toEqual({ status: 0, out: 'opened' });
  });

  it('takes over a lock left by a process that died', async () => {
    const path = join(dir, 'stale', 'vectors.sqlite');
    const first = createEmbeddedVectorStore({ path, dimensions: 2 });
    await first.close();
    // A PID that no longer runs: the child's own, after it exited.
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    writeFileSync(`${path}.lock`, dead.stdout);
    const store = createEmbeddedVectorStore({ path, dimensions: 2 });
    expect((await store.search('o', [0, 1], { limit: 1 })).map((m) => m.id)).toEqual([]);
    await store.close();
  });
});

describe('createVectorStore', () => {
  it('uses the embedded store in the data directory when QDRANT_URL is not set', async () => {
    const dataDir = join(dir, 'data');
    const config = readStorageConfig({ DATA_DIR: dataDir }, 2);
    const store = createVectorStore(config, 8);
    expect(store.kind).toBe('embedded');
    expect(store.dimensions).toBe(8);
    await store.ping();
    expect(existsSync(join(dataDir, 'vectors.sqlite'))).toBe(true);
    await store.close();
  });

  it('uses Qdrant when QDRANT_URL is set', async () => {
    const config = readStorageConfig({ DATA_DIR: join(dir, 'unused'), QDRANT_URL: 'http://127.0.0.1:9' }, 2);
    const store = createVectorStore(config, 8);
    expect(store.kind).toBe('qdrant');
    expect(store.dimensions).toBe(8);
    expect(existsSync(join(dir, 'unused'))).toBe(false);
    await store.close();
  });
});

describe('Qdrant adapter', () => {
  it('derives stable, version-5 point ids that differ between organizations', () => {
    const id = pointUuid('org-a', 'knowledge/deploy');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pointUuid('org-a', 'knowledge/deploy')).toBe(id);
    expect(pointUuid('org-b', 'knowledge/deploy')).not.toBe(id);
    expect(pointUuid('org-a', 'knowledge/other')).not.toBe(id);
    // Without the length prefix these two pairs would hash the same name.
    expect(pointUuid('a/b', 'c')).not.toBe(pointUuid('a', 'b/c'));
  });

  it('always confines a filter to the organization and maps payload conditions to `must`', () => {
    expect(qdrantFilter('org-a')).toEqual({ must: [{ key: 'organization_id', match: { value: 'org-a' } }] });
    expect(qdrantFilter('org-a', { kind: 'knowledge', priority: 2, weight: 0.5, pinned: true, tags: ['x', 'y'] })).toEqual({
      must: [
        { key: 'organization_id', match: { value: 'org-a' } },
        { key: 'payload.kind', match: { value: 'knowledge' } },
        { key: 'payload.priority', match: { value: 2 } },
        { key: 'payload.weight', range: { gte: 0.5, lte: 0.5 } },
        { key: 'payload.pinned', match: { value: true } },
        { key: 'payload.tags', match: { value: 'x' } },
        { key: 'payload.tags', match: { value: 'y' } },
      ],
    });
  });

  it('checks input before contacting the server', async () => {
    const store = createQdrantVectorStore({ url: 'http://127.0.0.1:9', collectionPrefix: 'p', dimensions: 3 });
    await expect(store.search('o', [1, 2], { limit: 1 })).rejects.toThrow(/has 2 dimensions/);
    await expect(store.upsert([{ id: 'x', organizationId: 'o', vector: [1, Number.NaN, 0], payload: {} }])).rejects.toThrow(/non-finite/);
    expect(() => createQdrantVectorStore({ url: 'http://127.0.0.1:9', collectionPrefix: 'bad prefix', dimensions: 3 })).toThrow(/prefix/);
  });

  it('reports an unreachable server clearly', async () => {
    // A port that was just listening and is now closed refuses connections.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const store = createQdrantVectorStore({ url: `http://127.0.0.1:${port}`, collectionPrefix: 'p', dimensions: 3 });
    // Unreachable is retryable (StoreUnavailableError): the services answer UNAVAILABLE, a start waits for it.
    const err = await store.ping().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toMatch(
      /^the vectors store is unavailable: Qdrant at http:\/\/127\.0\.0\.1:\d+ \(collection check on collection "p_3"\): .*ECONNREFUSED/,
    );
    await store.close();
    await expect(store.ping()).rejects.toThrow(/closed/);
  });
});

describe('embedded vector store: approximate search of large organizations', () => {
  const DIMS = 64;
  /** Points around 60 centres, as sentence embeddings cluster by topic. */
  function clustered(count: number, seed: number): Float32Array[] {
    const next = seededRandom(seed);
    const centres = Array.from({ length: 60 }, () => Float32Array.from({ length: DIMS }, () => next() * 2 - 1));
    return Array.from({ length: count }, (_, i) => Float32Array.from(centres[i % 60]!, (x) => x + (next() - 0.5) * 0.8));
  }
  /** Searches until the background build has finished (the exact scan answers meanwhile). */
  async function settle(store: ReturnType<typeof createEmbeddedVectorStore>, query: Float32Array): Promise<void> {
    for (let i = 0; i < 200; i++) {
      await store.search('big', query, { limit: 1 });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('finds nearly every exact top-10 neighbour, with exact scores, through writes and deletions', async () => {
    const exact = createEmbeddedVectorStore({ path: ':memory:', dimensions: DIMS, approximateFrom: Number.POSITIVE_INFINITY });
    const approximate = createEmbeddedVectorStore({ path: ':memory:', dimensions: DIMS, approximateFrom: 1_000 });
    const vectors = clustered(6_000, 11);
    const points = vectors.map((vector, i) => ({
      id: `p${i}`,
      organizationId: 'big',
      vector,
      payload: { tag: i % 10 === 0 ? 'rare' : 'common' },
    }));
    for (const store of [exact, approximate]) await store.upsert(points);
    await settle(approximate, vectors[0]!);
    // Writes after the build reach the approximate index too.
    const moved = clustered(200, 12).map((vector, i) => ({ ...points[i * 7]!, vector }));
    const gone = points.slice(3_000, 3_300).map((p) => p.id);
    for (const store of [exact, approximate]) {
      await store.upsert(moved);
      await store.delete('big', gone);
    }
    const queries = clustered(100, 13);
    let found = 0;
    for (const query of queries) {
      const want = await exact.search('big', query, { limit: 10 });
      const got = await approximate.search('big', query, { limit: 10 });
      const scores = new Map(want.map((m) => [m.id, m.score]));
      for (const m of got) {
        expect(gone).not.toContain(m.id);
        if (scores.has(m.id)) {
          found += 1;
          // Candidates are scored by the scan's own kernel: the same score to the bit.
          expect(m.score).toBe(scores.get(m.id));
        }
      }
      // A selective filter (most candidates fail it) falls back to the exact scan.
      const rare = await approximate.search('big', query, { limit: 10, filter: { tag: 'rare' } });
      expect(rare.map((m) => m.id)).toEqual((await exact.search('big', query, { limit: 10, filter: { tag: 'rare' } })).map((m) => m.id));
    }
    expect(found / (queries.length * 10)).toBeGreaterThanOrEqual(0.95);
    await exact.close();
    await approximate.close();
  }, 60_000);
});
