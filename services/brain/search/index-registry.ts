// Lexical indexes per (organization, namespace), kept in memory and refreshed lazily from the
// records store, so that several replicas serving one organization stay correct.
//
// How a replica learns about writes it did not make:
// - Every write of a memory (create, update, delete) first takes the next number of the
//   (organization, namespace) sequence (an atomic counter in the records store) and stores it
//   in the record as `seq`. Deletions leave a tombstone carrying its `seq` for seven days.
// - Before a search, the index reads the counter (one small read). If it equals the value seen
//   at the last refresh, nothing changed. Otherwise it reads the records with
//   `seq >= from` and applies each one whose seq is newer than what it holds.
// - A writer takes its number before it stores the record, so a reader can see number N+1
//   stored while N is still in flight. Numbers between the last refresh and the counter that
//   did not show up are kept as "pending" for PENDING_GRACE_MS and the next refreshes read from
//   the smallest pending number again; a number that never shows up belonged to a record that
//   was overwritten again (it then carries a newer number) or to a failed write.
// - An index not refreshed for FULL_REBUILD_MS (shorter than the tombstones' lifetime) is rebuilt
//   from scratch, so it can never miss a deletion whose tombstone has expired.
//
// The indexes count against the process's index memory budget (index-budget.ts). An evicted
// index is forgotten; the next use builds it from the records store as on a cold start, which
// holds every write (a write that found no index here only stored its record).
import { IndexBudget, type Residency } from '../../common/storage/index-budget.ts';
import type { RecordCollection, RecordDoc } from '../../common/storage/records/interface.ts';
import type { MemoryRecord, NamespaceName } from '../memory-record.ts';
import { eventTimeOf } from '../event-time.ts';
import { LexicalIndex } from './lexical-index.ts';

export interface SequenceDoc extends RecordDoc {
  seq: number;
}

export const TOMBSTONE_TTL_MS = 7 * 24 * 3600_000;
const FULL_REBUILD_MS = 24 * 3600_000;
const PENDING_GRACE_MS = 10_000;
/** In-flight writes of one (organization, namespace) never outnumber this. */
const MAX_PENDING = 128;
/** Records read per page when an index is built from scratch. */
const BUILD_PAGE = 2_000;

interface Entry {
  index: LexicalIndex;
  /** Counter value at the last refresh. */
  counter: number;
  /** Sequence numbers not yet seen, with when they were first missed. */
  pending: Map<number, number>;
  builtAt: number;
  refreshing?: Promise<void>;
  residency: Residency;
}

export interface IndexRegistryOptions {
  memories: RecordCollection<MemoryRecord>;
  sequences: RecordCollection<SequenceDoc>;
  now: () => number;
  /** Records read per page when an index is built from scratch (default 2,000). */
  buildPage?: number;
  /** The process's index memory budget (default: none). */
  budget?: IndexBudget;
}

export function sequenceId(organizationId: string, namespace: NamespaceName): string {
  return `${organizationId}/${namespace}`;
}

export class IndexRegistry {
  private entries = new Map<string, Entry>();
  private options: IndexRegistryOptions;
  private budget: IndexBudget;

  constructor(options: IndexRegistryOptions) {
    this.options = options;
    this.budget = options.budget ?? new IndexBudget({ limitBytes: Number.POSITIVE_INFINITY });
  }

  /** Takes the next write sequence number of (organization, namespace), or `count` of them (returns the last). */
  async nextSeq(organizationId: string, namespace: NamespaceName, count = 1): Promise<number> {
    const doc = await this.options.sequences.increment(sequenceId(organizationId, namespace), 'seq', count, {});
    return doc.seq;
  }

  /** The index, brought up to date with every write stored before this call. */
  async fresh(organizationId: string, namespace: NamespaceName): Promise<LexicalIndex> {
    const id = sequenceId(organizationId, namespace);
    const counter = (await this.options.sequences.get(id))?.seq ?? 0;
    this.budget.touch(organizationId);
    let entry = this.entries.get(id);
    const now = this.options.now();
    if (entry && entry.counter === counter && entry.pending.size === 0 && now - entry.builtAt < FULL_REBUILD_MS) {
      return entry.index;
    }
    if (!entry || now - entry.builtAt >= FULL_REBUILD_MS) {
      entry = await this.build(id, organizationId, namespace, entry);
    }
    // One refresh at a time per index; callers arriving meanwhile wait for it and re-check.
    while (entry.refreshing) await entry.refreshing;
    if (entry.counter !== counter || entry.pending.size > 0) {
      const e = entry;
      e.refreshing = this.refresh(e, organizationId, namespace, counter).finally(() => {
        e.refreshing = undefined;
        e.residency.resized();
      });
      await e.refreshing;
    }
    return entry.index;
  }

  /** Applies a record this replica just wrote, so its own reads see it without a refresh. */
  applyLocal(organizationId: string, namespace: NamespaceName, record: MemoryRecord): void {
    const entry = this.entries.get(sequenceId(organizationId, namespace));
    if (!entry) return;
    apply(entry.index, record);
    entry.residency.resized();
  }

  /** Drops the organization's indexes (its memory was deleted); the next search builds them again. */
  forget(organizationId: string): void {
    for (const namespace of ['knowledge', 'episodes'] as const) {
      const id = sequenceId(organizationId, namespace);
      this.entries.get(id)?.residency.release();
      this.entries.delete(id);
    }
  }

  private building = new Map<string, Promise<Entry>>();

  /** Builds (or waits for the build of) the index from scratch. */
  private build(id: string, organizationId: string, namespace: NamespaceName, previous?: Entry): Promise<Entry> {
    let pending = this.building.get(id);
    if (!pending) {
      pending = this.buildOnce(id, organizationId, namespace, previous).finally(() => this.building.delete(id));
      this.building.set(id, pending);
    }
    return pending;
  }

  private async buildOnce(id: string, organizationId: string, namespace: NamespaceName, previous?: Entry): Promise<Entry> {
    if (previous?.refreshing) await previous.refreshing;
    const counter = (await this.options.sequences.get(id))?.seq ?? 0;
    const entry = this.admit(id, organizationId, counter);
    let seen: Set<number>;
    try {
      seen = await this.load(entry, organizationId, namespace);
    } catch (err) {
      entry.residency.release();
      throw err;
    }
    entry.builtAt = this.options.now();
    addPending(entry, Math.max(0, counter - MAX_PENDING), counter, seen, this.options.now());
    previous?.residency.release();
    // Evicted while it was being built: this build's callers are served, and nothing is kept.
    if (entry.residency.resident) this.entries.set(id, entry);
    else if (this.entries.get(id) === previous) this.entries.delete(id);
    return entry;
  }

  /** Reads every record of (organization, namespace) into a new entry's index; the sequence numbers seen. */
  private async load(entry: Entry, organizationId: string, namespace: NamespaceName): Promise<Set<number>> {
    const seen = new Set<number>();
    // Pages in sequence order, yielding between them, so that a large organization's first
    // search does not hold the event loop for the whole load.
    let after = -1;
    const pageSize = this.options.buildPage ?? BUILD_PAGE;
    for (;;) {
      const page = await this.options.memories.find(
        { organizationId, namespace, seq: { $gt: after } },
        { sort: { field: 'seq', direction: 'asc' }, limit: pageSize },
      );
      for (const record of page) {
        seen.add(record.seq);
        if (!record.deleted) apply(entry.index, record);
      }
      // Resized page by page, so that other organizations are evicted as it grows.
      entry.residency.resized();
      if (page.length < pageSize) return seen;
      after = page[page.length - 1].seq;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** A new, empty index admitted to the memory budget; eviction forgets it. */
  private admit(id: string, organizationId: string, counter: number): Entry {
    const index = new LexicalIndex();
    const residency = this.budget.admit(organizationId, {
      kind: 'lexical',
      bytes: () => index.estimatedBytes(),
      evict: () => {
        if (this.entries.get(id)?.index === index) this.entries.delete(id);
      },
    });
    return { index, counter, pending: new Map(), builtAt: 0, residency };
  }

  private async refresh(entry: Entry, organizationId: string, namespace: NamespaceName, counter: number): Promise<void> {
    const now = this.options.now();
    for (const [seq, since] of entry.pending) if (now - since > PENDING_GRACE_MS) entry.pending.delete(seq);
    const from = Math.min(entry.counter + 1, ...entry.pending.keys());
    const records = await this.options.memories.find(
      { organizationId, namespace, seq: { $gte: from } },
      { sort: { field: 'seq', direction: 'asc' } },
    );
    const seen = new Set<number>();
    for (const record of records) {
      seen.add(record.seq);
      entry.pending.delete(record.seq);
      apply(entry.index, record);
    }
    if (counter > entry.counter) addPending(entry, Math.max(entry.counter, counter - MAX_PENDING), counter, seen, now);
    entry.counter = Math.max(entry.counter, counter);
  }
}

function addPending(entry: Entry, after: number, upTo: number, seen: Set<number>, now: number): void {
  for (let seq = after + 1; seq <= upTo; seq++) if (!seen.has(seq)) entry.pending.set(seq, now);
  if (entry.pending.size > MAX_PENDING) {
    const keep = [...entry.pending.keys()].sort((a, b) => b - a).slice(0, MAX_PENDING);
    const kept = new Set(keep);
    for (const seq of entry.pending.keys()) if (!kept.has(seq)) entry.pending.delete(seq);
  }
}

/** Applies a record if it is newer than what the index holds for its key. */
function apply(index: LexicalIndex, record: MemoryRecord): void {
  const held = index.seqOf(record.key);
  if (held !== undefined && held >= record.seq) return;
  if (record.deleted) {
    index.remove(record.key);
    return;
  }
  index.upsert({
    key: record.key,
    title: record.title,
    content: record.content,
    tags: record.tags,
    entities: record.entities,
    updatedAt: record.updatedAt,
    eventAt: eventTimeOf(record),
    seq: record.seq,
    contentHash: record.contentHash,
  });
}
