// Keeps the entity graph saying what the memories say, whatever fails in between. As with
// vectors (vector-sync.ts), the memory record carries the obligation: every write and deletion
// sets `graphDue` in the same record write; the writer then tells the entity-graph service
// (SyncMemory with the memory's version, or ForgetMemory) and clears the marker. When that call
// fails (the graph service down or cut off), the write still stands, and a pass that runs in every
// replica picks the record up once its time has come: it claims it (compare-and-set on rev and
// graphDue that moves graphDue a lease ahead, which one replica wins), tells the graph, and clears
// the marker against its claim. Both calls are idempotent (SyncMemory ignores older versions), so
// a repeat after a crash does no harm. None of these writes change `rev`.
import type { Client } from '@connectrpc/connect';
import type { EntityGraphService } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { BrainContext } from './context.ts';
import type { MemoryRecord } from './memory-record.ts';

export type GraphClient = Client<typeof EntityGraphService>;

/** How long the writer's own call has before a pass looks at the record. */
export const GRAPH_GRACE_MS = 5_000;
const LEASE_MS = 30_000;
const RETRY_MS = 2_000;
const BATCH = 32;
const INTERVAL_MS = 1_000;

function sameAs(record: MemoryRecord) {
  return { expect: { rev: record.rev, graphDue: record.graphDue ?? null } };
}

function cleared(record: MemoryRecord): MemoryRecord {
  const { graphDue: _due, ...rest } = record;
  return rest as MemoryRecord;
}

/** Tells the graph what this version of the memory asserts, or that it is gone. */
export async function tellGraph(graph: GraphClient, record: MemoryRecord) {
  if (record.deleted) {
    await graph.forgetMemory({ organizationId: record.organizationId, namespace: record.namespace, key: record.key });
    return undefined;
  }
  return graph.syncMemory({
    organizationId: record.organizationId,
    namespace: record.namespace,
    key: record.key,
    version: BigInt(record.version),
    title: record.title,
    content: record.content,
    entities: record.entities,
    relationships: (record.relationships ?? []).map((r) => ({ subject: r.subject, predicate: r.predicate, object: r.object })),
  });
}

/**
 * The writer's own call, right after its record write. A failure is logged and left to the
 * passes: the memory is saved, and its relationships appear a few seconds later.
 */
export async function syncGraphNow(ctx: BrainContext, record: MemoryRecord) {
  if (!ctx.graph) return undefined;
  try {
    const answer = await tellGraph(ctx.graph(), record);
    await ctx.memories.put(cleared(record), sameAs(record));
    return answer;
  } catch (err) {
    ctx.logger.warn({ err, memory: record._id }, 'entity graph not told of a memory write; graph sync will retry');
    return undefined;
  }
}

/** One pass over the records whose graph call is due; returns how many were synced. */
export async function reconcileGraph(ctx: BrainContext): Promise<number> {
  if (!ctx.graph) return 0;
  let synced = 0;
  for (;;) {
    const due = await ctx.memories.find({ graphDue: { $lte: ctx.now() } }, { sort: { field: 'graphDue', direction: 'asc' }, limit: BATCH });
    let taken = 0;
    for (const record of due) {
      const mine = { ...record, graphDue: ctx.now() + LEASE_MS };
      if (!(await ctx.memories.put(mine, sameAs(record)))) continue;
      taken++;
      try {
        await tellGraph(ctx.graph(), mine);
      } catch (err) {
        await ctx.memories.put({ ...mine, graphDue: ctx.now() + RETRY_MS }, sameAs(mine)).catch(() => false);
        ctx.logger.warn({ err, synced }, 'graph sync: the entity-graph service failed; retrying');
        return synced;
      }
      await ctx.memories.put(cleared(mine), sameAs(mine));
      synced++;
    }
    if (due.length < BATCH || taken === 0) return synced;
  }
}

export interface GraphSync {
  stop(): Promise<void>;
}

export function startGraphSync(ctx: BrainContext, intervalMs = INTERVAL_MS): GraphSync {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = async () => {
    try {
      const synced = await reconcileGraph(ctx);
      if (synced > 0) ctx.logger.info({ graphSync: synced }, `graph sync: ${synced} memories told to the entity graph after the fact`);
    } catch (err) {
      if (!stopped) ctx.logger.warn({ err }, 'graph sync: the records store failed; retrying');
    }
    if (!stopped) {
      timer = setTimeout(() => (running = pass()), intervalMs);
      timer.unref();
    }
  };
  running = pass();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
