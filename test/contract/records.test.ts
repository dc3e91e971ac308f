// Runs the records contract against every implementation: the embedded SQLite store (fresh,
// and reopened from disk through createRecordStore) and the MongoDB store against a real
// MongoDB-wire server (mongo-java-server, or the server MONGODB_URL names).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';

import { createRecordStore } from '../../services/common/storage/records/index.ts';
import { createMongoRecordStore } from '../../services/common/storage/records/mongo.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { runRecordStoreContract } from './records.contract.ts';

function tempDir(): { dir: string; remove(): Promise<void> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-records-'));
  return { dir, remove: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

{
  const temp = tempDir();
  runRecordStoreContract(
    'sqlite',
    {
      open: async () => createSqliteRecordStore({ path: path.join(temp.dir, 'records.sqlite'), sweepIntervalMs: 0 }),
      cleanup: temp.remove,
    },
    { kind: 'embedded' },
  );
}

{
  // Every store this harness hands out was closed and reopened from its file first, through the
  // same factory the services use (which also creates the missing data folder).
  const temp = tempDir();
  const dataDir = path.join(temp.dir, 'nested', 'data');
  runRecordStoreContract(
    'sqlite reopened from disk (createRecordStore)',
    {
      open: async () => {
        const first = await createRecordStore({ dataDir, mongodbDatabase: 'unused' });
        await first.collection('reopen_marker').put({ _id: 'marker', at: Date.now() });
        await first.close();
        return createRecordStore({ dataDir, mongodbDatabase: 'unused' });
      },
      cleanup: temp.remove,
    },
    { kind: 'embedded' },
  );
}

if (shouldRunMongoSuite('records contract: mongodb')) {
  let server: MongoWireServer | undefined;
  const database = `mindgate_contract_${randomUUID().slice(0, 8)}`;
  const external = Boolean(process.env.MONGODB_URL);
  runRecordStoreContract(
    external ? 'mongodb (MONGODB_URL)' : 'mongodb (mongo-java-server)',
    {
      open: async () => {
        server ??= await startMongoWireServer();
        return createMongoRecordStore({ url: server.url, database, serverSelectionTimeoutMs: 5_000 });
      },
      cleanup: async () => {
        if (!server) return;
        const client = new MongoClient(server.url, { serverSelectionTimeoutMS: 5_000 });
        try {
          await client.db(database).dropDatabase();
        } finally {
          await client.close();
          await server.stop();
        }
      },
    },
    {
      kind: 'mongodb',
      gaps: external
        ? undefined
        : {
            uniqueIndexesIgnorePartialFilter:
              'mongo-java-server ignores partialFilterExpression, so its unique indexes also cover documents missing a field',
          },
    },
  );
}
