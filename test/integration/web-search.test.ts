// Blog search with the real offline embedding model and the real embedded records store: the
// ranking holds to the figures measured on the labeled queries, the fusion is no worse than
// words alone, off-topic queries return nothing, vectors are cached across starts, and search
// keeps answering by words when the embedding model is unavailable.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedder, createOpenAiEmbedder } from '../../services/common/embeddings/index.ts';
import { type Embedder, EmbedderClosedError } from '../../services/common/embeddings/interface.ts';
import { createLogger } from '../../services/common/log.ts';
import { createSqliteRecordStore, type SqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { loadContent } from '../../edge/web/content.ts';
import { createBm25Index, stem, tokenize } from '../../edge/web/bm25.ts';
import { createSearchIndex, DEFAULT_FUSION, type BlogSearchIndex, type Fusion, type VectorCacheDoc } from '../../edge/web/search.ts';
import { LABELED_QUERIES, OFF_TOPIC_QUERIES } from '../support/web-search-labels.ts';

const content = loadContent(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../content'));
let dir: string;
let store: SqliteRecordStore;
let embedder: Embedder;
let index: BlogSearchIndex;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-web-search-'));
  store = createSqliteRecordStore({ path: path.join(dir, 'records.sqlite'), sweepIntervalMs: 0 });
  embedder = await createEmbedder({ provider: 'use-lite', threads: 1, model: 'use-lite-512' });
  index = await createSearchIndex(content.posts, { embedder, cache: store.collection<VectorCacheDoc>('web_search_vectors') });
});

afterAll(async () => {
  await embedder?.close();
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function measure(fusion: Fusion): Promise<{ top1: number; mrr: number }> {
  let top1 = 0;
  let mrr = 0;
  for (const { query, expected } of LABELED_QUERIES) {
    const { hits } = await index.search(query, { limit: 10, fusion });
    const rank = hits.findIndex((h) => h.post.slug === expected) + 1;
    if (rank === 1) top1++;
    if (rank > 0) mrr += 1 / rank;
  }
  return { top1: top1 / LABELED_QUERIES.length, mrr: mrr / LABELED_QUERIES.length };
}

describe('blog search ranking', () => {
  it('runs in hybrid mode over the head and sections of every post', () => {
    expect(index.mode).toBe('hybrid');
    const sections = content.posts.reduce((n, p) => n + Math.min(6, p.sections.length), 0);
    expect(index.chunkCount).toBe(content.posts.length + sections);
  });

  it('puts the right post first for most labeled queries (measured: 34 of 38)', async () => {
    const { top1, mrr } = await measure(DEFAULT_FUSION);
    expect(top1).toBeGreaterThanOrEqual(0.85);
    expect(mrr).toBeGreaterThanOrEqual(0.9);
  });

  it('ranks no worse than words alone, and much better than meaning alone', async () => {
    const fused = await measure(DEFAULT_FUSION);
    const lexical = await measure({ ...DEFAULT_FUSION, lexicalWeight: 1 });
    const semantic = await measure({ ...DEFAULT_FUSION, lexicalWeight: 0 });
    expect(fused.mrr).toBeGreaterThanOrEqual(lexical.mrr);
    expect(fused.mrr).toBeGreaterThan(semantic.mrr + 0.1);
  });

  it('returns nothing for queries the blog does not cover', async () => {
    for (const query of OFF_TOPIC_QUERIES.filter((q) => !q.includes('score'))) {
      expect((await index.search(query, { limit: 10 })).hits, query).toEqual([]);
    }
  });

  it('limits, filters by category and points at the matching section', async () => {
    const { hits, total } = await index.search('oauth pkce state', { limit: 2 });
    expect(hits.length).toBeLessThanOrEqual(2);
    expect(total).toBeGreaterThanOrEqual(hits.length);
    expect(hits[0].post.slug).toBe('stateless-oauth-facade');
    expect(hits[0].section?.anchor).toBeTruthy();
    const product = await index.search('oauth', { limit: 10, category: 'Product' });
    expect(product.hits.every((h) => h.post.category === 'Product')).toBe(true);
  });
});

describe('embedding cache and fallback', () => {
  it('reuses cached vectors on the next start, without the model', async () => {
    const closed = await createEmbedder({ provider: 'use-lite', threads: 1, model: 'use-lite-512' });
    await closed.close();
    // A closed embedder cannot embed: only a complete cache gives a hybrid index.
    const again = await createSearchIndex(content.posts, {
      embedder: closed,
      cache: store.collection<VectorCacheDoc>('web_search_vectors'),
    });
    expect(again.mode).toBe('hybrid');
    expect(again.chunkCount).toBe(index.chunkCount);
    // Queries cannot be embedded with a closed model: they are answered by words.
    const { mode, hits } = await again.search('helm chart', { limit: 1 });
    expect(mode).toBe('lexical');
    expect(hits[0].post.slug).toBe('operating-mindgate');
  });

  it('builds no index, and warns of no failure, when the platform stops before the blog is embedded', async () => {
    const closing = await createEmbedder({ provider: 'use-lite', threads: 1, model: 'use-lite-512' });
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    // Its refusal is awaited from the start: it may come before close() returns.
    const refused = expect(createSearchIndex(content.posts, { embedder: closing, logger })).rejects.toBeInstanceOf(EmbedderClosedError);
    await closing.close();
    await refused;
    expect(lines).toEqual([]);
  });

  it('answers by words alone when the embedding service is unreachable', async () => {
    // Nothing listens on port 9 of this machine; with known dimensions there is no start-up probe.
    const unreachable = await createOpenAiEmbedder({
      url: 'http://127.0.0.1:9/v1',
      model: 'text-embedding-3-small',
      dimensions: 512,
      maxRetries: 0,
    });
    try {
      const lexical = await createSearchIndex(content.posts, { embedder: unreachable });
      expect(lexical.mode).toBe('lexical');
      const { mode, hits } = await lexical.search('gateway key', { limit: 3 });
      expect(mode).toBe('lexical');
      expect(hits[0].post.slug).toBe('mcp-gateway');
      expect(hits[0].semantic).toBe(0);
    } finally {
      await unreachable.close();
    }
  });
});

describe('BM25', () => {
  it('stems lightly and drops stop words', () => {
    expect(tokenize("The gateway's rate limits are applied")).toEqual(['gateway', 'rate', 'limit', 'appli']);
    expect(stem('policies')).toBe('policy');
    expect(stem('class')).toBe('class');
    expect(stem('status')).toBe('status');
  });

  it('weights fields and rewards rarer terms', () => {
    const bm25 = createBm25Index([
      [
        { text: 'gateway', weight: 3 },
        { text: 'common words here', weight: 1 },
      ],
      [
        { text: 'other', weight: 3 },
        { text: 'gateway common words', weight: 1 },
      ],
      [
        { text: 'third', weight: 3 },
        { text: 'common', weight: 1 },
      ],
    ]);
    const scores = bm25.score('gateway');
    expect(scores.get(0)!).toBeGreaterThan(scores.get(1)!);
    expect(scores.has(2)).toBe(false);
    expect(bm25.idf('gateway')).toBeGreaterThan(bm25.idf('common'));
  });
});
