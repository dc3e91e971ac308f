// USE-lite figures: start-up, throughput with 1 and 2 worker threads and several batch sizes
// (one call of many texts, and 16 concurrent one-text calls as concurrent writes make them, for
// short notes and for memories of the labeled set's size), single-query latency, and the main
// thread's event-loop delay while the pool is busy.
// Run: ./node_modules/.bin/node test/bench/embeddings.bench.ts [texts]   (default: 600)

import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { memoryText } from '../../services/brain/memory-record.ts';
import type { Embedder } from '../../services/common/embeddings/interface.ts';
import { createUseLiteEmbedder } from '../../services/common/embeddings/use-lite.ts';

const COUNT = Number(process.argv[2] ?? 600);
const subjects = ['the deploy pipeline', 'the billing service', 'on-call rotation', 'the staging cluster', 'customer onboarding'];
const verbs = ['failed because', 'was changed so that', 'needs review since', 'now documents how'];
const objects = ['the config map lost a key', 'invoices are sent weekly', 'alerts page the right team', 'tokens expire after an hour'];
// Memory-note-like texts of 8 to 25 words, all different.
const texts = Array.from(
  { length: COUNT },
  (_, i) =>
    `Note ${i}: ${subjects[i % 5]} ${verbs[i % 4]} ${objects[(i >> 2) % 4]}${i % 3 === 0 ? `, as discussed in incident ${i * 7} with the platform team last week` : ''}.`,
);

// Memories of the labeled set (title, content, entities, tags: ~190 characters), as PutMemory embeds them.
const memories = (
  JSON.parse(fs.readFileSync(new URL('../fixtures/brain-quality.json', import.meta.url), 'utf8')) as {
    memories: { title: string; content: string; tags: string[]; entities: string[] }[];
  }
).memories
  .slice(0, COUNT)
  .map(memoryText);
const average = (list: string[]) => Math.round(list.reduce((n, t) => n + t.length, 0) / list.length);

/** Texts per second with 16 one-text calls in flight, and the process CPU per text. */
async function concurrentSingles(pool: Embedder, list: string[]): Promise<string> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < list.length) await pool.embed([list[next++]!]);
    }),
  );
  const seconds = (performance.now() - t) / 1000;
  const used = process.cpuUsage(cpu);
  return `${(list.length / seconds).toFixed(0)} texts/s, ${((used.user + used.system) / 1000 / list.length).toFixed(1)} ms CPU per text`;
}

// The histogram's samples include its own timer interval; subtract it to show the lag alone.
const RESOLUTION_MS = 2;
const ms = (ns: number): string => `${Math.max(0, ns / 1e6 - RESOLUTION_MS).toFixed(1)} ms`;

{
  const idle = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  idle.enable();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  idle.disable();
  console.log(`event-loop delay with nothing running: p50 ${ms(idle.percentile(50))}, p99 ${ms(idle.percentile(99))}, max ${ms(idle.max)}`);
}

for (const threads of [1, 2]) {
  const startT = performance.now();
  const embedder = await createUseLiteEmbedder({ threads, batchSize: 4 });
  console.log(
    `\n${threads} thread${threads > 1 ? 's' : ''}: start-up (model loaded in every worker) ${(performance.now() - startT).toFixed(0)} ms`,
  );
  await embedder.embed(texts.slice(0, 16)); // warm up every worker

  for (const batchSize of [1, 2, 4, 8]) {
    const pool = await createUseLiteEmbedder({ threads, batchSize });
    await pool.embed(texts.slice(0, 16));
    const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    delay.enable();
    const t = performance.now();
    await pool.embed(texts);
    const seconds = (performance.now() - t) / 1000;
    delay.disable();
    console.log(
      `  batch ${batchSize}: ${(COUNT / seconds).toFixed(0)} texts/s over ${COUNT} texts; ` +
        `event-loop delay p50 ${ms(delay.percentile(50))}, p99 ${ms(delay.percentile(99))}, max ${ms(delay.max)}`,
    );
    console.log(
      `    16 one-text calls in flight: short notes (~${average(texts)} chars) ${await concurrentSingles(pool, texts)}; ` +
        `memories (~${average(memories)} chars) ${await concurrentSingles(pool, memories)}`,
    );
    await pool.close();
  }

  const latencies: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t = performance.now();
    await embedder.embed([`what changed in ${subjects[i % 5]} last week? (${i})`]);
    latencies.push(performance.now() - t);
  }
  latencies.sort((a, b) => a - b);
  console.log(`  one query on an idle pool: p50 ${latencies[25]!.toFixed(1)} ms, p99 ${latencies[49]!.toFixed(1)} ms`);

  // A query arriving while a bulk import keeps every worker busy.
  const bulk = embedder.embed(texts);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const t = performance.now();
  await embedder.embed(['an urgent query during a bulk import']);
  console.log(`  one query during a ${COUNT}-text bulk import: ${(performance.now() - t).toFixed(1)} ms`);
  await bulk;
  await embedder.close();
}
console.log(`\nresident memory at the end: ${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MB`);
