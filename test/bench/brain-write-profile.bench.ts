// Where the time of one write goes: short notes (~90 characters) written into an organization that
// already holds POPULATION memories (seeded as in brain-seed.ts), each stage of PutMemory timed
// alone on the same texts: embedding (a worker thread), the duplicate and contradiction check
// (BM25 and vector candidates, record reads, the detector), the record write, the vector write,
// the lexical index update; then whole writes through the brain's RPC (PutMemory) one at a time,
// 16 in flight, and 25 per PutMemories call.
// Run: ./node_modules/.bin/node test/bench/brain-write-profile.bench.ts   (POPULATION=10000 WRITES=300)
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { createBrainContext } from '../../services/brain/context.ts';
import { checkAgainstOthers } from '../../services/brain/handlers/write-checks.ts';
import { memoryId, memoryPoint, memoryText, type MemoryRecord } from '../../services/brain/memory-record.ts';
import { contentHash } from '../../services/brain/text.ts';
import { createLogger } from '../../services/common/log.ts';
import { startTestPlatform } from '../support/platform.ts';
import { Seeder } from './brain-seed.ts';
import { measure, printTable, syntheticMemory } from './support.ts';

const POPULATION = Number(process.env.POPULATION ?? 10_000);
const WRITES = Number(process.env.WRITES ?? 300);
const ORG = 'org-write-profile';

const platform = await startTestPlatform({ EMBEDDINGS_THREADS: process.env.EMBEDDINGS_THREADS ?? '2', LOG_LEVEL: 'warn' });
const ctx = createBrainContext(platform.ctx.stores, createLogger({ level: 'silent' }));
const seeder = new Seeder(ctx, ORG);
await seeder.prepare();
await seeder.seed(0, POPULATION);
const index = await ctx.indexes.fresh(ORG, 'knowledge');
await ctx.stores.vectors.count(ORG);

const note = (i: number, round: string) => {
  const m = syntheticMemory(100_000 + i);
  return {
    key: `${round}/${i}`,
    title: '',
    content: m.content.replace(/^Note \d+: /, `(${round} ${i}) `),
    tags: m.tags,
    entities: [] as string[],
  };
};
const notes = Array.from({ length: WRITES }, (_, i) => note(i, 'stage'));
const vectors: Float32Array[] = [];
const records: MemoryRecord[] = [];
const stage = (name: string, s: Awaited<ReturnType<typeof measure>>) => ({
  stage: name,
  'p50 ms': s.p50,
  'p95 ms': s.p95,
  'per s': s.perSecond,
});
const rows = [];
rows.push(
  stage(
    'embedding (one text)',
    await measure(WRITES, 1, async (i) => void (vectors[i] = (await ctx.stores.embedder.embed([memoryText(notes[i]!)]))[0]!)),
  ),
);
rows.push(
  stage(
    'duplicate + contradiction check',
    await measure(WRITES, 1, async (i) => {
      const n = notes[i]!;
      const hash = contentHash(`\n${n.content}`);
      await checkAgainstOthers(ctx, {
        organizationId: ORG,
        namespace: 'knowledge',
        ...n,
        hash,
        vector: vectors[i]!,
        exclude: new Set([n.key]),
      });
    }),
  ),
);
rows.push(
  stage(
    'record write (sequence + put)',
    await measure(WRITES, 1, async (i) => {
      const n = notes[i]!;
      const now = Date.now();
      const source = { clientId: 'bench', userId: '', clientName: '' };
      const seq = await ctx.indexes.nextSeq(ORG, 'knowledge');
      records[i] = {
        _id: memoryId(ORG, 'knowledge', n.key),
        organizationId: ORG,
        namespace: 'knowledge',
        ...n,
        source,
        createdBy: source,
        createdAt: now,
        updatedAt: now,
        eventAt: now,
        version: 1,
        rev: 1,
        seq,
        contentHash: contentHash(`\n${n.content}`),
        stats: { worked: 0, failed: 0 },
      };
      await ctx.memories.put(records[i]!, { expect: null });
    }),
  ),
);
rows.push(stage('vector write', await measure(WRITES, 1, (i) => ctx.stores.vectors.upsert([memoryPoint(records[i]!, vectors[i]!)]))));
rows.push(stage('lexical index update', await measure(WRITES, 1, async (i) => ctx.indexes.applyLocal(ORG, 'knowledge', records[i]!))));

const brain = platform.ctx.clients.brain;
const write = (n: ReturnType<typeof note>) => ({ organizationId: ORG, namespace: Namespace.KNOWLEDGE, ...n, allowDuplicate: true });
const one = Array.from({ length: WRITES }, (_, i) => note(i, 'one'));
rows.push(stage('PutMemory, one at a time', await measure(WRITES, 1, (i) => brain.putMemory(write(one[i]!)))));
const sixteen = Array.from({ length: WRITES }, (_, i) => note(i, 'sixteen'));
rows.push(stage('PutMemory, 16 in flight', await measure(WRITES, 16, (i) => brain.putMemory(write(sixteen[i]!)))));
const batched = Array.from({ length: WRITES }, (_, i) => note(i, 'batch'));
const batches = await measure(Math.ceil(WRITES / 25), 2, (b) =>
  brain.putMemories({ organizationId: ORG, memories: batched.slice(b * 25, b * 25 + 25).map(write) }),
);
rows.push({ ...stage('PutMemories x25, 2 calls in flight (per call)', batches), 'per s': batches.perSecond * 25 });
printTable(`One write of a short note into ${index.size} memories of one organization (${WRITES} writes per row)`, rows);
await platform.stop();
