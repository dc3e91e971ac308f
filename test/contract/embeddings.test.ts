// The embeddings port with the offline default, USE-lite, running for real in worker threads.
// The OpenAI-compatible embedder has its own suite in embeddings-openai.test.ts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStorageConfig } from '../../services/common/config.ts';
import { createEmbedder } from '../../services/common/embeddings/index.ts';
import type { Embedder } from '../../services/common/embeddings/interface.ts';
import { createUseLiteEmbedder, MAX_INPUT_CHARS, prepareText, USE_LITE_DIMENSIONS } from '../../services/common/embeddings/use-lite.ts';

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function norm(a: Float32Array): number {
  return Math.sqrt(dot(a, a));
}

function expectSameVector(a: Float32Array, b: Float32Array): void {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  expect(worst).toBeLessThan(1e-6);
}

describe('USE-lite embedder', () => {
  let embedder: Embedder;

  beforeAll(async () => {
    // Two workers, so that concurrent calls are spread over more than one thread. The worker
    // replaces fetch() with a function that throws, so a successful start also shows that the
    // model loaded without the network.
    embedder = await createUseLiteEmbedder({ threads: 2 });
  });

  afterAll(async () => {
    await embedder?.close();
  });

  it('describes itself', () => {
    expect(embedder.kind).toBe('use-lite');
    expect(embedder.model).toBe('use-lite-512');
    expect(embedder.dimensions).toBe(USE_LITE_DIMENSIONS);
  });

  it('places related sentences closer than unrelated ones', async () => {
    const [query, related, unrelated] = await embedder.embed([
      'how do I deploy the service',
      'deployment steps for the service',
      'chocolate cake recipe',
    ]);
    expect(dot(query!, related!)).toBeGreaterThan(dot(query!, unrelated!) + 0.2);
  });

  it('returns one L2-normalised 512-dimensional Float32Array per input, in order', async () => {
    const texts = ['alpha', 'the billing service charges per seat', 'β-release notes 🚀', 'x'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const vector of vectors) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector.length).toBe(512);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
    const singles = await Promise.all(texts.map(async (text) => (await embedder.embed([text]))[0]!));
    for (const [i, vector] of vectors.entries()) expectSameVector(vector, singles[i]!);
  });

  it('is deterministic across calls, batch positions and workers', async () => {
    const text = 'the on-call rotation changes every Monday';
    const filler = Array.from({ length: 9 }, (_, i) => `filler sentence number ${i}`);
    const runs = await Promise.all([
      embedder.embed([text]),
      embedder.embed([...filler, text]),
      embedder.embed([...filler.slice(0, 3), text, ...filler.slice(3)]),
    ]);
    expectSameVector(runs[0]![0]!, runs[1]![9]!);
    expectSameVector(runs[0]![0]!, runs[2]![3]!);
  });

  it('answers concurrent calls correctly, each in its own input order', async () => {
    const calls = Array.from({ length: 6 }, (_, c) =>
      Array.from({ length: 7 }, (_, i) => `call ${c} text ${i}: ${['deploy', 'billing', 'alerts', 'memory'][(c + i) % 4]}`),
    );
    const concurrent = await Promise.all(calls.map((texts) => embedder.embed(texts)));
    const reference = await embedder.embed(calls.flat());
    for (const [i, vector] of concurrent.flat().entries()) expectSameVector(vector, reference[i]!);
  });

  it('batches concurrent one-text calls together and gives each its own vector', async () => {
    // Twenty one-text calls at once, as concurrent writes make them: the pool sends them to the
    // workers several to a message, and each vector must come back to its own caller.
    const texts = Array.from(
      { length: 20 },
      (_, i) => `memory ${i}: the ${['deploy', 'billing', 'alerts', 'search', 'backup'][i % 5]} runbook changed on day ${i}`,
    );
    const together = await Promise.all(texts.map(async (text) => (await embedder.embed([text]))[0]!));
    for (let i = 0; i < texts.length; i += 5) {
      const [alone] = await embedder.embed([texts[i]!]);
      expectSameVector(together[i]!, alone!);
    }
  });

  it('lets a short call finish before a long one submitted earlier', async () => {
    const order: string[] = [];
    const bulk = embedder.embed(Array.from({ length: 120 }, (_, i) => `bulk import line ${i}`)).then(() => order.push('bulk'));
    const query = embedder.embed(['a single query']).then(() => order.push('query'));
    await Promise.all([bulk, query]);
    expect(order).toEqual(['query', 'bulk']);
  });

  it('keeps the main event loop free while the model runs', async () => {
    let ticks = 0;
    let running = true;
    const tick = (): void => {
      ticks++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    await embedder.embed(Array.from({ length: 40 }, (_, i) => `event loop check ${i}`));
    running = false;
    // Forty model runs take hundreds of milliseconds of CPU; a free loop turns thousands of
    // times meanwhile, a blocked one a handful.
    expect(ticks).toBeGreaterThan(100);
  });

  it('returns an empty list for an empty list', async () => {
    expect(await embedder.embed([])).toEqual([]);
  });

  it('embeds empty and blank texts as one valid vector', async () => {
    const [empty, blank, newline] = await embedder.embed(['', '   ', '\n\t']);
    expect(norm(empty!)).toBeCloseTo(1, 5);
    expectSameVector(empty!, blank!);
    expectSameVector(empty!, newline!);
  });

  it('embeds a very long text as its first MAX_INPUT_CHARS characters', async () => {
    const sentence = 'The staging cluster is rebuilt from the infrastructure repository every night. ';
    const long = sentence.repeat(2000);
    expect(long.length).toBeGreaterThan(100_000);
    const [whole, prefix] = await embedder.embed([long, prepareText(long)]);
    expectSameVector(whole!, prefix!);
    expect(norm(whole!)).toBeCloseTo(1, 5);
  });

  it('rejects inputs that are not strings', async () => {
    await expect(embedder.embed('text' as unknown as string[])).rejects.toThrow(TypeError);
    await expect(embedder.embed(['ok', 3 as unknown as string])).rejects.toThrow(/texts\[1\]/);
  });
});

describe('prepareText', () => {
  it('leaves ordinary text alone and turns blank text into one space', () => {
    expect(prepareText('hello world')).toBe('hello world');
    expect(prepareText('')).toBe(' ');
    expect(prepareText(' \n ')).toBe(' ');
  });

  it('cuts long text at the last whitespace near the limit', () => {
    const words = 'abcdefghi '.repeat(500);
    const cut = prepareText(words);
    expect(cut.length).toBeLessThanOrEqual(MAX_INPUT_CHARS);
    expect(cut.length).toBeGreaterThanOrEqual(MAX_INPUT_CHARS * 0.9);
    expect(cut.endsWith('abcdefghi')).toBe(true);
  });

  it('cuts text without whitespace at the limit, never inside a surrogate pair', () => {
    expect(prepareText('x'.repeat(5000))).toHaveLength(MAX_INPUT_CHARS);
    const emoji = `${'x'.repeat(MAX_INPUT_CHARS - 1)}😀tail`;
    const cut = prepareText(emoji);
    expect(cut).toBe('x'.repeat(MAX_INPUT_CHARS - 1));
  });
});

describe('USE-lite lifecycle', () => {
  it('rejects calls in flight and later calls once closed', async () => {
    const embedder = await createUseLiteEmbedder({ threads: 1 });
    const inFlight = embedder.embed(Array.from({ length: 60 }, (_, i) => `closing soon ${i}`)).then(
      () => 'resolved',
      (error: Error) => error.message,
    );
    await embedder.close();
    expect(await inFlight).toMatch(/closed/);
    await expect(embedder.embed(['after'])).rejects.toThrow(/closed/);
    await expect(embedder.close()).resolves.toBeUndefined();
  });

  it('refuses impossible pool settings', async () => {
    await expect(createUseLiteEmbedder({ threads: 0 })).rejects.toThrow(/threads/);
    await expect(createUseLiteEmbedder({ threads: 1, batchSize: 0 })).rejects.toThrow(/batchSize/);
  });

  it('is what createEmbedder builds from the default configuration', async () => {
    const config = readStorageConfig({ EMBEDDINGS_THREADS: '1' }, 2);
    const embedder = await createEmbedder(config.embeddings);
    try {
      expect(embedder.kind).toBe('use-lite');
      expect(embedder.dimensions).toBe(512);
      const [vector] = await embedder.embed(['configured']);
      expect(norm(vector!)).toBeCloseTo(1, 5);
    } finally {
      await embedder.close();
    }
  });
});
