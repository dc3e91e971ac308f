// An embeddings endpoint that fails mid-run, during writes: the Brain on the OpenAI-compatible
// embedder against a real HTTP server on 127.0.0.1 (POST /v1/embeddings, answered with the offline
// USE-lite model's vectors so that meaning is real), which answers 503 or drops the connection for
// a while and then recovers. Every memory the Brain acknowledged, and every record it kept, becomes
// findable by meaning with no retry and no operator action; a refused write is refused as
// retryable (UNAVAILABLE), never as an internal error.
import fs from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Code, ConnectError, type Client } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEdgeConfig } from '../../edge/config.ts';
import { startPlatform, type Platform } from '../../edge/platform.ts';
import { type BrainService, Namespace, WriteOutcome } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { readStorageConfig } from '../../services/common/config.ts';
import { createEmbedder, createUseLiteEmbedder, type Embedder } from '../../services/common/embeddings/index.ts';
import { createLogger } from '../../services/common/log.ts';
import { createRecordStore } from '../../services/common/storage/records/index.ts';
import { createEmbeddedVectorStore } from '../../services/common/storage/vectors/embedded.ts';
import { describeStores, type Stores } from '../../services/common/stores.ts';
import { testEnv } from '../support/platform.ts';
import { sample, scrape } from '../support/prometheus.ts';

const K = Namespace.KNOWLEDGE;
const ORG = 'org-embeddings-outage';

/** Each memory with a paraphrase that shares no content word with it: found only by meaning. */
const FACTS = [
  ['backups', 'Nightly backups are copied to cold storage and kept for thirty days.', 'retention period of our archived snapshots'],
  ['oncall', 'The on-call engineer rotates every Monday at nine in the morning.', 'when does the pager duty shift change'],
  ['vpn', 'Install WireGuard and import the office profile from the wiki.', 'connect remotely to the company network'],
  ['deploys', 'Production releases happen on Tuesdays after the staging smoke tests pass.', 'which weekday do we ship to customers'],
  ['expenses', 'Travel receipts must be submitted within two weeks of the trip.', 'deadline to claim reimbursement for a journey'],
  ['parking', 'Visitors leave their cars in the lot behind building B.', 'where guests should put their vehicles'],
  ['coffee', 'The espresso machine on the third floor is descaled every Friday.', 'cleaning schedule of the kitchen appliance upstairs'],
  ['payroll', 'Salaries are paid on the last working day of each month.', 'when employees receive their wages'],
  ['laptops', 'Replacement notebooks are ordered through the IT service desk portal.', 'how to request a new computer'],
  ['security', 'Badges must be worn visibly at all times inside the office.', 'rule about showing identification cards at work'],
].map(([key, content, query]) => ({ key: key!, content: content!, query: query! }));

/** A real OpenAI-compatible endpoint whose vectors come from USE-lite, and that can be taken down. */
interface EmbeddingsEndpoint {
  url: string;
  /** Answers 503, and drops every other connection, until set back to true. */
  up: boolean;
  served: number;
  refused: number;
  close(): Promise<void>;
}

async function startEmbeddingsEndpoint(model: Embedder): Promise<EmbeddingsEndpoint> {
  const state = { up: true, served: 0, refused: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (!state.up) {
        state.refused += 1;
        if (state.refused % 2 === 0) return req.socket.destroy();
        res.writeHead(503, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'the model is overloaded', type: 'server_error' } }));
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string[]; model: string };
      const vectors = await model.embed(body.input);
      state.served += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          model: body.model,
          data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: Array.from(v) })),
          usage: { prompt_tokens: 0, total_tokens: 0 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

async function semanticScore(brain: Client<typeof BrainService>, query: string, key: string): Promise<number> {
  const res = await brain.searchMemories({ organizationId: ORG, namespace: K, query, limit: 10 });
  return res.results.find((r) => r.memory?.key === key)?.scores?.semantic ?? 0;
}

async function until(condition: () => Promise<boolean>, what: string, limitMs = 120_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
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

describe('an embeddings endpoint outage during writes', () => {
  let model: Embedder;
  let endpoint: EmbeddingsEndpoint;
  let dataDir: string;
  let stores: Stores;
  let platform: Platform;

  beforeAll(async () => {
    model = await createUseLiteEmbedder({ threads: 1 });
    endpoint = await startEmbeddingsEndpoint(model);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-embeddings-outage-'));
    const env = testEnv(dataDir, { METRICS_PORT: '0', EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_URL: endpoint.url });
    const storage = readStorageConfig(env, 2);
    const embedder = await createEmbedder(storage.embeddings);
    const records = await createRecordStore(storage);
    const vectors = createEmbeddedVectorStore({
      path: path.join(dataDir, 'vectors.sqlite'),
      dimensions: embedder.dimensions,
      busyTimeoutMs: 20,
    });
    stores = {
      records,
      vectors,
      embedder,
      description: describeStores(storage),
      probe: async () => true,
      async close() {
        await embedder.close();
        await vectors.close();
        await records.close();
      },
    };
    platform = await startPlatform({ config: readEdgeConfig(env, 2), logger: createLogger({ level: 'silent' }), stores });
  }, 180_000);

  afterAll(async () => {
    await platform?.stop(1_000);
    await stores?.close();
    await endpoint?.close();
    await model?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('makes every acknowledged memory, and every record kept, findable by meaning once the endpoint recovers', async () => {
    const brain = platform.ctx.clients.brain;
    const metrics = async () => {
      const text = await scrape(platform.metricsUrl!);
      return {
        pending: sample(text, 'mindgate_brain_vector_sync_pending') ?? 0,
        failed: sample(text, 'mindgate_brain_vector_sync_items_total', { outcome: 'failed' }) ?? 0,
      };
    };
    const [before, pendingWrites, during, after] = [FACTS.slice(0, 2), FACTS.slice(2, 4), FACTS.slice(4, 8), FACTS.slice(8)];
    const acknowledged: string[] = [];
    const put = async (fact: (typeof FACTS)[number]) => {
      const res = await brain.putMemory({ organizationId: ORG, namespace: K, key: fact.key, content: fact.content });
      expect([WriteOutcome.CREATED, WriteOutcome.UPDATED]).toContain(res.outcome);
      acknowledged.push(fact.key);
    };
    for (const fact of before) await put(fact);

    // Records whose vectors are still owed when the outage starts: written (embedded) while the
    // vector file was locked, so the reconciler has to embed them again, through the outage.
    const unlock = lockVectorFile(path.join(dataDir, 'vectors.sqlite'));
    try {
      for (const fact of pendingWrites) {
        await expect(brain.putMemory({ organizationId: ORG, namespace: K, key: fact.key, content: fact.content })).rejects.toMatchObject({
          code: Code.Unavailable,
        });
      }
      endpoint.up = false;
    } finally {
      unlock();
    }
    const { failed: failedBefore } = await metrics();
    // Writes during the outage: each one either lands (it never does while every request fails) or
    // is refused as retryable, with nothing half-written.
    const refused: string[] = [];
    await Promise.all(
      during.map(async (fact) => {
        try {
          await put(fact);
        } catch (err) {
          expect(err, fact.key).toBeInstanceOf(ConnectError);
          expect((err as ConnectError).code, `${fact.key}: ${(err as ConnectError).message}`).toBe(Code.Unavailable);
          refused.push(fact.key);
        }
      }),
    );
    expect(refused.sort()).toEqual(during.map((f) => f.key).sort());
    expect(endpoint.refused).toBeGreaterThan(0);
    // The reconciler meets the outage too, and keeps the owed records owed.
    await until(async () => (await metrics()).failed > failedBefore, 'a vector-sync pass failing on the embeddings endpoint');
    expect((await metrics()).pending).toBeGreaterThanOrEqual(pendingWrites.length);

    endpoint.up = true;
    for (const fact of after) await put(fact);
    // No retry of the refused writes, no repair command: what the Brain holds becomes findable.
    const kept = await brain.getMemories({ organizationId: ORG, namespace: K, keys: FACTS.map((f) => f.key) });
    const keys = kept.memories.map((m) => m.key).sort();
    expect(keys).toEqual([...acknowledged, ...pendingWrites.map((f) => f.key)].sort());
    for (const fact of FACTS.filter((f) => keys.includes(f.key))) {
      await until(async () => (await semanticScore(brain, fact.query, fact.key)) > 0, `${fact.key} by meaning`);
    }
    await until(async () => (await metrics()).pending === 0, 'the vector-sync backlog back to 0');
    // Refused writes left no record behind: a client's retry is a plain new write.
    for (const key of refused) expect(keys).not.toContain(key);
  }, 240_000);
});
