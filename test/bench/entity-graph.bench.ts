// Path and impact queries on a large graph, through the entity-graph service's own routes (an
// in-memory Connect transport and its generated client, as the edge calls it in one process), on
// the embedded records store (SQLite in a temporary folder).
//
// Run: ./node_modules/.bin/node test/bench/entity-graph.bench.ts
// Env: ENTITIES (100000), EDGES (500000), QUERIES (300).
//
// The graph is written straight into the store in the shape the service writes (entities, names,
// relationships with one citation each, the write sequence), since 500,000 SyncMemory calls would
// take most of an hour; the service learns of it the way a replica does, through the sequence, and
// the first query ("cold") includes building the in-memory graph. Edges: 10 predicates of the
// vocabulary in proportions an ops graph might have; endpoints drawn with a skew (a few hubs
// that many things depend on, like a shared database or cluster) and some locality (neighbouring
// ids, like the services of one team).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Direction } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { createLogger } from '../../services/common/log.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { createGraphContext } from '../../services/entity-graph/context.ts';
import { CitationOrigin } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { relationshipIdOf, type EntityRecord, type RelationshipRecord } from '../../services/entity-graph/records.ts';
import { graphClient } from '../contract/entity-graph.contract.ts';
import { measure } from './support.ts';

const ENTITIES = Number(process.env.ENTITIES ?? 100_000);
const EDGES = Number(process.env.EDGES ?? 500_000);
const QUERIES = Number(process.env.QUERIES ?? 300);
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

const fmt = (ms: number) => ms.toFixed(ms < 10 ? 2 : 1);

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-graph-bench-'));
  try {
    await seedGraph(dir);
    const store = createSqliteRecordStore({ path: path.join(dir, 'records.sqlite'), sweepIntervalMs: 0 });
    const graph = graphClient(createGraphContext(store, createLogger({ level: 'silent' })));
    const t0 = performance.now();
    await graph.getEntity({ organizationId: ORG, entityId: id(0), neighbourLimit: 1 });
    console.log(
      `cold: first query built the in-memory graph in ${fmt(performance.now() - t0)} ms; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
    );
    const pick = () => id(Math.floor(random() * ENTITIES));
    let found = 0;
    let steps = 0;
    let affectedTotal = 0;
    const rows: [string, Awaited<ReturnType<typeof measure>>][] = [];
    rows.push([
      'get entity (50 neighbours each way)',
      await measure(QUERIES, 1, () => graph.getEntity({ organizationId: ORG, entityId: pick() })),
    ]);
    rows.push([
      'search entities (fuzzy, limit 10)',
      await measure(QUERIES, 1, () => graph.searchEntities({ organizationId: ORG, query: `servce ${Math.floor(random() * ENTITIES)}` })),
    ]);
    rows.push([
      'paths, max_depth 4, up to 3 paths',
      await measure(QUERIES, 1, async () => {
        const res = await graph.findPaths({ organizationId: ORG, from: pick(), to: pick(), maxDepth: 4, maxPaths: 3 });
        if (res.paths.length > 0) found++;
        steps += res.paths.reduce((n, p) => n + p.steps.length, 0);
      }),
    ]);
    rows.push([
      'paths, dependency predicates, forward',
      await measure(QUERIES, 1, () =>
        graph.findPaths({
          organizationId: ORG,
          from: pick(),
          to: pick(),
          maxDepth: 6,
          maxPaths: 1,
          predicates: ['depends_on', 'calls', 'runs_on'],
          direction: Direction.FORWARD,
        }),
      ),
    ]);
    rows.push([
      'affected (impact), depth 5, limit 100',
      await measure(QUERIES, 1, async () => {
        const res = await graph.getAffectedEntities({ organizationId: ORG, entity: pick() });
        affectedTotal += res.affected.length;
      }),
    ]);
    rows.push([
      'affected (dependencies), depth 10, limit 500',
      await measure(QUERIES, 1, () =>
        graph.getAffectedEntities({ organizationId: ORG, entity: pick(), direction: Direction.DEPENDENCIES, maxDepth: 10, limit: 500 }),
      ),
    ]);
    rows.push([
      'affected (impact), 8 in flight',
      await measure(QUERIES, 8, () => graph.getAffectedEntities({ organizationId: ORG, entity: pick() })),
    ]);
    console.log(`\n${ENTITIES} entities, ${EDGES} relationships, ${QUERIES} queries per row (embedded SQLite store)`);
    console.log('| Query | p50 ms | p95 ms | p99 ms | per s |');
    console.log('|---|---|---|---|---|');
    for (const [name, r] of rows) console.log(`| ${name} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${fmt(r.p99)} | ${r.perSecond.toFixed(0)} |`);
    console.log(
      `\npaths found for ${found}/${QUERIES} random pairs (${(steps / Math.max(1, found)).toFixed(1)} steps over their paths); impact walks reached ${(affectedTotal / QUERIES).toFixed(1)} entities on average; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
    );
    await store.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
