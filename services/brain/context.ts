import type { Logger } from '../common/log.ts';
import type { Stores } from '../common/stores.ts';
import type { RecordCollection } from '../common/storage/records/interface.ts';
import type { MemoryRecord } from './memory-record.ts';

/** Everything the brain's handlers use, built once in createBrainModule. */
export interface BrainContext {
  stores: Stores;
  memories: RecordCollection<MemoryRecord>;
  logger: Logger;
  now: () => number;
}

export function createBrainContext(stores: Stores, logger: Logger, now: () => number = Date.now): BrainContext {
  const memories = stores.records.collection<MemoryRecord>('memories', {
    indexes: [
      { fields: ['organizationId', 'namespace', 'key'], unique: true },
      { fields: ['organizationId', 'namespace', 'updatedAt'] },
    ],
  });
  return { stores, memories, logger, now };
}
