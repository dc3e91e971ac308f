// Remembered query embeddings (services/brain/search/query-embeddings.ts), over the real offline
// embedder: a query asked again, or asked by several searches at once, runs the model once and
// gets the very vector the model gives; the oldest queries are forgotten past the capacity.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryEmbeddings } from '../../services/brain/search/query-embeddings.ts';
import { createUseLiteEmbedder, type Embedder } from '../../services/common/embeddings/index.ts';

let embedder: Embedder;
let runs: string[] = [];
/** The real embedder, noting which texts reach it. */
let noting: Embedder;

beforeAll(async () => {
  embedder = await createUseLiteEmbedder({ threads: 1 });
  noting = {
    kind: embedder.kind,
    model: embedder.model,
    dimensions: embedder.dimensions,
    embed: (texts) => {
      runs.push(...texts);
      return embedder.embed(texts);
    },
    close: () => embedder.close(),
  };
}, 60_000);

afterAll(async () => {
  await embedder?.close();
});

describe('remembered query embeddings', () => {
  it('runs the model once per query text and returns its exact vector', async () => {
    runs = [];
    const queries = new QueryEmbeddings(noting, 3);
    const [a, b, c] = await Promise.all([queries.embed('who owns billing'), queries.embed('who owns billing'), queries.embed('db outage')]);
    expect(runs).toEqual(['who owns billing', 'db outage']);
    expect(b).toBe(a);
    expect([...a!]).toEqual([...(await embedder.embed(['who owns billing']))[0]!]);
    expect(await queries.embed('db outage')).toBe(c);
    expect(runs).toHaveLength(2);
  });

  it('forgets the least recently asked query past its capacity', async () => {
    runs = [];
    const queries = new QueryEmbeddings(noting, 2);
    await queries.embed('one');
    await queries.embed('two');
    await queries.embed('one');
    await queries.embed('three');
    await queries.embed('one');
    await queries.embed('two');
    expect(runs).toEqual(['one', 'two', 'three', 'two']);
  });
});
