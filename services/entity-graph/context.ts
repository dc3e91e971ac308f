import type { Logger } from '../common/log.ts';
import type { RecordCollection, RecordStore } from '../common/storage/records/interface.ts';
import type { RelationshipExtractor } from './extractor/interface.ts';
import { createPatternExtractor } from './extractor/patterns.ts';
import { GraphRegistry } from './index-registry.ts';
import type { AssertionRecord, EntityRecord, NameRecord, RelationshipRecord, SequenceDoc } from './records.ts';

/** Everything the entity-graph handlers use, built once in createEntityGraphModule. */
export interface GraphContext {
  entities: RecordCollection<EntityRecord>;
  names: RecordCollection<NameRecord>;
  relationships: RecordCollection<RelationshipRecord>;
  assertions: RecordCollection<AssertionRecord>;
  /** Each organization's write sequence (index-registry.ts). */
  sequences: RecordCollection<SequenceDoc>;
  graphs: GraphRegistry;
  extractor: RelationshipExtractor;
  logger: Logger;
  now: () => number;
}

export interface GraphContextOptions {
  now?: () => number;
  /** The extractor SyncMemory runs (default: the model-free patterns). */
  extractor?: RelationshipExtractor;
}

export function createGraphContext(records: RecordStore, logger: Logger, options: GraphContextOptions = {}): GraphContext {
  const now = options.now ?? Date.now;
  const entities = records.collection<EntityRecord>('graph_entities', {
    indexes: [{ fields: ['organizationId', 'seq'] }, { fields: ['organizationId', 'createdAt'] }],
  });
  const relationships = records.collection<RelationshipRecord>('graph_relationships', {
    indexes: [
      { fields: ['organizationId', 'seq'] },
      { fields: ['organizationId', 'createdAt'] },
      { fields: ['organizationId', 'subjectId', 'createdAt'] },
      { fields: ['organizationId', 'objectId', 'createdAt'] },
      { fields: ['organizationId', 'predicate', 'createdAt'] },
    ],
  });
  const sequences = records.collection<SequenceDoc>('graph_sequences');
  return {
    entities,
    names: records.collection<NameRecord>('graph_names', { indexes: [{ fields: ['organizationId', 'entityId'] }] }),
    relationships,
    assertions: records.collection<AssertionRecord>('graph_assertions', { indexes: [{ fields: ['organizationId'] }] }),
    sequences,
    graphs: new GraphRegistry({ entities, relationships, sequences, now }),
    extractor: options.extractor ?? createPatternExtractor(),
    logger,
    now,
  };
}
