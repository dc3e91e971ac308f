import { join } from 'node:path';
import type { StorageConfig } from './config.ts';
import { preparePrivateDataDir } from './data-dir.ts';
import type { Logger } from './log.ts';
import { createCheck, runChecks, type Check } from './readiness.ts';
import type { Embedder } from './embeddings/interface.ts';
import { createEmbedder, EmbeddingsError, embeddingsEndpoint } from './embeddings/index.ts';
import { StartRefusedError } from './start-refusal.ts';
import { checkDatabaseFile } from './storage/database-file.ts';
import type { RecordStore } from './storage/records/interface.ts';
import { createRecordStore, EMBEDDED_RECORDS_FILE, mongoHosts } from './storage/records/index.ts';
import { StoreUnavailableError } from './storage/unavailable.ts';
import type { VectorStore } from './storage/vectors/interface.ts';
import { createVectorStore, EMBEDDED_VECTORS_FILE } from './storage/vectors/index.ts';
import { untilAnswered } from './store-start.ts';

/** What a process stores in, for the start log: never a credential. */
export interface StoresDescription {
  records: string;
  vectors: string;
  embeddings: string;
}

export type StoreName = 'records' | 'vectors';

/** The stores a process uses; one set is shared by every service running in that process. */
export interface Stores {
  records: RecordStore;
  vectors: VectorStore;
  embedder: Embedder;
  /** Which stores these are (SQLite path or MongoDB hosts, embedded or Qdrant, the embeddings). */
  description: StoresDescription;
  /**
   * Readiness: true when the named stores (every one by default) answer a round trip within
   * `READINESS_TIMEOUT_MS`. Results are reused for a second (readiness.ts).
   */
  probe(names?: StoreName[]): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenStoresOptions {
  /** Where repairs of the data directory's modes, and stores not answering yet, are reported. */
  logger: Logger;
  /** The clock of the records store's expiries: the platform's own, so tests can move it. */
  now?: () => number;
}

export function describeStores(config: StorageConfig): StoresDescription {
  const { embeddings } = config;
  return {
    records: config.mongodbUrl
      ? `MongoDB ${mongoHosts(config.mongodbUrl)} (database ${config.mongodbDatabase})`
      : `SQLite ${join(config.dataDir, EMBEDDED_RECORDS_FILE)}`,
    vectors: config.qdrantUrl
      ? `Qdrant ${config.qdrantUrl} (collections ${config.qdrantCollectionPrefix}_*)`
      : `embedded ${join(config.dataDir, EMBEDDED_VECTORS_FILE)}`,
    embeddings:
      embeddings.provider === 'openai' && embeddings.url
        ? `${embeddings.model} at ${embeddingsEndpoint(embeddings.url)}`
        : `USE-lite, offline (${embeddings.threads} worker thread${embeddings.threads === 1 ? '' : 's'})`,
  };
}

/** An embeddings failure that a later attempt may not meet: no answer, a timeout, 429 or 5xx. */
function embeddingsUnavailable(err: unknown, url: string): unknown {
  if (!(err instanceof EmbeddingsError)) return err;
  const status = err.status;
  if (status === undefined || status === 408 || status === 429 || status >= 500) {
    return new StoreUnavailableError('embeddings', `${url}: ${err.message}`, { cause: err });
  }
  return new StartRefusedError(`EMBEDDINGS_URL: ${url} refused the embeddings request: ${err.message}`);
}

/**
 * Opens the stores: DATA_DIR checked and made private, the embedded files checked for damage,
 * MongoDB, Qdrant and an embeddings endpoint waited for up to STORE_START_TIMEOUT_MS. A store that
 * cannot be used stops the start with a StartRefusedError naming the file or setting.
 */
export async function openStores(config: StorageConfig, options: OpenStoresOptions): Promise<Stores> {
  const now = options.now ?? Date.now;
  const { logger } = options;
  // Even with MongoDB and Qdrant, DATA_DIR may keep generated secrets: repaired when it exists,
  // created only for an embedded store (a container's root file system may be read-only).
  preparePrivateDataDir(config.dataDir, logger, { create: !config.mongodbUrl || !config.qdrantUrl });
  if (!config.mongodbUrl) checkDatabaseFile(join(config.dataDir, EMBEDDED_RECORDS_FILE));
  if (!config.qdrantUrl) checkDatabaseFile(join(config.dataDir, EMBEDDED_VECTORS_FILE));
  const deadline = Date.now() + config.startTimeoutMs;
  const wait = { deadline, logger };
  const opened: { close(): Promise<unknown> }[] = [];
  try {
    const records = config.mongodbUrl
      ? await untilAnswered({ ...wait, setting: 'MONGODB_URL' }, () => createRecordStore(config, now))
      : await createRecordStore(config, now);
    opened.push(records);
    const endpoint = config.embeddings.provider === 'openai' ? config.embeddings.url : undefined;
    const embedder = endpoint
      ? await untilAnswered({ ...wait, setting: 'EMBEDDINGS_URL' }, () =>
          createEmbedder(config.embeddings).catch((err: unknown) => {
            throw embeddingsUnavailable(err, endpoint);
          }),
        )
      : await createEmbedder(config.embeddings);
    opened.push(embedder);
    const vectors = createVectorStore(config, embedder.dimensions);
    opened.push(vectors);
    // Qdrant is reached lazily; at start its collection is made ready, or the start waits for it.
    if (config.qdrantUrl) await untilAnswered({ ...wait, setting: 'QDRANT_URL' }, () => vectors.ping());
    return assemble(records, vectors, embedder, describeStores(config), { timeoutMs: config.readinessTimeoutMs, logger });
  } catch (err) {
    for (const store of opened.reverse()) await store.close().catch(() => undefined);
    throw err;
  }
}

function assemble(
  records: RecordStore,
  vectors: VectorStore,
  embedder: Embedder,
  description: StoresDescription,
  readiness: { timeoutMs: number; logger: Logger },
): Stores {
  const checks: Record<StoreName, Check> = {
    records: createCheck('records', () => records.ping(), readiness),
    vectors: createCheck('vectors', () => vectors.ping(), readiness),
  };
  return {
    records,
    vectors,
    embedder,
    description,
    async probe(names: StoreName[] = ['records', 'vectors']) {
      return (await runChecks(names.map((name) => checks[name]))).ready;
    },
    async close() {
      await Promise.allSettled([embedder.close(), vectors.close()]);
      await records.close();
    },
  };
}
