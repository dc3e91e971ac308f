// A worker thread for records-sqlite.test.ts: opens its own connection to a shared SQLite file
// and races the other workers, so that the store's atomicity is tested across connections.

import { parentPort, workerData } from 'node:worker_threads';

import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';

interface Job {
  path: string;
  collection: string;
  codes: number;
  increments: number;
}

const job = workerData as Job;
const store = createSqliteRecordStore({ path: job.path, sweepIntervalMs: 0, busyTimeoutMs: 30_000 });
const coll = store.collection(job.collection);

// Wait for the go signal, so that every worker starts racing at once.
parentPort!.once('message', async () => {
  const taken: string[] = [];
  const inserted: string[] = [];
  const counts: number[] = [];
  for (let i = 0; i < job.codes; i++) {
    if (await coll.put({ _id: `new${i}` }, { expect: null })) inserted.push(`new${i}`);
    if (await coll.take(`code${i}`)) taken.push(`code${i}`);
  }
  for (let i = 0; i < job.increments; i++) {
    counts.push((await coll.increment('counter', 'n', 1, { expiresAt: Date.now() + 60_000 })).n as number);
  }
  await store.close();
  parentPort!.postMessage({ taken, inserted, counts });
});
parentPort!.postMessage('ready');
