// Chooses the records store from the storage configuration: MongoDB when a URL is configured,
// otherwise the embedded SQLite file in the data folder.

import { join } from 'node:path';

import type { StorageConfig } from '../../config.ts';
import type { RecordStore } from './interface.ts';
import { createMongoRecordStore } from './mongo.ts';
import { createSqliteRecordStore } from './sqlite.ts';

export type {
  Condition,
  Filter,
  FindOptions,
  IndexSpec,
  PutOptions,
  RecordCollection,
  RecordDoc,
  RecordStore,
  Scalar,
} from './interface.ts';
export {
  InvalidFilterError,
  InvalidRecordError,
  RecordStoreError,
  StoreClosedError,
  UniqueViolationError,
  isRecordStoreError,
} from './errors.ts';
export { createMongoRecordStore, mongoHosts, type MongoRecordStoreOptions } from './mongo.ts';
export { createSqliteRecordStore, type SqliteRecordStoreOptions } from './sqlite.ts';

/** The file the embedded store keeps in `dataDir`. */
export const EMBEDDED_RECORDS_FILE = 'records.sqlite';

/** `now` is the clock that decides which documents have expired (tests move it). */
export async function createRecordStore(
  config: Pick<StorageConfig, 'dataDir' | 'mongodbUrl' | 'mongodbDatabase'> &
    Partial<Pick<StorageConfig, 'mongodbServerSelectionTimeoutMs'>>,
  now: () => number = Date.now,
): Promise<RecordStore> {
  if (config.mongodbUrl) {
    return createMongoRecordStore({
      url: config.mongodbUrl,
      database: config.mongodbDatabase,
      serverSelectionTimeoutMs: config.mongodbServerSelectionTimeoutMs,
      now,
    });
  }
  return createSqliteRecordStore({ path: join(config.dataDir, EMBEDDED_RECORDS_FILE), now });
}
