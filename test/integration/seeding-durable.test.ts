// Memory seeding is durable work: a zip of a Markdown docs folder seeded by the brain run as its
// own process (`node services/brain/main.ts`), killed with SIGKILL in the middle of the run, is
// finished by the next brain process on the same store: the run is taken over when its lease
// expires, resumes where it was, and every item is stored exactly once (version 1). On the
// embedded store (SQLite) and on MongoDB (the wire server of test/support/mongo-server.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createClient, type Client } from '@connectrpc/connect';
import { zipSync, strToU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrainService, Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { SeedingService, SeedingStatus } from '../../gen/mindgate/brain/v1/seeding_pb.js';
import { createRecordStore } from '../../services/common/storage/records/index.ts';
import { inheritedEnv } from '../support/child-env.ts';
import { internalTransport } from '../support/internal-grpc.ts';
import { shouldRunMongoSuite, startMongoWireServer, type MongoWireServer } from '../support/mongo-server.ts';
import { reservePorts } from '../support/ports.ts';
import { until, type UntilOptions } from '../support/until.ts';

const root = path.resolve(import.meta.dirname, '../..');
const token = 'a-shared-internal-token-of-at-least-32-chars';
const ORG = 'org_seeddurable1';
let dataDir: string;
let port: number;
/** The records store of the brain processes: unset for the embedded one. */
let storeEnv: Record<string, string> = {};
let mongo: MongoWireServer | undefined;
const children: { child: ChildProcess; exited: Promise<unknown> }[] = [];

async function startBrain(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['services/brain/main.ts'], {
    cwd: root,
    env: {
      ...inheritedEnv(),
      DATA_DIR: dataDir,
      BRAIN_GRPC_PORT: String(port),
      INTERNAL_TOKEN: token,
      EMBEDDINGS_THREADS: '1',
      LOG_LEVEL: 'info',
      SEEDING_LEASE_SECONDS: '2',
      SEEDING_POLL_MS: '100',
      ...storeEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  children.push({ child, exited });
  await new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('"address"')) resolve();
    });
    exited.then(() => reject(new Error(`brain exited: ${stderr}`)));
  });
  return child;
}

function clients(): { seeding: Client<typeof SeedingService>; brain: Client<typeof BrainService> } {
  const transport = internalTransport(`127.0.0.1:${port}`, token);
  return { seeding: createClient(SeedingService, transport), brain: createClient(BrainService, transport) };
}

const wait = (what: string): UntilOptions => ({ what, timeoutMs: 120_000, intervalMs: 50 });

/** A docs folder: 40 runbooks of 3 sections each, every section about its own service. */
function docsZip(): Uint8Array {
  const files: Record<string, Uint8Array> = {};
  for (let i = 0; i < 40; i++) {
    files[`docs/runbooks/service-${i}.md`] = strToU8(
      [
        `# Service ${i} runbook`,
        '',
        `## Deploy`,
        `Service-${i} deploys from the pipeline stage deploy-${i} with ${i + 2} replicas in zone z${i}.`,
        '',
        `## Rollback`,
        `Roll service-${i} back with the release tag r${i}-previous; the on-call of squad ${i} approves it.`,
        '',
        `## Alerts`,
        `Service-${i} pages #alerts-${i} when its error budget burn exceeds ${i + 10} percent in an hour.`,
      ].join('\n'),
    );
  }
  files['docs/.hidden.md'] = strToU8('# Hidden\nnot seeded');
  files['docs/logo.png'] = new Uint8Array([1, 2, 3]);
  return zipSync(files);
}

async function killAll() {
  for (const { child, exited } of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  }
}

async function stopAll() {
  await killAll();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
}

afterAll(async () => {
  await stopAll();
  await mongo?.stop();
});

const STORES = [
  { name: 'embedded', mongo: false },
  { name: 'mongodb', mongo: true },
].filter((s) => !s.mongo || shouldRunMongoSuite('seeding-durable (MongoDB)'));

describe.each(STORES)('durable seeding on the $name store', (store) => {
  beforeAll(async () => {
    await stopAll();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-seeding-'));
    [port] = await reservePorts(1);
    storeEnv = {};
    if (store.mongo) {
      mongo ??= await startMongoWireServer();
      storeEnv = { MONGODB_URL: mongo.url, MONGODB_DATABASE: `seeding_${Date.now()}` };
    }
  }, 90_000);

  it('finishes a docs folder across a SIGKILL of the brain working it, storing every item once', async () => {
    const first = await startBrain();
    const { seeding } = clients();
    const { run: started } = await seeding.startSeeding({
      organizationId: ORG,
      source: { case: 'upload', value: { filename: 'docs.zip', mediaType: 'application/zip', content: docsZip() } },
      keyPrefix: 'kb/',
    });
    const runId = started!.runId;
    const get = () => seeding.getSeedingRun({ organizationId: ORG, runId }).then((r) => r.run!);
    const mid = await until(get, (r) => (r.progress?.stored ?? 0) >= 5, wait('5 memories stored'));
    expect(mid.status).toBe(SeedingStatus.WRITING);
    expect(mid.progress!.total).toBe(120);
    first.kill('SIGKILL');
    await children[children.length - 1].exited;

    await startBrain();
    const after = clients();
    const done = await until(
      () => after.seeding.getSeedingRun({ organizationId: ORG, runId }).then((r) => r.run!),
      (r) => r.status === SeedingStatus.SUCCEEDED,
      wait('the seeding run to succeed'),
    );
    expect(done.attempt).toBeGreaterThanOrEqual(2);
    expect(done.progress).toMatchObject({ total: 120, pending: 0, unchanged: 0, duplicate: 0, failed: 0, skipped: 0 });
    // Stored; a few may be flagged as contradicting a look-alike runbook (written all the same).
    expect(done.progress!.stored + done.progress!.contradiction).toBe(120);
    const keys: string[] = [];
    let pageToken = '';
    do {
      const page = await after.seeding.listSeedingItems({ organizationId: ORG, runId, pageSize: 100, pageToken });
      keys.push(...page.items.map((i) => i.key));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(keys).toHaveLength(120);
    expect(new Set(keys).size).toBe(120);
    expect(keys).toContain('kb/docs/runbooks/service-7/rollback');
    // Every memory exists once, at version 1: nothing was written twice.
    for (let i = 0; i < keys.length; i += 100) {
      const res = await after.brain.getMemories({ organizationId: ORG, namespace: Namespace.KNOWLEDGE, keys: keys.slice(i, i + 100) });
      expect(res.missingKeys).toEqual([]);
      for (const m of res.memories) expect(m.version).toBe(1n);
    }
    const item = (await after.seeding.listSeedingItems({ organizationId: ORG, runId, pageSize: 2 })).items[1];
    expect(item).toMatchObject({ title: 'Rollback', origin: 'docs/runbooks/service-0.md#rollback' });
  }, 240_000);

  it('lets go of its run when told to stop (SIGTERM), and the next brain finishes it', async () => {
    const org = 'org_seedgraceful1';
    await killAll(); // the previous test's brain holds the store
    const first = await startBrain();
    const { seeding } = clients();
    const { run: started } = await seeding.startSeeding({
      organizationId: org,
      source: { case: 'upload', value: { filename: 'docs.zip', mediaType: 'application/zip', content: docsZip() } },
    });
    const runId = started!.runId;
    await until(
      () => seeding.getSeedingRun({ organizationId: org, runId }).then((r) => r.run!),
      (r) => (r.progress?.stored ?? 0) + (r.progress?.contradiction ?? 0) >= 5,
      wait('5 memories written'),
    );
    first.kill('SIGTERM');
    expect(await children[children.length - 1].exited).toBe(0);
    // Read the run as the stopped brain left it: no lease, due at once.
    const records = await createRecordStore({
      dataDir,
      mongodbUrl: storeEnv.MONGODB_URL,
      mongodbDatabase: storeEnv.MONGODB_DATABASE ?? 'mindgate',
    });
    const left = await records.collection('seeding_runs').get(`${org}/${runId}`);
    await records.close();
    expect(left).toMatchObject({ status: 'writing', leaseId: '', dueAt: expect.any(Number) });

    await startBrain();
    const done = await until(
      () =>
        clients()
          .seeding.getSeedingRun({ organizationId: org, runId })
          .then((r) => r.run!),
      (r) => r.status === SeedingStatus.SUCCEEDED,
      wait('the seeding run to succeed'),
    );
    expect(done.attempt).toBe(2);
    expect(done.progress).toMatchObject({ total: 120, pending: 0, unchanged: 0, duplicate: 0, failed: 0, skipped: 0 });
    expect(done.progress!.stored + done.progress!.contradiction).toBe(120);
  }, 240_000);
});
