// MongoDB going away while the platform runs: calls fail at once with UNAVAILABLE and a plain
// message (not an internal error after the driver's long wait), and work again by themselves once
// MongoDB is back, with no restart. Real parts: the MongoDB-wire server stopped and started again
// at the same address.
import { Code, ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

const run = shouldRunMongoSuite('store outage');
let mongo: MongoWireServer;
let platform: TestPlatform;
const logs: string[] = [];

beforeAll(async () => {
  if (!run) return;
  mongo = await startMongoWireServer();
  if (mongo.external) return;
  platform = await startTestPlatform({ MONGODB_URL: mongo.url, MONGODB_SERVER_SELECTION_TIMEOUT_MS: '1000' }, { logs });
}, 120_000);
afterAll(async () => {
  await platform?.stop();
  await mongo?.stop();
});

const put = (key: string) =>
  platform.ctx.clients.brain.putMemory({
    organizationId: 'org-outage',
    namespace: Namespace.KNOWLEDGE,
    key,
    title: `Memory ${key}`,
    content: `What ${key} says, kept in MongoDB.`,
  });

describe.runIf(run)('MongoDB stops and comes back while the platform runs', () => {
  it('answers UNAVAILABLE during the outage and recovers by itself', async (ctx) => {
    if (mongo.external) ctx.skip(); // a server this test cannot stop
    await put('before');
    const port = Number(new URL(mongo.url.replace('mongodb://', 'http://')).port);
    await mongo.stop();

    const started = performance.now();
    const err = await put('during').catch((e: unknown) => e);
    const tookMs = performance.now() - started;
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unavailable);
    expect((err as ConnectError).rawMessage).toBe('the records store is not answering; retry shortly');
    console.log(`UNAVAILABLE ${Math.round(tookMs)} ms into the outage (MONGODB_SERVER_SELECTION_TIMEOUT_MS=1000)`);
    // The driver's reason is in the service's log, once, at warn.
    expect(logs.some((line) => line.includes('"msg":"store unavailable"') && line.includes('MongoDB at 127.0.0.1'))).toBe(true);
    // The health probe says so too (readiness builds on it).
    expect(await platform.ctx.stores.probe().catch(() => false)).toBe(false);

    mongo = await startMongoWireServer(port);
    const back = performance.now();
    const deadline = Date.now() + 60_000;
    let recovered: unknown;
    while (Date.now() < deadline) {
      recovered = await put('after').catch((e: unknown) => e);
      if (!(recovered instanceof Error)) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(recovered).not.toBeInstanceOf(Error);
    console.log(`a write succeeded again ${Math.round(performance.now() - back)} ms after MongoDB was listening again`);
    const res = await platform.ctx.clients.brain.getMemories({
      organizationId: 'org-outage',
      namespace: Namespace.KNOWLEDGE,
      keys: ['after'],
    });
    expect(res.memories.map((m) => m.key)).toEqual(['after']);
  }, 120_000);
});
