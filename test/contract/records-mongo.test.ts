// What the MongoDB records store promises beyond the port's contract: how documents and
// indexes look in MongoDB, that reads hide expired documents the TTL monitor has not removed
// yet, and that an unreachable server is reported.

import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createRecordStore } from '../../services/common/storage/records/index.ts';
import type { RecordStore } from '../../services/common/storage/records/interface.ts';
import { createMongoRecordStore } from '../../services/common/storage/records/mongo.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';

describe.runIf(shouldRunMongoSuite('mongodb records store'))('mongodb records store', () => {
  let server: MongoWireServer;
  let client: MongoClient;
  let db: Db;
  let store: RecordStore;
  const database = `mindgate_mongo_${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    server = await startMongoWireServer();
    client = new MongoClient(server.url, { serverSelectionTimeoutMS: 5_000 });
    await client.connect();
    db = client.db(database);
    store = await createMongoRecordStore({ url: server.url, database });
  });

  afterAll(async () => {
    await store?.close();
    await db?.dropDatabase().catch(() => undefined);
    await client?.close();
    await server?.stop();
  });

  it('stores _id as MongoDB _id and expiresAt also as a Date for the TTL index', async () => {
    const expiresAt = Date.now() + 60_000;
    const c = store.collection('sessions');
    await c.put({ _id: 's1', user: 'u', expiresAt });
    const stored = await db.collection<{ _id: string; _expiresAtDate?: Date }>('sessions').findOne({ _id: 's1' });
    expect(stored).toMatchObject({ _id: 's1', user: 'u', expiresAt });
    expect(stored?._expiresAtDate).toBeInstanceOf(Date);
    expect((stored!._expiresAtDate as Date).getTime()).toBe(expiresAt);
    expect(await c.get('s1')).toEqual({ _id: 's1', user: 'u', expiresAt });
    expect(await c.find({ user: 'u' })).toEqual([{ _id: 's1', user: 'u', expiresAt }]);
  });

  it('creates a TTL index and the requested indexes', async () => {
    const c = store.collection('memories', {
      indexes: [{ fields: ['organizationId', 'key'], unique: true }, { fields: ['organizationId', 'updatedAt'] }],
    });
    await c.count({});
    const indexes = await db.collection('memories').listIndexes().toArray();
    const byName = new Map(indexes.map((index) => [index.name as string, index]));
    expect(byName.get('mindgate_expires_ttl')).toMatchObject({ key: { _expiresAtDate: 1 }, expireAfterSeconds: 0 });
    expect(byName.get('organizationId_1_key_1_unique')).toMatchObject({ key: { organizationId: 1, key: 1 }, unique: true });
    expect(byName.get('organizationId_1_updatedAt_1')).toMatchObject({ key: { organizationId: 1, updatedAt: 1 } });
  });

  it('hides expired documents that are still stored', async () => {
    const c = store.collection('codes');
    await c.put({ _id: 'old', organizationId: 'o', expiresAt: Date.now() - 1000 });
    await c.put({ _id: 'new', organizationId: 'o' });
    expect(await db.collection('codes').countDocuments({})).toBe(2);
    expect(await c.count({ organizationId: 'o' })).toBe(1);
    expect(await c.take('old')).toBeUndefined();
    expect(await c.deleteMany({ organizationId: 'o' })).toBe(1);
  });

  it('is chosen by createRecordStore when a MongoDB URL is configured', async () => {
    const chosen = await createRecordStore({ dataDir: '/nonexistent/never-created', mongodbUrl: server.url, mongodbDatabase: database });
    try {
      expect(chosen.kind).toBe('mongodb');
      await chosen.ping();
    } finally {
      await chosen.close();
    }
  });

  it('rejects when the server is unreachable', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    await expect(
      createMongoRecordStore({
        url: `mongodb://127.0.0.1:${port}/?directConnection=true`,
        database,
        serverSelectionTimeoutMs: 300,
      }),
    ).rejects.toThrow();
  });
});
