// Runs the entity graph's contract over every records store: embedded SQLite and MongoDB (a real
// MongoDB-wire server: mongo-java-server, or the server MONGODB_URL names).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { createMongoRecordStore } from '../../services/common/storage/records/mongo.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { runEntityGraphContract } from './entity-graph.contract.ts';

{
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-graph-'));
  runEntityGraphContract('sqlite', {
    open: async () => createSqliteRecordStore({ path: path.join(dir, 'records.sqlite'), sweepIntervalMs: 0 }),
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  });
}

if (shouldRunMongoSuite('entity graph contract: mongodb')) {
  let server: MongoWireServer | undefined;
  const database = `mindgate_graph_${randomUUID().slice(0, 8)}`;
  runEntityGraphContract(process.env.MONGODB_URL ? 'mongodb (MONGODB_URL)' : 'mongodb (mongo-java-server)', {
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
  });
}
