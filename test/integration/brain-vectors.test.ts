// A memory never loses its vector: the record and its vector are kept consistent through a
// failing vector store (the real embedded file, write-locked by another connection), retries,
// several replicas, and rows removed behind the Brain's back.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Code, ConnectError, createClient, createRouterTransport, type Client } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEdgeConfig } from '../../edge/config.ts';
import { startPlatform, type Platform } from '../../edge/platform.ts';
import { BrainService, Namespace, WriteOutcome } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { createBrainContext, type BrainContext } from '../../services/brain/context.ts';
import { memoryId } from '../../services/brain/memory-record.ts';
import { brainRoutes } from '../../services/brain/routes.ts';
import { checkVectors } from '../../services/brain/vector-check.ts';
import { reconcileVectors } from '../../services/brain/vector-sync.ts';
import { readStorageConfig } from '../../services/common/config.ts';
import { createEmbedder, type Embedder } from '../../services/common/embeddings/index.ts';
import { createLogger } from '../../services/common/log.ts';
import { createRecordStore } from '../../services/common/storage/records/index.ts';
import { createEmbeddedVectorStore } from '../../services/common/storage/vectors/embedded.ts';
import { describeStores, type Stores } from '../../services/common/stores.ts';
import { testEnv } from '../support/platform.ts';
import { sample, scrape } from '../support/prometheus.ts';

const K = Namespace.KNOWLEDGE;
const root = path.resolve(import.meta.dirname, '../..');
const silent = createLogger({ level: 'silent' });
let embedder: Embedder;

/** One paraphrase per memory that shares no content word with it: found only by meaning. */
const FACTS = [
  {
    key: 'backups',
    content: 'Nightly backups are copied to cold storage and kept for thirty days.',
    query: 'retention period of our archived snapshots',
  },
  {
    key: 'oncall',
    content: 'The on-call engineer rotates every Monday at nine in the morning.',
    query: 'when does the pager duty shift change',
  },
  {
    key: 'vpn',
    content: 'Install WireGuard and import the office profile from the wiki.',
    query: 'connect remotely to the company network',
  },
  {
    key: 'deploys',
    content: 'Production releases happen on Tuesdays after the staging smoke tests pass.',
    query: 'which weekday do we ship to customers',
  },
  {
    key: 'expenses',
    content: 'Travel receipts must be submitted within two weeks of the trip.',
    query: 'deadline to claim reimbursement for a journey',
  },
];

interface TestStores extends Stores {
  dataDir: string;
  vectorFile: string;
}

/** The real embedded stores, with a short busy timeout so a locked file fails fast. */
async function openTestStores(): Promise<TestStores> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-vectors-'));
  const config = readStorageConfig(testEnv(dataDir), 2);
  const records = await createRecordStore(config);
  const vectorFile = path.join(dataDir, 'vectors.sqlite');
  const vectors = createEmbeddedVectorStore({ path: vectorFile, dimensions: embedder.dimensions, busyTimeoutMs: 20 });
  return {
    dataDir,
    vectorFile,
    records,
    vectors,
    embedder,
    description: describeStores(config),
    async probe() {
      await Promise.all([records.ping(), vectors.ping()]);
      return true;
    },
    // The embedder is shared by the whole file and closed in afterAll.
    async close() {
      await vectors.close();
      await records.close();
    },
  };
}

/** Another connection holding the write lock on the vector file: the store's writes fail. */
function lockVectorFile(file: string): () => void {
  const blocker = new DatabaseSync(file);
  blocker.exec('PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE');
  return () => {
    blocker.exec('COMMIT');
    blocker.close();
  };
}

function brainOver(ctx: BrainContext): Client<typeof BrainService> {
  return createClient(BrainService, createRouterTransport(brainRoutes(ctx)));
}

async function errorCode(p: Promise<unknown>): Promise<Code | undefined> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  return error instanceof ConnectError ? error.code : undefined;
}

/** The semantic score of `key` in a search by meaning (0 when it is not found that way). */
async function semanticScore(client: Client<typeof BrainService>, org: string, query: string, key: string): Promise<number> {
  const res = await client.searchMemories({ organizationId: org, namespace: K, query, limit: 10 });
  return res.results.find((r) => r.memory?.key === key)?.scores?.semantic ?? 0;
}

async function until(condition: () => Promise<boolean>, what: string, limitMs = 90_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  embedder = await createEmbedder(readStorageConfig(testEnv(os.tmpdir()), 2).embeddings);
}, 120_000);

afterAll(async () => {
  await embedder?.close();
});

describe('a failing vector store', () => {
  let stores: TestStores;
  let platform: Platform;

  beforeAll(async () => {
    stores = await openTestStores();
    const config = readEdgeConfig(testEnv(stores.dataDir, { METRICS_PORT: '0' }), 2);
    platform = await startPlatform({ config, logger: silent, stores });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop(1_000);
    await stores?.close();
    fs.rmSync(stores.dataDir, { recursive: true, force: true });
  });

  it('loses no memory: what was written while it failed becomes findable by meaning once it recovers', async () => {
    const org = 'org-outage';
    const brain = platform.ctx.clients.brain;
    const [first, ...during] = FACTS;
    await brain.putMemory({ organizationId: org, namespace: K, key: first!.key, content: first!.content });
    const unlock = lockVectorFile(stores.vectorFile);
    try {
      for (const fact of during) {
        const put = brain.putMemory({ organizationId: org, namespace: K, key: fact.key, content: fact.content });
        // The record is saved; the client is told its vector is not written yet (retryable).
        expect(await errorCode(put)).toBe(Code.Unavailable);
      }
      const saved = await brain.getMemories({ organizationId: org, namespace: K, keys: during.map((f) => f.key) });
      expect(saved.missingKeys).toEqual([]);
      for (const fact of during) expect(await semanticScore(brain, org, fact.query, fact.key)).toBe(0);
    } finally {
      unlock();
    }
    // No retry and no operator action: the Brain's reconciler writes the missing vectors.
    for (const fact of FACTS) {
      await until(async () => (await semanticScore(brain, org, fact.query, fact.key)) > 0, `${fact.key} by meaning`);
    }
  }, 150_000);

  it('shows the backlog in the metrics: it rises while the vector store fails and falls back to 0', async () => {
    const org = 'org-backlog';
    const brain = platform.ctx.clients.brain;
    const backlog = async () => {
      const text = await scrape(platform.metricsUrl!);
      return {
        pending: sample(text, 'mindgate_brain_vector_sync_pending'),
        overdue: sample(text, 'mindgate_brain_vector_sync_overdue'),
        failed: sample(text, 'mindgate_brain_vector_sync_items_total', { outcome: 'failed' }) ?? 0,
        repaired: sample(text, 'mindgate_brain_vector_sync_items_total', { outcome: 'repaired' }) ?? 0,
      };
    };
    await until(async () => (await backlog()).pending === 0, 'no backlog to begin with');
    const { failed: failedBefore, repaired: repairedBefore } = await backlog();
    const unlock = lockVectorFile(stores.vectorFile);
    try {
      for (const fact of FACTS) {
        expect(await errorCode(brain.putMemory({ organizationId: org, namespace: K, key: fact.key, content: fact.content }))).toBe(
          Code.Unavailable,
        );
      }
      expect((await backlog()).pending).toBe(FACTS.length);
      // Past the grace a write has for its own vector, vector sync owes them and cannot write them.
      await until(async () => (await backlog()).overdue === FACTS.length, 'the overdue backlog');
      // Unlock only once a pass has tried and failed, or the first pass could simply succeed.
      await until(async () => (await backlog()).failed > failedBefore, 'a failed vector-sync pass');
    } finally {
      unlock();
    }
    await until(async () => {
      const now = await backlog();
      return now.pending === 0 && now.overdue === 0;
    }, 'the backlog back to 0');
    expect((await backlog()).repaired - repairedBefore).toBeGreaterThanOrEqual(FACTS.length);
  }, 150_000);
});

describe('vector consistency without the reconciler', () => {
  let stores: TestStores;

  beforeAll(async () => {
    stores = await openTestStores();
  });

  afterAll(async () => {
    await stores?.close();
    fs.rmSync(stores.dataDir, { recursive: true, force: true });
  });

  it('repairs on a retry of the same write instead of answering UNCHANGED', async () => {
    const brain = brainOver(createBrainContext(stores, silent));
    const org = 'org-retry';
    const fact = FACTS[0]!;
    const write = () => brain.putMemory({ organizationId: org, namespace: K, key: fact.key, content: fact.content });
    const unlock = lockVectorFile(stores.vectorFile);
    try {
      expect(await errorCode(write())).toBe(Code.Unavailable);
      expect(await errorCode(write())).toBe(Code.Unavailable);
    } finally {
      unlock();
    }
    expect(await semanticScore(brain, org, fact.query, fact.key)).toBe(0);
    const retried = await write();
    expect(retried.outcome).toBe(WriteOutcome.CREATED);
    expect(retried.memory?.version).toBe(1n);
    expect(await semanticScore(brain, org, fact.query, fact.key)).toBeGreaterThan(0);
    expect((await write()).outcome).toBe(WriteOutcome.UNCHANGED);
  });

  it('lets three replicas work one backlog with each memory repaired exactly once', async () => {
    const org = 'org-replicas';
    // Clocks past the grace a write's own vector has, so every marked record is due now.
    const later = () => Date.now() + 3_600_000;
    const writer = brainOver(createBrainContext(stores, silent));
    const unlock = lockVectorFile(stores.vectorFile);
    try {
      for (const fact of FACTS) {
        await writer.putMemory({ organizationId: org, namespace: K, key: fact.key, content: fact.content }).catch(() => {});
      }
    } finally {
      unlock();
    }
    const replicas = [1, 2, 3].map(() => createBrainContext(stores, silent, { now: later }));
    const runs = await Promise.all(replicas.map((ctx) => reconcileVectors(ctx)));
    expect(runs.reduce((sum, run) => sum + run.repaired, 0)).toBe(FACTS.length);
    for (const fact of FACTS) expect(await semanticScore(writer, org, fact.query, fact.key)).toBeGreaterThan(0);
    // Verified and cleared: nothing is left for a later pass.
    const again = await Promise.all(replicas.map((ctx) => reconcileVectors(ctx)));
    expect(again.reduce((sum, run) => sum + run.repaired + run.verified, 0)).toBe(0);
  });

  it('finds and repairs a record whose vector was deleted and a vector whose record was deleted', async () => {
    const ctx = createBrainContext(stores, silent);
    const brain = brainOver(ctx);
    const org = 'org-check';
    for (const fact of FACTS) await brain.putMemory({ organizationId: org, namespace: K, key: fact.key, content: fact.content });
    await reconcileVectors(createBrainContext(stores, silent, { now: () => Date.now() + 3_600_000 }));
    expect(await checkVectors(ctx, { repair: false })).toMatchObject({ recordsWithoutVectors: 0, vectorsWithoutRecords: 0 });

    await stores.vectors.delete(org, ['knowledge/backups']);
    await stores.records.collection('memories').delete(memoryId(org, 'knowledge', 'vpn'));
    const found = await checkVectors(ctx, { repair: false });
    expect(found).toMatchObject({ recordsWithoutVectors: 1, vectorsWithoutRecords: 1, repaired: 0 });
    expect(await semanticScore(brain, org, FACTS[0]!.query, 'backups')).toBe(0);

    const repaired = await checkVectors(ctx, { repair: true });
    expect(repaired).toMatchObject({ recordsWithoutVectors: 1, vectorsWithoutRecords: 1, repaired: 2 });
    expect(await checkVectors(ctx, { repair: false })).toMatchObject({ recordsWithoutVectors: 0, vectorsWithoutRecords: 0 });
    expect(await semanticScore(brain, org, FACTS[0]!.query, 'backups')).toBeGreaterThan(0);
    expect(await stores.vectors.retrieve(org, ['knowledge/vpn'])).toEqual([]);
  });
});

describe('npm run brain:check', () => {
  function runCheck(dataDir: string, ...args: string[]): Promise<{ code: number | null; out: string; err: string }> {
    const child = spawn(process.execPath, ['services/brain/check.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, DATA_DIR: dataDir, EMBEDDINGS_THREADS: '1', LOG_LEVEL: 'warn' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out: out.trim(), err: err.trim() })));
  }

  it('reports inconsistencies with exit code 1, repairs them with --repair, and refuses a data directory in use', async () => {
    const stores = await openTestStores();
    const ctx = createBrainContext(stores, silent);
    const org = 'org-command';
    for (const fact of FACTS.slice(0, 3)) {
      await brainOver(ctx).putMemory({ organizationId: org, namespace: K, key: fact.key, content: fact.content });
    }
    await stores.vectors.delete(org, ['knowledge/backups']);
    // The brain's process holds the embedded vector file: the command says so in one line.
    const refused = await runCheck(stores.dataDir);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(new RegExp(`in use by process ${process.pid}`));
    expect(refused.err.split('\n')).toHaveLength(1);
    await stores.close();

    const report = await runCheck(stores.dataDir);
    expect(report.code).toBe(1);
    expect(JSON.parse(report.out)).toMatchObject({ recordsWithoutVectors: 1, vectorsWithoutRecords: 0, repaired: 0 });
    const repair = await runCheck(stores.dataDir, '--repair');
    expect(repair.code).toBe(0);
    expect(JSON.parse(repair.out)).toMatchObject({ recordsWithoutVectors: 1, repaired: 1 });
    const clean = await runCheck(stores.dataDir);
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.out)).toMatchObject({ recordsWithoutVectors: 0, vectorsWithoutRecords: 0 });
    fs.rmSync(stores.dataDir, { recursive: true, force: true });
  }, 120_000);
});
