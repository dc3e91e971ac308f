// Seeds an organization's knowledge namespace straight into the records and vector stores, in
// the exact shape PutMemory writes, so that benchmarks reach 100,000 or 1,000,000 memories
// without hours of embedding: texts of the labeled set with variations, vectors of their
// embeddings with a little noise. The brain's lexical index learns of them through the write
// sequence, as it would from another replica.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrainContext } from '../../services/brain/context.ts';
import { memoryId, memoryPointId, memoryText, type MemoryRecord } from '../../services/brain/memory-record.ts';
import { contentHash } from '../../services/brain/text.ts';
import type { VectorPoint } from '../../services/common/storage/vectors/interface.ts';

interface FixtureMemory {
  title: string;
  content: string;
  tags: string[];
  entities: string[];
}

export const qualityFixture = JSON.parse(
  fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/brain-quality.json'), 'utf8'),
) as { memories: FixtureMemory[]; queries: { query: string; namespace: string; relevant: string[] }[] };

/** Memory i of a seeded population: the labeled set's memories, varied after the first round. */
export function variant(i: number) {
  const base = qualityFixture.memories[i % qualityFixture.memories.length]!;
  const round = Math.floor(i / qualityFixture.memories.length);
  return { ...base, key: `bench/${i}`, content: round ? `${base.content} (revision ${round}, note ${i})` : base.content };
}

export class Seeder {
  private baseVectors: Float32Array[] = [];
  private readonly ctx: BrainContext;
  private readonly organizationId: string;

  constructor(ctx: BrainContext, organizationId: string) {
    this.ctx = ctx;
    this.organizationId = organizationId;
  }

  /** Embeds the labeled set's memories once: every seeded vector is one of them plus noise. */
  async prepare(like?: Seeder): Promise<void> {
    // Another organization's seeder has them already.
    if (like) {
      this.baseVectors = like.baseVectors;
      return;
    }
    const texts = qualityFixture.memories.map((m) => memoryText(m));
    this.baseVectors = [];
    for (let i = 0; i < texts.length; i += 64) this.baseVectors.push(...(await this.ctx.stores.embedder.embed(texts.slice(i, i + 64))));
  }

  /** The vector of memory i: the same for the same i, whatever was generated before. */
  vector(i: number): Float32Array {
    const base = this.baseVectors[i % this.baseVectors.length]!;
    const v = new Float32Array(base.length);
    let rng = (i * 2654435761 + 7) % 2147483648;
    let norm = 0;
    for (let d = 0; d < v.length; d++) {
      rng = (rng * 1103515245 + 12345) % 2147483648;
      v[d] = base[d]! + (rng / 2147483648 - 0.5) * 0.02;
      norm += v[d]! * v[d]!;
    }
    for (let d = 0; d < v.length; d++) v[d]! /= Math.sqrt(norm);
    return v;
  }

  /**
   * Seeds memories [from, total) of the knowledge namespace, 500 per vector upsert, into the
   * stores of `ctx` (by default those it embedded the labeled set with).
   */
  async seed(from: number, total: number, onProgress?: (done: number) => void, ctx = this.ctx): Promise<void> {
    const org = this.organizationId;
    for (let start = from; start < total; start += 500) {
      const end = Math.min(total, start + 500);
      const last = await ctx.indexes.nextSeq(org, 'knowledge', end - start);
      const points: VectorPoint[] = [];
      for (let i = start; i < end; i++) {
        const m = variant(i);
        const now = Date.now();
        const source = { clientId: 'bench-seed', userId: '', clientName: '' };
        const record: MemoryRecord = {
          _id: memoryId(org, 'knowledge', m.key),
          organizationId: org,
          namespace: 'knowledge',
          key: m.key,
          title: m.title,
          content: m.content,
          tags: m.tags,
          entities: m.entities,
          source,
          createdBy: source,
          createdAt: now,
          updatedAt: now,
          eventAt: now,
          version: 1,
          rev: 1,
          seq: last - (end - 1 - i),
          contentHash: contentHash(`${m.title}\n${m.content}`),
          stats: { worked: 0, failed: 0 },
        };
        await ctx.memories.put(record);
        points.push({
          id: memoryPointId('knowledge', m.key),
          organizationId: org,
          vector: this.vector(i),
          payload: { namespace: 'knowledge', key: m.key, tags: m.tags, updatedAt: now },
        });
      }
      await ctx.stores.vectors.upsert(points);
      onProgress?.(end);
      // Let the event loop run its I/O phase: the embedded stores resolve synchronously, and
      // idle keep-alive sockets closed meanwhile must be noticed before they are reused.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
}
