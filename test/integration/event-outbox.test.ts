// The event outbox (services/common/events/outbox.ts) on each records store, SQLite and the
// MongoDB-wire server: an event is handed out if and only if its change was stored, whichever
// moment the process dies at. A "restart" here is a second outbox over the same store, as a new
// process would open it; the clock is the test's, so SETTLE_MS passes at once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEventOutbox,
  deleteWithEvents,
  event,
  putWithEvents,
  SETTLE_MS,
  type EventOutbox,
} from '../../services/common/events/outbox.ts';
import { createLogger } from '../../services/common/log.ts';
import type { RecordCollection, RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';
import { createMongoRecordStore } from '../../services/common/storage/records/mongo.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';

interface KeyRecord extends RecordDoc {
  organizationId: string;
  name: string;
  prefix: string;
  createdBy: string;
  createdAt: number;
  rev: number;
}

function outboxSuite(open: () => Promise<{ store: RecordStore; close: () => Promise<void> }>) {
  let store: RecordStore;
  let close: () => Promise<void>;
  let clock = Date.UTC(2026, 4, 1);
  let keys: RecordCollection<KeyRecord>;
  const logger = createLogger({ level: 'silent' });
  let name = '';
  const freshOutbox = () => {
    name = `outbox_${randomUUID().slice(0, 8)}`;
    return restart();
  };
  /** The outbox a process (re)started now opens over the same store and collection. */
  const restart = (): EventOutbox =>
    createEventOutbox({ records: store, collection: name, subjects: { api_keys: keys }, logger, now: () => clock });
  const subject = () => ({ collection: 'api_keys', records: keys });
  const key = (id: string): KeyRecord => ({
    _id: id,
    organizationId: 'org_a',
    name: id,
    prefix: 'mg_k',
    createdBy: 'u',
    createdAt: clock,
    rev: 1,
  });
  const created = (r: KeyRecord) =>
    event('api_key.created', r.organizationId, {
      id: r._id,
      name: r.name,
      prefix: r.prefix,
      scopes: ['read'],
      team_id: null,
      created_by: r.createdBy,
    });
  const claim = (outbox: EventOutbox) => outbox.claim({ maxEvents: 10, leaseMs: 30_000, waitMs: 0 });

  beforeAll(async () => {
    ({ store, close } = await open());
    keys = store.collection<KeyRecord>(`keys_${randomUUID().slice(0, 8)}`);
  });

  afterAll(async () => {
    await close?.();
  });

  it('hands out a committed event once per lease, and no more once acknowledged', async () => {
    const outbox = freshOutbox();
    const record = key('k1');
    expect(await putWithEvents(outbox, subject(), record, undefined, [created(record)], { expect: null })).toBe(true);
    const [first, second] = await Promise.all([claim(outbox), claim(restart())]);
    const claimed = [...first, ...second];
    expect(claimed.map((e) => e.type)).toEqual(['api_key.created']);
    expect((await keys.get('k1'))?.eventIds).toEqual([claimed[0]._id]);
    expect(await claim(outbox)).toEqual([]);
    clock += 30_001;
    const again = await claim(restart());
    expect(again.map((e) => e._id)).toEqual([claimed[0]._id]);
    expect(await outbox.ack([claimed[0]._id])).toBe(1);
    clock += 60_000;
    expect(await claim(outbox)).toEqual([]);
  });

  it('publishes the event of a change stored by a process that died before committing it', async () => {
    const dying = freshOutbox();
    const record = key('k2');
    const pending = await dying.begin({ collection: 'api_keys', id: record._id, kind: 'written' }, [created(record)]);
    await keys.put({ ...record, eventIds: pending.ids }, { expect: null });
    // The process dies here: no commit.
    const restarted = restart();
    expect(await claim(restarted)).toEqual([]);
    clock += SETTLE_MS;
    const claimed = await claim(restarted);
    expect(claimed.map((e) => e._id)).toEqual(pending.ids);
  });

  it('never publishes the event of a change that was not stored', async () => {
    const dying = freshOutbox();
    const record = key('k3');
    const pending = await dying.begin({ collection: 'api_keys', id: record._id, kind: 'written' }, [created(record)]);
    // The process dies before writing the record.
    clock += SETTLE_MS;
    expect(await claim(restart())).toEqual([]);
    expect(pending.ids).toHaveLength(1);
    // A change refused by its compare-and-set drops its events at once.
    const outbox = restart();
    expect(await putWithEvents(outbox, subject(), { ...record, _id: 'k1' }, undefined, [created(record)], { expect: null })).toBe(false);
    clock += SETTLE_MS;
    expect(await claim(outbox)).toEqual([]);
  });

  it('publishes a deletion whose process died after deleting, and not one that died before', async () => {
    const outbox = freshOutbox();
    const gone = key('k4');
    const kept = key('k5');
    await keys.put(gone);
    await keys.put(kept);
    const deleted = await outbox.begin({ collection: 'api_keys', id: gone._id, kind: 'deleted', createdAt: gone.createdAt }, [
      created(gone),
    ]);
    await keys.delete(gone._id);
    const notDeleted = await outbox.begin({ collection: 'api_keys', id: kept._id, kind: 'deleted', createdAt: kept.createdAt }, [
      created(kept),
    ]);
    clock += SETTLE_MS;
    expect((await claim(restart())).map((e) => e._id)).toEqual(deleted.ids);
    expect(notDeleted.ids).toHaveLength(1);
    expect(await deleteWithEvents(restart(), subject(), kept, [created(kept)])).toBe(true);
  });
}

describe('event outbox on the embedded (SQLite) records store', () => {
  outboxSuite(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-outbox-'));
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

describe.runIf(shouldRunMongoSuite('event outbox on MongoDB'))('event outbox on the MongoDB records store', () => {
  outboxSuite(async () => {
    const server: MongoWireServer = await startMongoWireServer();
    const store = await createMongoRecordStore({ url: server.url, database: `outbox_${randomUUID().slice(0, 8)}` });
    return {
      store,
      close: async () => {
        await store.close();
        await server.stop();
      },
    };
  });
});
