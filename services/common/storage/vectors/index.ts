// Chooses the vector store from configuration: Qdrant when QDRANT_URL is set, otherwise the
// embedded store in the data directory.

import { join } from 'node:path';
import type { StorageConfig } from '../../config.ts';
import type { IndexBudget } from '../index-budget.ts';
import { createEmbeddedVectorStore } from './embedded.ts';
import type { VectorStore } from './interface.ts';
import { createQdrantVectorStore } from './qdrant.ts';

export type {
  PayloadValue,
  StoredPoint,
  VectorFilter,
  VectorScanPage,
  VectorMatch,
  VectorPoint,
  VectorSearchOptions,
  VectorStore,
} from './interface.ts';
export { VectorInputError, MAX_SEARCH_LIMIT } from './validate.ts';
export { createEmbeddedVectorStore } from './embedded.ts';
export { createQdrantVectorStore } from './qdrant.ts';

/** The file the embedded store keeps in `dataDir`. */
export const EMBEDDED_VECTORS_FILE = 'vectors.sqlite';

/**
 * `dimensions` is the embedder's: each dimensionality gets its own table or collection. The
 * embedded store's matrices count against `budget` (Qdrant keeps none in this process).
 */
export function createVectorStore(config: StorageConfig, dimensions: number, budget?: IndexBudget): VectorStore {
  if (config.qdrantUrl) {
    return createQdrantVectorStore({
      url: config.qdrantUrl,
      apiKey: config.qdrantApiKey,
      collectionPrefix: config.qdrantCollectionPrefix,
      dimensions,
    });
  }
  return createEmbeddedVectorStore({ path: join(config.dataDir, EMBEDDED_VECTORS_FILE), dimensions, budget });
}
