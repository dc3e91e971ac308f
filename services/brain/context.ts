import { createEventOutbox, type EventOutbox } from '../common/events/outbox.ts';
import type { Logger } from '../common/log.ts';
import { IndexBudget } from '../common/storage/index-budget.ts';
import type { Stores } from '../common/stores.ts';
import type { GraphClient } from './graph-sync.ts';
import type { RecordCollection } from '../common/storage/records/interface.ts';
import type { ContradictionRecord, QuestionRecord } from './items-record.ts';
import type { MemoryLimit } from './memory-limit.ts';
import type { MemoryRecord } from './memory-record.ts';
import type { HistoryRecord } from './version-record.ts';
import { IndexRegistry, type SequenceDoc } from './search/index-registry.ts';
import { QueryEmbeddings } from './search/query-embeddings.ts';
import { DEFAULT_WEIGHTS, type RankingWeights } from './search/ranking.ts';

/** Everything the brain's handlers use, built once in createBrainModule. */
export interface BrainContext {
  stores: Stores;
  memories: RecordCollection<MemoryRecord>;
  contradictions: RecordCollection<ContradictionRecord>;
  questions: RecordCollection<QuestionRecord>;
  /** Earlier versions of memories and deletion markers (version-record.ts). */
  versions: RecordCollection<HistoryRecord>;
  /** The Brain's events, written with the changes that make them (events.ts). */
  events: EventOutbox;
  indexes: IndexRegistry;
  /**
   * The process's index memory budget (the stores'), which the lexical indexes count against;
   * every call holds its organization's indexes in it (routes.ts).
   */
  indexBudget: IndexBudget;
  /** Embeddings of recent queries (search and recall). */
  queryEmbeddings: QueryEmbeddings;
  weights: RankingWeights;
  logger: Logger;
  now: () => number;
  /** The plan's max_memories (memory-limit.ts); absent: no limit (tools and tests built without billing). */
  memoryLimit?: MemoryLimit;
  /** The entity-graph service the memories' relationships go to (graph-sync.ts); absent: no graph. */
  graph?: () => GraphClient;
  /**
   * Whether the organization's plan includes the memory graph (`entity_graph`), which recall's
   * graph part needs (handlers/recall.ts); absent: always (tools and tests built without billing).
   */
  graphEntitled?: (organizationId: string) => Promise<boolean>;
}

export interface BrainContextOptions {
  now?: () => number;
  weights?: Partial<RankingWeights>;
}

export function createBrainContext(stores: Stores, logger: Logger, options: BrainContextOptions = {}): BrainContext {
  const now = options.now ?? Date.now;
  const memories = stores.records.collection<MemoryRecord>('memories', {
    indexes: [
      { fields: ['organizationId', 'namespace', 'key'], unique: true },
      { fields: ['organizationId', 'namespace', 'seq'] },
      { fields: ['organizationId', 'namespace', 'updatedAt'] },
      // Vector sync's queue (vector-sync.ts): only records owing a verified vector hold the field.
      { fields: ['vectorDue'] },
      // Graph sync's queue (graph-sync.ts), the same way.
      { fields: ['graphDue'] },
    ],
  });
  const sequences = stores.records.collection<SequenceDoc>('memory_sequences');
  const contradictions = stores.records.collection<ContradictionRecord>('memory_contradictions', {
    indexes: [
      { fields: ['organizationId', 'status', 'createdAt'] },
      { fields: ['organizationId', 'refs'] },
      // Every detector hit looks up an open contradiction of the same members before adding one.
      { fields: ['organizationId', 'memberSet', 'status'] },
    ],
  });
  const questions = stores.records.collection<QuestionRecord>('memory_questions', {
    indexes: [
      { fields: ['organizationId', 'status', 'createdAt'] },
      { fields: ['organizationId', 'refs'] },
      // recall_context looks up the open questions naming the entities of its memories.
      { fields: ['organizationId', 'entities'] },
    ],
  });
  const versions = stores.records.collection<HistoryRecord>('memory_versions', {
    indexes: [
      { fields: ['organizationId', 'namespace', 'key', 'updatedAt'] },
      { fields: ['organizationId', 'namespace', 'key', 'version'] },
    ],
  });
  const events = createEventOutbox({
    records: stores.records,
    collection: 'brain_event_outbox',
    subjects: { memories, memory_contradictions: contradictions, memory_questions: questions },
    logger,
    now,
  });
  const indexBudget = stores.indexBudget ?? new IndexBudget({ limitBytes: Number.POSITIVE_INFINITY });
  return {
    stores,
    memories,
    contradictions,
    questions,
    versions,
    events,
    indexes: new IndexRegistry({ memories, sequences, now, budget: indexBudget }),
    indexBudget,
    queryEmbeddings: new QueryEmbeddings(stores.embedder),
    weights: { ...DEFAULT_WEIGHTS, ...options.weights },
    logger,
    now,
  };
}
