import { join } from 'node:path';
import type { StorageConfig } from './config.ts';
import { preparePrivateDataDir } from './data-dir.ts';
import type { Logger } from './log.ts';
import { createCheck, runChecks, type Check } from './readiness.ts';
import type { Embedder } from './embeddings/interface.ts';
import { createEmbedder, EmbeddingsError, embeddingsEndpoint, isEmbeddingsOutage } from './embeddings/index.ts';
import { StartRefusedError } from './start-refusal.ts';
import { checkDatabaseFile } from './storage/database-file.ts';
import type { RecordStore } from './storage/records/interface.ts';
import { createRecordStore, EMBEDDED_RECORDS_FILE, mongoHosts } from './storage/records/index.ts';
import { IndexBudget } from './storage/index-budget.ts';
import { StoreUnavailableError } from './storage/unavailable.ts';
import type { VectorStore } from './storage/vectors/interface.ts';
import { createVectorStore, EMBEDDED_VECTORS_FILE } from './storage/vectors/index.ts';
import { untilAnswered } from './store-start.ts';

/** What a process stores in, for the start log: never a credential. */
export interface StoresDescription {
  records: string;
  /** Absent in a process that keeps no vectors (the agents, billing and entity-graph services). */
  vectors?: string;
  embeddings?: string;
}

export type StoreName = 'records' | 'vectors';

/**
 * The records store alone: what the agents, billing and entity-graph services use when each runs
 * as its own process. They open no vector store and load no embeddings model.
 */
export interface RecordStores {
  records: RecordStore;
  /** Which store this is (SQLite path or MongoDB hosts). */
  description: StoresDescription;
  /**
   * Readiness: true when the records store answers a round trip within `READINESS_TIMEOUT_MS`.
   * Results are reused for a second (readiness.ts).
   */
  probe(names?: 'records'[]): Promise<boolean>;
  close(): Promise<void>;
}

/** The stores a process uses; one set is shared by every service running in that process. */
export interface Stores extends RecordStores {
  vectors: VectorStore;
  embedder: Embedder;
  /**
   * The process's index memory budget (BRAIN_INDEX_MEMORY_MB), shared by the embedded vector
   * store's matrices and the Brain's lexical indexes; absent (stores assembled by hand): none.
   */
  indexBudget?: IndexBudget;
  /** Which stores these are (SQLite path or MongoDB hosts, embedded or Qdrant, the embeddings). */
  description: Required<StoresDescription>;
  /** Readiness of the named stores (every one by default), as for RecordStores. */
  probe(names?: StoreName[]): Promise<boolean>;
}

export interface OpenStoresOptions {
  /** Where repairs of the data directory's modes, and stores not answering yet, are reported. */
  logger: Logger;
  /** The clock of the records store's expiries: the platform's own, so tests can move it. */
  now?: () => number;
}

export function describeStores(config: StorageConfig): Required<StoresDescription> {
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

/** At start: an outage is waited for (until the deadline); any other refusal stops the start. */
function embeddingsUnavailable(err: unknown, url: string): unknown {
  if (!(err instanceof EmbeddingsError)) return err;
  if (isEmbeddingsOutage(err)) return new StoreUnavailableError('embeddings', `${url}: ${err.message}`, { cause: err });
  return new StartRefusedError(`EMBEDDINGS_URL: ${url} refused the embeddings request: ${err.message}`);
}

interface StoreStart {
  /** When waiting for MongoDB, Qdrant or an embeddings endpoint gives up (STORE_START_TIMEOUT_MS). */
  deadline: number;
  logger: Logger;
}

/**
 * DATA_DIR checked and made private, the embedded records file checked for damage, MongoDB waited
 * for until the deadline. With `vectors`, the embedded vectors file is checked too.
 */
async function openRecords(
  config: StorageConfig,
  options: OpenStoresOptions,
  vectors: boolean,
): Promise<{ records: RecordStore; start: StoreStart }> {
  const { logger } = options;
  // Even with MongoDB and Qdrant, DATA_DIR may keep generated secrets: repaired when it exists,
  // created only for an embedded store (a container's root file system may be read-only).
  const embedded = !config.mongodbUrl || (vectors && !config.qdrantUrl);
  preparePrivateDataDir(config.dataDir, logger, { create: embedded });
  if (!config.mongodbUrl) checkDatabaseFile(join(config.dataDir, EMBEDDED_RECORDS_FILE));
  if (vectors && !config.qdrantUrl) checkDatabaseFile(join(config.dataDir, EMBEDDED_VECTORS_FILE));
  const start = { deadline: Date.now() + config.startTimeoutMs, logger };
  const now = options.now ?? Date.now;
  const records = config.mongodbUrl
    ? await untilAnswered({ ...start, setting: 'MONGODB_URL' }, () => createRecordStore(config, now))
    : await createRecordStore(config, now);
  return { records, start };
}

/**
 * Opens the records store alone, for a service that keeps no vectors. A store that cannot be used
 * stops the start with a StartRefusedError naming the file or setting.
 */
export async function openRecordStores(config: StorageConfig, options: OpenStoresOptions): Promise<RecordStores> {
  const { records } = await openRecords(config, options, false);
  const check = createCheck('records', () => records.ping(), { timeoutMs: config.readinessTimeoutMs, logger: options.logger });
  return {
    records,
    description: { records: describeStores(config).records },
    async probe() {
      return (await runChecks([check])).ready;
    },
    close: () => records.close(),
  };
}

/**
 * Opens the stores: the records store as openRecordStores does, the embedded vectors file checked
 * for damage, Qdrant and an embeddings endpoint waited for up to STORE_START_TIMEOUT_MS. A store
 * that cannot be used stops the start with a StartRefusedError naming the file or setting.
 */
export async function openStores(config: StorageConfig, options: OpenStoresOptions): Promise<Stores> {
  const { records, start } = await openRecords(config, options, true);
  const opened: { close(): Promise<unknown> }[] = [records];
  try {
    const endpoint = config.embeddings.provider === 'openai' ? config.embeddings.url : undefined;
    const embedder = endpoint
      ? await untilAnswered({ ...start, setting: 'EMBEDDINGS_URL' }, () =>
          createEmbedder(config.embeddings).catch((err: unknown) => {
            throw embeddingsUnavailable(err, endpoint);
          }),
        )
      : await createEmbedder(config.embeddings);
    opened.push(embedder);
    const indexBudget = new IndexBudget({ limitBytes: config.indexMemoryBytes, logger: start.logger });
    const vectors = createVectorStore(config, embedder.dimensions, indexBudget);
    opened.push(vectors);
    // Qdrant is reached lazily; at start its collection is made ready, or the start waits for it.
    if (config.qdrantUrl) await untilAnswered({ ...start, setting: 'QDRANT_URL' }, () => vectors.ping());
    return assemble({ records, vectors, embedder, indexBudget }, describeStores(config), {
      timeoutMs: config.readinessTimeoutMs,
      logger: start.logger,
    });
  } catch (err) {
    for (const store of opened.reverse()) await store.close().catch(() => undefined);
    throw err;
  }
}

function assemble(
  opened: Pick<Stores, 'records' | 'vectors' | 'embedder' | 'indexBudget'>,
  description: Required<StoresDescription>,
  readiness: { timeoutMs: number; logger: Logger },
): Stores {
  const { records, vectors, embedder } = opened;
  const checks: Record<StoreName, Check> = {
    records: createCheck('records', () => records.ping(), readiness),
    vectors: createCheck('vectors', () => vectors.ping(), readiness),
  };
  return {
    ...opened,
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
