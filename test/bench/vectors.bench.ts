// Embedded vector store figures: upsert throughput, load time, search latency and memory at
// 10,000 and 100,000 vectors of 512 dimensions in one organization.
// Run: ./node_modules/.bin/node test/bench/vectors.bench.ts [sizes...]   (default: 10000 100000)

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedVectorStore } from '../../services/common/storage/vectors/embedded.ts';
import type { VectorPoint } from '../../services/common/storage/vectors/interface.ts';

const DIMS = 512;
const BATCH = 1000;
const QUERIES = 200;
const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);

let seed = 42;
function next(): number {
  // xorshift32: fast and reproducible.
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296 - 0.5;
}

function vector(): Float32Array {
  const v = new Float32Array(DIMS);
  for (let i = 0; i < DIMS; i++) v[i] = next();
  return v;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function bench(size: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mindgate-vectors-bench-'));
  const path = join(dir, 'vectors.sqlite');
  try {
    let store = createEmbeddedVectorStore({ path, dimensions: DIMS });
    const organizationId = 'bench-org';
    const kinds = ['knowledge', 'episode', 'decision', 'question'];

    const upsertStart = performance.now();
    for (let start = 0; start < size; start += BATCH) {
      const points: VectorPoint[] = [];
      for (let i = start; i < Math.min(size, start + BATCH); i++) {
        points.push({
          id: `memory/${i}`,
          organizationId,
          vector: vector(),
          payload: { kind: kinds[i % 4]!, tags: [`team-${i % 10}`, 'bench'], created: i },
        });
      }
      await store.upsert(points);
    }
    const upsertMs = performance.now() - upsertStart;
    // A second organization, so the figures include the cost of others sharing the file.
    await store.upsert([{ id: 'x', organizationId: 'other-org', vector: vector(), payload: {} }]);
    await store.close();

    store = createEmbeddedVectorStore({ path, dimensions: DIMS });
    const rssBefore = process.memoryUsage().rss;
    const loadStart = performance.now();
    await store.search(organizationId, vector(), { limit: 10 });
    const loadMs = performance.now() - loadStart;

    async function latencies(filter?: Record<string, string | string[]>): Promise<number[]> {
      for (let i = 0; i < 10; i++) await store.search(organizationId, vector(), { limit: 10, filter });
      const times: number[] = [];
      for (let i = 0; i < QUERIES; i++) {
        const query = vector();
        const t = performance.now();
        await store.search(organizationId, query, { limit: 10, filter });
        times.push(performance.now() - t);
      }
      return times.sort((a, b) => a - b);
    }
    const plain = await latencies();
    const filtered = await latencies({ kind: 'decision', tags: ['team-3'] });
    const rss = process.memoryUsage().rss;

    console.log(`\n${size.toLocaleString('en')} vectors x ${DIMS} dims, one organization`);
    console.log(
      `  upsert:             ${(size / (upsertMs / 1000)).toFixed(0)} points/s (batches of ${BATCH}, ${(upsertMs / 1000).toFixed(1)} s)`,
    );
    console.log(`  SQLite file:        ${mb(statSync(path).size)}`);
    console.log(`  load on first use:  ${loadMs.toFixed(0)} ms`);
    console.log(
      `  search top 10:      p50 ${percentile(plain, 50).toFixed(2)} ms, p99 ${percentile(plain, 99).toFixed(2)} ms (${QUERIES} queries)`,
    );
    console.log(
      `  search, filtered:   p50 ${percentile(filtered, 50).toFixed(2)} ms, p99 ${percentile(filtered, 99).toFixed(2)} ms (kind + tag, 1 in 20 match)`,
    );
    console.log(`  resident memory:    ${mb(rss)} (the loaded index added about ${mb(rss - rssBefore)})`);
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const size of sizes.length > 0 ? sizes : [10_000, 100_000]) await bench(size);
