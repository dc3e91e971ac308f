// The in-memory graph of each organization (graph-index.ts), built lazily from the records store
// and kept correct when several replicas write, the same way the Brain's lexical indexes are
// (services/brain/search/index-registry.ts, where the scheme is explained at length):
// - every entity or relationship write first takes the next number of the organization's
//   sequence (graph_sequences, an atomic counter) and stores it as `seq`;
// - before a query the replica reads the counter; when it moved, it reads the entities and
//   relationships with `seq >= from` and applies each one newer than what it holds;
// - numbers taken but not yet seen stay pending for PENDING_GRACE_MS (a write in flight);
// - an index not rebuilt for FULL_REBUILD_MS (shorter than the tombstones' lifetime) is built
//   again from scratch, so that it never misses a removal whose tombstone expired.
import type { RecordCollection } from '../common/storage/records/interface.ts';
import { GraphIndex } from './graph-index.ts';
import type { EntityRecord, RelationshipRecord, SequenceDoc } from './records.ts';

const FULL_REBUILD_MS = 24 * 3600_000;
const PENDING_GRACE_MS = 10_000;
const MAX_PENDING = 256;
const BUILD_PAGE = 5_000;

interface Entry {
  graph: GraphIndex;
  counter: number;
  pending: Map<number, number>;
  builtAt: number;
  refreshing?: Promise<void>;
}

export interface GraphRegistryOptions {
  entities: RecordCollection<EntityRecord>;
  relationships: RecordCollection<RelationshipRecord>;
  sequences: RecordCollection<SequenceDoc>;
  now: () => number;
}

export class GraphRegistry {
  private entries = new Map<string, Entry>();
  private building = new Map<string, Promise<Entry>>();
  private options: GraphRegistryOptions;

  constructor(options: GraphRegistryOptions) {
    this.options = options;
  }

  async nextSeq(organizationId: string): Promise<number> {
    return (await this.options.sequences.increment(organizationId, 'seq', 1, {})).seq;
  }

  /** The organization's graph with every write stored before this call applied. */
  async fresh(organizationId: string): Promise<GraphIndex> {
    const counter = (await this.options.sequences.get(organizationId))?.seq ?? 0;
    let entry = this.entries.get(organizationId);
    const now = this.options.now();
    if (entry && entry.counter === counter && entry.pending.size === 0 && now - entry.builtAt < FULL_REBUILD_MS) return entry.graph;
    if (!entry || now - entry.builtAt >= FULL_REBUILD_MS) entry = await this.build(organizationId, entry);
    while (entry.refreshing) await entry.refreshing;
    if (entry.counter !== counter || entry.pending.size > 0) {
      const e = entry;
      e.refreshing = this.refresh(e, organizationId, counter).finally(() => {
        e.refreshing = undefined;
      });
      await e.refreshing;
    }
    return entry.graph;
  }

  /** Applies what this replica just wrote, so that its own next query sees it at once. */
  applyEntity(record: EntityRecord): void {
    this.entries.get(record.organizationId)?.graph.applyEntity(record);
  }

  applyRelationship(record: RelationshipRecord): void {
    this.entries.get(record.organizationId)?.graph.applyRelationship(record);
  }

  /** Forgets an organization's graph (its data was deleted). */
  drop(organizationId: string): void {
    this.entries.delete(organizationId);
  }

  private build(organizationId: string, previous?: Entry): Promise<Entry> {
    let pending = this.building.get(organizationId);
    if (!pending) {
      pending = this.buildOnce(organizationId, previous).finally(() => this.building.delete(organizationId));
      this.building.set(organizationId, pending);
    }
    return pending;
  }

  private async buildOnce(organizationId: string, previous?: Entry): Promise<Entry> {
    if (previous?.refreshing) await previous.refreshing;
    const counter = (await this.options.sequences.get(organizationId))?.seq ?? 0;
    const graph = new GraphIndex(organizationId);
    const seen = new Set<number>();
    await this.readPages(this.options.entities, organizationId, (r) => {
      seen.add(r.seq);
      graph.applyEntity(r);
    });
    await this.readPages(this.options.relationships, organizationId, (r) => {
      seen.add(r.seq);
      graph.applyRelationship(r);
    });
    const entry: Entry = { graph, counter, pending: new Map(), builtAt: this.options.now() };
    addPending(entry, Math.max(0, counter - MAX_PENDING), counter, seen, this.options.now());
    this.entries.set(organizationId, entry);
    return entry;
  }

  /** Reads a collection of the organization in sequence order, yielding between pages. */
  private async readPages<T extends EntityRecord | RelationshipRecord>(
    collection: RecordCollection<T>,
    organizationId: string,
    apply: (record: T) => void,
  ): Promise<void> {
    let after = -1;
    for (;;) {
      const page = await collection.find(
        { organizationId, seq: { $gt: after } },
        { sort: { field: 'seq', direction: 'asc' }, limit: BUILD_PAGE },
      );
      for (const record of page) apply(record);
      if (page.length < BUILD_PAGE) return;
      after = page[page.length - 1].seq;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private async refresh(entry: Entry, organizationId: string, counter: number): Promise<void> {
    const now = this.options.now();
    for (const [seq, since] of entry.pending) if (now - since > PENDING_GRACE_MS) entry.pending.delete(seq);
    const from = Math.min(entry.counter + 1, ...entry.pending.keys());
    const filter = { organizationId, seq: { $gte: from } };
    const sort = { sort: { field: 'seq', direction: 'asc' as const } };
    const [entities, relationships] = await Promise.all([
      this.options.entities.find(filter, sort),
      this.options.relationships.find(filter, sort),
    ]);
    const seen = new Set<number>();
    for (const record of entities) {
      seen.add(record.seq);
      entry.pending.delete(record.seq);
      entry.graph.applyEntity(record);
    }
    for (const record of relationships) {
      seen.add(record.seq);
      entry.pending.delete(record.seq);
      entry.graph.applyRelationship(record);
    }
    if (counter > entry.counter) addPending(entry, Math.max(entry.counter, counter - MAX_PENDING), counter, seen, now);
    entry.counter = Math.max(entry.counter, counter);
  }
}

function addPending(entry: Entry, after: number, upTo: number, seen: Set<number>, now: number): void {
  for (let seq = after + 1; seq <= upTo; seq++) if (!seen.has(seq)) entry.pending.set(seq, now);
  if (entry.pending.size > MAX_PENDING) {
    const kept = new Set([...entry.pending.keys()].sort((a, b) => b - a).slice(0, MAX_PENDING));
    for (const seq of entry.pending.keys()) if (!kept.has(seq)) entry.pending.delete(seq);
  }
}
