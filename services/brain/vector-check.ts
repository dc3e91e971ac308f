// The full consistency check between memories and their vectors, and its repair: what vector
// sync (vector-sync.ts) cannot see because no record is marked, such as a vector or a record
// removed behind the Brain's back, a store restored from an older backup, or data written
// before the markers existed. Run by `npm run brain:check` (check.ts).
//
// Two passes, a page at a time: every live memory's vector is looked up by id, then every
// vector's memory by key. A vector is stale when its payload's fingerprint (`text`) is not its
// memory's; vectors written before fingerprints existed have none and count as current.
//
// Repair writes the missing or stale vectors and deletes the vectors without a live memory.
// It is safe while the Brain serves: a memory written between the two reads of a pass carries
// its own marker, and vector sync rewrites its vector should the repair remove it.
import type { BrainContext } from './context.ts';
import { isLive, memoryId, memoryPointId, vectorTextHash, type MemoryRecord, type NamespaceName } from './memory-record.ts';
import { writeVector } from './vector-sync.ts';

const PAGE = 500;

export interface VectorCheckReport {
  /** Live memories examined. */
  records: number;
  /** Vectors examined. */
  vectors: number;
  /** Live memories with no vector: not findable by meaning. */
  recordsWithoutVectors: number;
  /** Vectors made from another version of their memory's text. */
  staleVectors: number;
  /** Vectors whose memory does not exist or is deleted. */
  vectorsWithoutRecords: number;
  /** Memories marked for vector sync at the time of the check (normally in flight). */
  pending: number;
  /** Vectors written or deleted by the repair. */
  repaired: number;
}

export interface VectorCheckOptions {
  repair: boolean;
}

async function checkRecords(ctx: BrainContext, report: VectorCheckReport, repair: boolean): Promise<void> {
  let after = '';
  for (;;) {
    const page = await ctx.memories.find({ _id: { $gt: after } }, { sort: { field: '_id', direction: 'asc' }, limit: PAGE });
    if (page.length === 0) return;
    after = page.at(-1)!._id;
    const byOrganization = Map.groupBy(page.filter(isLive), (r) => r.organizationId);
    for (const [organizationId, records] of byOrganization) {
      const ids = records.map((r) => memoryPointId(r.namespace, r.key));
      const stored = new Map((await ctx.stores.vectors.retrieve(organizationId, ids)).map((p) => [p.id, p.payload]));
      for (const record of records) {
        report.records += 1;
        if (record.vectorDue !== undefined) report.pending += 1;
        const payload = stored.get(memoryPointId(record.namespace, record.key));
        const missing = payload === undefined;
        const stale = !missing && payload.text !== undefined && payload.text !== vectorTextHash(record);
        if (missing) report.recordsWithoutVectors += 1;
        if (stale) report.staleVectors += 1;
        if ((missing || stale) && repair) {
          await writeVector(ctx, record);
          report.repaired += 1;
        }
      }
    }
  }
}

async function checkVectorsPass(ctx: BrainContext, report: VectorCheckReport, repair: boolean): Promise<void> {
  let after: string | undefined;
  do {
    const page = await ctx.stores.vectors.scan({ after, limit: PAGE });
    after = page.next;
    const owners = page.points.map((p) => ({
      point: p,
      recordId: memoryId(p.organizationId, String(p.payload.namespace) as NamespaceName, String(p.payload.key)),
    }));
    const live = new Set((await ctx.memories.getMany(owners.map((o) => o.recordId))).filter(isLive).map((r: MemoryRecord) => r._id));
    for (const { point, recordId } of owners) {
      report.vectors += 1;
      if (live.has(recordId)) continue;
      report.vectorsWithoutRecords += 1;
      if (repair) {
        await ctx.stores.vectors.delete(point.organizationId, [point.id]);
        report.repaired += 1;
      }
    }
  } while (after);
}

export async function checkVectors(ctx: BrainContext, options: VectorCheckOptions): Promise<VectorCheckReport> {
  const report: VectorCheckReport = {
    records: 0,
    vectors: 0,
    recordsWithoutVectors: 0,
    staleVectors: 0,
    vectorsWithoutRecords: 0,
    pending: 0,
    repaired: 0,
  };
  await checkRecords(ctx, report, options.repair);
  await checkVectorsPass(ctx, report, options.repair);
  return report;
}
