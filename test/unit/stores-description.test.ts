// The start log's description of the stores names where data lives, never a credential.
import { describe, expect, it } from 'vitest';
import { readStorageConfig } from '../../services/common/config.ts';
import { describeStores } from '../../services/common/stores.ts';

describe('describeStores', () => {
  it('names MongoDB hosts, the Qdrant URL and the embeddings endpoint without credentials', () => {
    const config = readStorageConfig(
      {
        DATA_DIR: '/var/lib/mindgate',
        MONGODB_URL: 'mongodb://app:s3cret-password@db-0.internal:27017,db-1.internal:27017/admin?replicaSet=rs0&authSource=admin',
        MONGODB_DATABASE: 'prod',
        QDRANT_URL: 'https://qdrant.internal:6333',
        QDRANT_API_KEY: 'qdrant-api-key-secret',
        EMBEDDINGS_URL: 'https://embeddings.internal/v1',
        EMBEDDINGS_API_KEY: 'embeddings-api-key-secret',
      },
      2,
    );
    const description = describeStores(config);
    expect(description).toEqual({
      records: 'MongoDB db-0.internal:27017,db-1.internal:27017 (database prod)',
      vectors: 'Qdrant https://qdrant.internal:6333 (collections mindgate_*)',
      embeddings: 'text-embedding-3-small at https://embeddings.internal/v1/embeddings',
    });
    expect(JSON.stringify(description)).not.toMatch(/s3cret|secret|app:/);
  });

  it('names the embedded files and the offline model', () => {
    const description = describeStores(readStorageConfig({ DATA_DIR: 'data', EMBEDDINGS_THREADS: '2' }, 2));
    expect(description).toEqual({
      records: 'SQLite data/records.sqlite',
      vectors: 'embedded data/vectors.sqlite',
      embeddings: 'USE-lite, offline (2 worker threads)',
    });
  });
});
