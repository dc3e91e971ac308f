import type { StorageConfig } from './config.ts';
import { preparePrivateDataDir } from './data-dir.ts';
import type { Logger } from './log.ts';
import type { Embedder } from './embeddings/interface.ts';
import { createEmbedder } from './embeddings/index.ts';
import type { RecordStore } from './storage/records/interface.ts';
import { createRecordStore } from './storage/records/index.ts';
import type { VectorStore } from './storage/vectors/interface.ts';
import { createVectorStore } from './storage/vectors/index.ts';

/** The stores a process uses; one set is shared by every service running in that process. */
export interface Stores {
  records: RecordStore;
  vectors: VectorStore;
  embedder: Embedder;
  /** True when every store answers. */
  probe(): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenStoresOptions {
  /** Where repairs of the data directory's modes are reported. */
  logger: Logger;
  /** The clock of the records store's expiries: the platform's own, so tests can move it. */
  now?: () => number;
}

export async function openStores(config: StorageConfig, options: OpenStoresOptions): Promise<Stores> {
  const now = options.now ?? Date.now;
  // Even with MongoDB and Qdrant, DATA_DIR may keep generated secrets: repaired when it exists,
  // created only for an embedded store (a container's root file system may be read-only).
  preparePrivateDataDir(config.dataDir, options.logger, { create: !config.mongodbUrl || !config.qdrantUrl });
  const records = await createRecordStore(config, now);
  const embedder = await createEmbedder(config.embeddings);
  const vectors = await createVectorStore(config, embedder.dimensions);
  return {
    records,
    vectors,
    embedder,
    async probe() {
      await Promise.all([records.ping(), vectors.ping()]);
      return true;
    },
    async close() {
      await Promise.allSettled([embedder.close(), vectors.close()]);
      await records.close();
    },
  };
}
