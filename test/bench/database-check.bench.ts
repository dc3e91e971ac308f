// What the start-time check of the embedded SQLite files (PRAGMA quick_check, database-file.ts)
// costs: files of memory-like records and of 512-dimensional vectors at several sizes.
// Run: ./node_modules/.bin/node test/bench/database-check.bench.ts [sizes...]   (default: 10000 100000)

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDatabaseFile } from '../../services/common/storage/database-file.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { createEmbeddedVectorStore } from '../../services/common/storage/vectors/embedded.ts';
import { printTable, syntheticMemory } from './support.ts';

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
const DIMS = 512;
const BATCH = 1000;

async function fill(dir: string, count: number): Promise<{ records: string; vectors: string }> {
  const records = join(dir, 'records.sqlite');
  const vectors = join(dir, 'vectors.sqlite');
  const store = createSqliteRecordStore({ path: records });
  const memories = store.collection('memories', { indexes: [{ fields: ['organizationId', 'namespace', 'key'], unique: true }] });
  const vectorStore = createEmbeddedVectorStore({ path: vectors, dimensions: DIMS });
  for (let start = 0; start < count; start += BATCH) {
    const points = [];
    for (let i = start; i < Math.min(count, start + BATCH); i++) {
      const memory = syntheticMemory(i);
      await memories.put({ _id: `org/${memory.key}`, organizationId: 'org', namespace: 'knowledge', ...memory });
      const vector = new Float32Array(DIMS);
      for (let d = 0; d < DIMS; d++) vector[d] = Math.sin(i * 31 + d);
      points.push({ id: memory.key, organizationId: 'org', vector, payload: {} });
    }
    await vectorStore.upsert(points);
  }
  await vectorStore.close();
  await store.close();
  return { records, vectors };
}

function timed(file: string): Record<string, string | number> {
  const started = performance.now();
  checkDatabaseFile(file);
  const ms = performance.now() - started;
  return { file: file.split('/').pop()!, MB: Math.round(statSync(file).size / 1024 / 1024), 'quick_check ms': Math.round(ms) };
}

const rows: Record<string, string | number>[] = [];
for (const size of sizes.length > 0 ? sizes : [10_000, 100_000]) {
  const dir = mkdtempSync(join(tmpdir(), 'mindgate-check-bench-'));
  try {
    const files = await fill(dir, size);
    rows.push({ memories: size, ...timed(files.records) }, { memories: size, ...timed(files.vectors) });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
printTable('PRAGMA quick_check at start (files in the OS page cache, as after they were written)', rows);
