// Path and impact queries on a large graph, through the entity-graph service's own routes (an
// in-memory Connect transport and its generated client, as the edge calls it in one process), on
// the embedded records store (SQLite in a temporary folder).
//
// Run: ./node_modules/.bin/node test/bench/entity-graph.bench.ts
// Env: ENTITIES (100000), EDGES (500000), QUERIES (300); GRAPH_BENCH_DIR keeps the seeded store in
// that folder and reuses it on the next run (seeding takes minutes; a store seeded by another
// checkout of the code compares two versions on the same data); ROWS runs only the rows whose name
// contains it (e.g. ROWS=affected). Each row draws its queries from its own seed, so a row asks the
// same questions whichever rows run. VERIFY=1 also hashes every answer of the path and affected
// rows (one at a time) and prints the digest: two versions of the code that answer the same print
// the same digest on the same store. The hashing is timed with the queries, so compare figures
// only between runs without it. Beside the latencies, each row prints the process's CPU time per
// query (every thread: the garbage collector's too), which the other work of a shared machine
// inflates much less than the wall-clock figures; after the table (unless ROWS names other rows),
// the CPU of an impact query split into the handler, the encoding and the decoding of its answer.
//
// The graph is written straight into the store in the shape the service writes (entities, names,
// relationships with one citation each, the write sequence), since 500,000 SyncMemory calls would
// take most of an hour; the service learns of it the way a replica does, through the sequence, and
// the first query ("cold") includes building the in-memory graph. Edges: 10 predicates of the
// vocabulary in proportions an ops graph might have; endpoints drawn with a skew (a few hubs
// that many things depend on, like a shared database or cluster) and some locality (neighbouring
// ids, like the services of one team).
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  Direction,
  FindPathsResponseSchema,
  GetAffectedEntitiesRequestSchema,
  GetAffectedEntitiesResponseSchema,
} from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { createLogger } from '../../services/common/log.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { createGraphContext, type GraphContext } from '../../services/entity-graph/context.ts';
import { getAffectedEntities } from '../../services/entity-graph/handlers/walks.ts';
import { CitationOrigin } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { relationshipIdOf, type EntityRecord, type RelationshipRecord } from '../../services/entity-graph/records.ts';
import { type GraphClient, graphClient } from '../contract/entity-graph.contract.ts';
import { measure } from './support.ts';

const ENTITIES = Number(process.env.ENTITIES ?? 100_000);
const EDGES = Number(process.env.EDGES ?? 500_000);
const QUERIES = Number(process.env.QUERIES ?? 300);
const VERIFY = process.env.VERIFY === '1';
const ORG = 'org_bench';

let seed = 42;
/** mulberry32: a small seeded generator, so every run draws the same graph and queries. */
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
}
const PREDICATES: [string, number][] = [
  ['depends_on', 0.3],
  ['calls', 0.25],
  ['runs_on', 0.1],
  ['owned_by', 0.1],
  ['part_of', 0.08],
  ['stores_data_in', 0.07],
  ['deployed_to', 0.05],
  ['member_of', 0.03],
  ['alerts_to', 0.01],
  ['replaced_by', 0.01],
];
function predicate(): string {
  let r = random();
  for (const [p, w] of PREDICATES) if ((r -= w) <= 0) return p;
  return 'depends_on';
}
/** Mostly near `from` (a team's services), sometimes a hub (the low ids), sometimes anywhere. */
function target(from: number): number {
  const r = random();
  if (r < 0.5) return (from + 1 + Math.floor(random() * 50)) % ENTITIES;
  if (r < 0.7) return Math.floor(random() ** 3 * ENTITIES);
  return Math.floor(random() * ENTITIES);
}
const id = (i: number) => `svc-${i}`;

const PROSE =
  'plan a maintenance window for the rollout and tell whoever owns it what depends on which database after the upgrade of our cluster in the morning'.split(
    ' ',
  );
/** Prose of about `chars` characters; `naming` is the share of its words that name an entity ("Service 123"). */
function prose(chars: number, naming: number): string {
  const words: string[] = [];
  for (let length = 0; length < chars; ) {
    const word = random() < naming ? `Service ${Math.floor(random() * ENTITIES)}` : PROSE[Math.floor(random() * PROSE.length)];
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ').slice(0, chars);
}

async function seedGraph(dir: string): Promise<void> {
  const store = createSqliteRecordStore({ path: path.join(dir, 'records.sqlite'), sweepIntervalMs: 0 });
  const ctx = createGraphContext(store, createLogger({ level: 'silent' }));
  let seq = 0;
  const now = Date.now();
  const started = performance.now();
  for (let i = 0; i < ENTITIES; i++) {
    const entity: EntityRecord = {
      _id: `${ORG}/${id(i)}`,
      organizationId: ORG,
      entityId: id(i),
      name: `Service ${i}`,
      kind: 'service',
      aliases: [],
      description: '',
      names: [`service ${i}`],
      createdAt: now + i,
      updatedAt: now + i,
      version: 1,
      rev: 1,
      seq: ++seq,
    };
    await ctx.entities.put(entity);
    await ctx.names.put({ _id: `${ORG}/service ${i}`, organizationId: ORG, entityId: id(i) });
  }
  const seen = new Set<string>();
  while (seen.size < EDGES) {
    const s = Math.floor(random() * ENTITIES);
    const o = target(s);
    const p = predicate();
    if (s === o) continue;
    const relationshipId = relationshipIdOf(id(s), p, id(o));
    if (seen.has(relationshipId)) continue;
    seen.add(relationshipId);
    const citation = {
      namespace: 'knowledge',
      key: `notes/${seen.size}`,
      version: 1,
      origin: CitationOrigin.EXTRACTED,
      title: `Note ${seen.size}`,
      assertedAt: now,
    };
    const record: RelationshipRecord = {
      _id: `${ORG}/${relationshipId}`,
      organizationId: ORG,
      relationshipId,
      subjectId: id(s),
      predicate: p,
      objectId: id(o),
      citations: [citation],
      createdAt: now + seen.size,
      updatedAt: now + seen.size,
      rev: 1,
      seq: ++seq,
    };
    await ctx.relationships.put(record);
  }
  await store.collection('graph_sequences').put({ _id: ORG, seq });
  console.log(`seeded ${ENTITIES} entities and ${EDGES} relationships in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  await store.close();
}

interface BenchRow {
  name: string;
  concurrency: number;
  task: () => Promise<unknown>;
}

/** The rows of the table; walk answers feed the digest (single-flight rows only, in order). */
function benchRows(
  graph: GraphClient,
  stats: { found: number; steps: number; affected: number; impactQueries: number },
  digest: Hash,
): BenchRow[] {
  const pick = () => id(Math.floor(random() * ENTITIES));
  const affectedRow = async (req: { direction?: Direction; maxDepth?: number; limit?: number }) => {
    const res = await graph.getAffectedEntities({ organizationId: ORG, entity: pick(), ...req });
    if (VERIFY) digest.update(toBinary(GetAffectedEntitiesResponseSchema, res));
    return res;
  };
  return [
    { name: 'get entity (50 neighbours each way)', concurrency: 1, task: () => graph.getEntity({ organizationId: ORG, entityId: pick() }) },
    {
      name: 'search entities (fuzzy, limit 10)',
      concurrency: 1,
      task: () => graph.searchEntities({ organizationId: ORG, query: `servce ${Math.floor(random() * ENTITIES)}` }),
    },
    {
      name: 'mentioned entities (300-character task naming 2, limit 5)',
      concurrency: 1,
      task: () => graph.findMentionedEntities({ organizationId: ORG, text: prose(300, 0.04) }),
    },
    {
      // The worst case: no run of up to 8 words is a name, so every one is looked up.
      name: 'mentioned entities (10,000-character text naming none)',
      concurrency: 1,
      task: () => graph.findMentionedEntities({ organizationId: ORG, text: prose(10_000, 0), limit: 20 }),
    },
    {
      name: 'paths, max_depth 4, up to 3 paths',
      concurrency: 1,
      task: async () => {
        const res = await graph.findPaths({ organizationId: ORG, from: pick(), to: pick(), maxDepth: 4, maxPaths: 3 });
        if (VERIFY) digest.update(toBinary(FindPathsResponseSchema, res));
        if (res.paths.length > 0) stats.found++;
        stats.steps += res.paths.reduce((n, p) => n + p.steps.length, 0);
      },
    },
    {
      name: 'paths, dependency predicates, forward',
      concurrency: 1,
      task: () =>
        graph.findPaths({
          organizationId: ORG,
          from: pick(),
          to: pick(),
          maxDepth: 6,
          maxPaths: 1,
          predicates: ['depends_on', 'calls', 'runs_on'],
          direction: Direction.FORWARD,
        }),
    },
    {
      name: 'affected (impact), depth 5, limit 100',
      concurrency: 1,
      task: async () => {
        const res = await affectedRow({});
        stats.affected += res.affected.length;
        stats.impactQueries++;
      },
    },
    {
      name: 'affected (dependencies), depth 10, limit 500',
      concurrency: 1,
      task: () => affectedRow({ direction: Direction.DEPENDENCIES, maxDepth: 10, limit: 500 }),
    },
    {
      name: 'affected (impact), 8 in flight',
      concurrency: 8,
      task: () => graph.getAffectedEntities({ organizationId: ORG, entity: pick() }),
    },
  ];
}

const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/**
 * Where an impact query's CPU goes: the handler alone (called as the routes call it), then the
 * encoding of its answer (the server's side of the wire) and its decoding (the client's).
 */
async function cpuSplit(ctx: GraphContext): Promise<void> {
  console.log('\n| Impact query, CPU ms per query | handler | encode answer | decode answer | answer KiB |');
  console.log('|---|---|---|---|---|');
  const shapes = [
    ['impact, depth 5, limit 100', {}],
    ['dependencies, depth 10, limit 500', { direction: Direction.DEPENDENCIES, maxDepth: 10, limit: 500 }],
  ] as const;
  for (const [index, [name, shape]] of shapes.entries()) {
    seed = 2000 + index;
    const sum = { handler: 0, encode: 0, decode: 0, bytes: 0 };
    for (let i = 0; i < QUERIES; i++) {
      const req = create(GetAffectedEntitiesRequestSchema, { organizationId: ORG, entity: id(Math.floor(random() * ENTITIES)), ...shape });
      const t0 = cpuMs();
      const res = await getAffectedEntities(ctx, req);
      const t1 = cpuMs();
      const bytes = toBinary(GetAffectedEntitiesResponseSchema, res);
      const t2 = cpuMs();
      fromBinary(GetAffectedEntitiesResponseSchema, bytes);
      const t3 = cpuMs();
      sum.handler += t1 - t0;
      sum.encode += t2 - t1;
      sum.decode += t3 - t2;
      sum.bytes += bytes.length;
    }
    const per = (x: number) => fmt(x / QUERIES);
    console.log(`| ${name} | ${per(sum.handler)} | ${per(sum.encode)} | ${per(sum.decode)} | ${(sum.bytes / QUERIES / 1024).toFixed(0)} |`);
  }
}

const fmt = (ms: number) => ms.toFixed(ms < 10 ? 2 : 1);

async function main(): Promise<void> {
  const kept = process.env.GRAPH_BENCH_DIR;
  const dir = kept ? path.resolve(kept) : fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-graph-bench-'));
  fs.mkdirSync(dir, { recursive: true });
  try {
    if (kept && fs.existsSync(path.join(dir, 'seeded'))) console.log(`reusing the graph seeded in ${dir}`);
    else {
      await seedGraph(dir);
      if (kept) fs.writeFileSync(path.join(dir, 'seeded'), `${ENTITIES} ${EDGES}\n`);
    }
    const store = createSqliteRecordStore({ path: path.join(dir, 'records.sqlite'), sweepIntervalMs: 0 });
    const ctx = createGraphContext(store, createLogger({ level: 'silent' }));
    const graph = graphClient(ctx);
    const t0 = performance.now();
    await graph.getEntity({ organizationId: ORG, entityId: id(0), neighbourLimit: 1 });
    console.log(
      `cold: first query built the in-memory graph in ${fmt(performance.now() - t0)} ms; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
    );
    const stats = { found: 0, steps: 0, affected: 0, impactQueries: 0 };
    const digest = createHash('sha256');
    const results: [string, Awaited<ReturnType<typeof measure>> & { cpuMs: number }][] = [];
    for (const [index, row] of benchRows(graph, stats, digest).entries()) {
      if (process.env.ROWS && !row.name.includes(process.env.ROWS)) continue;
      seed = 1000 + index;
      const cpu = process.cpuUsage();
      const measured = await measure(QUERIES, row.concurrency, row.task);
      const used = process.cpuUsage(cpu);
      results.push([row.name, { ...measured, cpuMs: (used.user + used.system) / 1000 / QUERIES }]);
    }
    console.log(`\n${ENTITIES} entities, ${EDGES} relationships, ${QUERIES} queries per row (embedded SQLite store)`);
    console.log('| Query | p50 ms | p95 ms | p99 ms | per s | CPU ms per query |');
    console.log('|---|---|---|---|---|---|');
    for (const [name, r] of results)
      console.log(`| ${name} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${fmt(r.p99)} | ${r.perSecond.toFixed(0)} | ${fmt(r.cpuMs)} |`);
    console.log(
      `\npaths found for ${stats.found}/${QUERIES} random pairs (${(stats.steps / Math.max(1, stats.found)).toFixed(1)} steps over their paths); impact walks reached ${(stats.affected / Math.max(1, stats.impactQueries)).toFixed(1)} entities on average; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
    );
    // The same data and code answer the same: compare this line between two versions of the code.
    if (VERIFY) console.log(`answers digest (paths and affected rows, sha256): ${digest.digest('hex').slice(0, 16)}`);
    if (!process.env.ROWS || 'affected'.includes(process.env.ROWS)) await cpuSplit(ctx);
    await store.close();
  } finally {
    if (!kept) fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
