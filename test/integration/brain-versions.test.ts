// The versions of a memory (ListMemoryVersions, GetMemoryVersion) on each records store, SQLite
// and the MongoDB-wire server: every update and deletion keeps what it replaced, a process that
// dies between saving a version and writing the memory loses and invents nothing, a key deleted
// and written again keeps the earlier memory's versions, pages chain, another organization finds
// nothing, and deleting the organization deletes its versions.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Code, ConnectError, createClient, createRouterTransport, type Client } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrainService, Namespace, VersionState } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { createBrainContext, type BrainContext } from '../../services/brain/context.ts';
import { memoryId } from '../../services/brain/memory-record.ts';
import { brainRoutes } from '../../services/brain/routes.ts';
import { deletionOf, versionOf } from '../../services/brain/version-record.ts';
import { createLogger } from '../../services/common/log.ts';
import type { RecordStore } from '../../services/common/storage/records/interface.ts';
import { createMongoRecordStore } from '../../services/common/storage/records/mongo.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { shouldRunMongoSuite, startMongoWireServer } from '../support/mongo-server.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

const K = Namespace.KNOWLEDGE;
const alice = { clientId: 'client-alice', userId: 'u-alice', clientName: 'Alice CLI' };
const bob = { clientId: 'client-bob', userId: 'u-bob', clientName: 'Bob agent' };

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

async function codeOf(p: Promise<unknown>): Promise<Code | undefined> {
  const err = await p.then(
    () => undefined,
    (e) => e,
  );
  return err instanceof ConnectError ? err.code : undefined;
}

function versionsSuite(open: () => Promise<{ store: RecordStore; close: () => Promise<void> }>) {
  let close: () => Promise<void>;
  let ctx: BrainContext;
  let brain: Client<typeof BrainService>;
  let clock = Date.UTC(2026, 4, 1);
  const org = `org-versions-${randomUUID().slice(0, 8)}`;
  const list = async (key: string, pageSize = 0, pageToken = '') =>
    brain.listMemoryVersions({ organizationId: org, namespace: K, key, pageSize, pageToken });
  const summary = async (key: string) =>
    (await list(key)).versions.map((v) => `${v.memory!.version}:${VersionState[v.state]}:${v.memory!.content}`);
  const put = (key: string, content: string, source = alice) => {
    clock += 1_000;
    return brain.putMemory({ organizationId: org, namespace: K, key, content, source, allowDuplicate: true });
  };

  beforeAll(async () => {
    const opened = await open();
    close = opened.close;
    ctx = createBrainContext({ ...platform.ctx.stores, records: opened.store }, createLogger({ level: 'silent' }), { now: () => clock });
    brain = createClient(BrainService, createRouterTransport(brainRoutes(ctx)));
  }, 120_000);
  afterAll(async () => {
    await close?.();
  });

  it('keeps every replaced and deleted version, and those of an earlier memory of the key', async () => {
    await put('runbook', 'Restart the queue with systemctl.');
    await put('runbook', 'Restart the queue with the operator.', bob);
    expect(await summary('runbook')).toEqual([
      '2:CURRENT:Restart the queue with the operator.',
      '1:REPLACED:Restart the queue with systemctl.',
    ]);
    const first = (await list('runbook')).versions[1];
    expect(first.endedBy?.clientId).toBe('client-bob');
    expect(first.memory?.source?.clientId).toBe('client-alice');
    const got = await brain.getMemoryVersion({ organizationId: org, namespace: K, key: 'runbook', version: 1n });
    expect(got.version?.memory?.content).toBe('Restart the queue with systemctl.');
    expect(await codeOf(brain.getMemoryVersion({ organizationId: org, namespace: K, key: 'runbook', version: 3n }))).toBe(Code.NotFound);

    clock += 1_000;
    await brain.deleteMemory({ organizationId: org, namespace: K, key: 'runbook', source: bob });
    expect(await summary('runbook')).toEqual([
      '2:DELETED:Restart the queue with the operator.',
      '1:REPLACED:Restart the queue with systemctl.',
    ]);
    expect((await list('runbook')).versions[0].endedBy?.clientId).toBe('client-bob');
    // Written again: version 1 of a new memory, the earlier one's versions after it.
    await put('runbook', 'Queues restart themselves now.');
    expect(await summary('runbook')).toEqual([
      '1:CURRENT:Queues restart themselves now.',
      '2:DELETED:Restart the queue with the operator.',
      '1:REPLACED:Restart the queue with systemctl.',
    ]);
    const again = await brain.getMemoryVersion({ organizationId: org, namespace: K, key: 'runbook', version: 1n });
    expect(again.version?.state).toBe(VersionState.CURRENT);
    const older = await brain.getMemoryVersion({ organizationId: org, namespace: K, key: 'runbook', version: 2n });
    expect(older.version?.state).toBe(VersionState.DELETED);
  });

  it('neither loses nor invents a version when a write or a deletion dies after saving it', async () => {
    await put('crash', 'The cache holds 10 GB.');
    const stored = (await ctx.memories.get(memoryId(org, 'knowledge', 'crash')))!;
    // What a write and a deletion that died after step 1 (version-record.ts) leave behind.
    await ctx.versions.put(versionOf(stored));
    await ctx.versions.put(deletionOf(stored, clock, bob));
    expect(await summary('crash')).toEqual(['1:CURRENT:The cache holds 10 GB.']);
    await put('crash', 'The cache holds 20 GB.');
    // The dead deletion's marker counts for nothing: an update replaced that version.
    expect(await summary('crash')).toEqual(['2:CURRENT:The cache holds 20 GB.', '1:REPLACED:The cache holds 10 GB.']);
  });

  it('pages through versions, newest first', async () => {
    for (let i = 1; i <= 5; i++) await put('paged', `Version number ${i} of the paged memory.`);
    const seen: number[] = [];
    let token = '';
    let pages = 0;
    do {
      const page = await list('paged', 2, token);
      seen.push(...page.versions.map((v) => Number(v.memory!.version)));
      token = page.nextPageToken;
      pages++;
    } while (token && pages < 10);
    expect(seen).toEqual([5, 4, 3, 2, 1]);
    expect(pages).toBeGreaterThan(1);
    expect(await codeOf(list('paged', 101))).toBe(Code.InvalidArgument);
  });

  it("finds nothing of another organization's memories, and deletes versions with the organization", async () => {
    const other = { organizationId: 'org-versions-other', namespace: K, key: 'runbook' };
    expect(await codeOf(brain.listMemoryVersions(other))).toBe(Code.NotFound);
    expect(await codeOf(brain.getMemoryVersion({ ...other, version: 1n }))).toBe(Code.NotFound);
    expect(await codeOf(list('never-written'))).toBe(Code.NotFound);
    expect((await ctx.versions.find({ organizationId: org })).length).toBeGreaterThan(0);
    for (let i = 0; i < 20; i++) {
      if ((await brain.deleteOrganizationData({ organizationId: org, batchSize: 3 })).done) break;
    }
    expect(await ctx.versions.find({ organizationId: org })).toEqual([]);
    expect(await codeOf(list('runbook'))).toBe(Code.NotFound);
  });
}

describe('memory versions on the embedded (SQLite) records store', () => {
  versionsSuite(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-versions-'));
    const store = createSqliteRecordStore({ path: path.join(dir, 'records.sqlite') });
    return {
      store,
      close: async () => {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});

describe.runIf(shouldRunMongoSuite('memory versions on MongoDB'))('memory versions on the MongoDB records store', () => {
  versionsSuite(async () => {
    const server = await startMongoWireServer();
    const store = await createMongoRecordStore({ url: server.url, database: `versions_${randomUUID().slice(0, 8)}` });
    return {
      store,
      close: async () => {
        await store.close();
        await server.stop();
      },
    };
  });
});
