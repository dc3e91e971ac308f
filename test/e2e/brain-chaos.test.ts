// The Brain as its own process, on the embedded stores, treated roughly: killed with SIGKILL
// during writes, and its vector file write-locked by another connection during writes (a real
// failure of the real store: its writes wait out the busy timeout and fail). Afterwards every
// acknowledged memory must be findable by meaning, with no operator action, and the check
// command must find the stores consistent. Bounded: a few dozen writes, loopback only.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { syntheticMemory } from '../bench/support.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

const root = path.resolve(import.meta.dirname, '../..');
const token = 'a-shared-internal-token-of-at-least-32-chars';
const K = Namespace.KNOWLEDGE;
const ORG = 'org-chaos';
/** At most this many writes are attempted; the phases below are keyed to acknowledgements. */
const MAX_WRITES = 300;

interface Started {
  child: ChildProcess;
  address?: string;
  exit: Promise<{ code: number | null; stderr: string }>;
}

function startBrain(dataDir: string, port: number): Started {
  const child = spawn(process.execPath, ['services/brain/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      DATA_DIR: dataDir,
      BRAIN_GRPC_PORT: String(port),
      INTERNAL_TOKEN: token,
      EMBEDDINGS_THREADS: '1',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exit = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, stderr: stderr.trim() })),
  );
  return { child, exit };
}

async function listening(started: Started): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: started.child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line);
      if (entry.address) resolve(entry.address);
    });
    started.exit.then(({ code, stderr }) => reject(new Error(`brain exited with ${code}: ${stderr}`)));
  });
}

async function kill(started: Started, signal: NodeJS.Signals): Promise<void> {
  if (started.child.exitCode !== null || started.child.signalCode !== null) return;
  started.child.kill(signal);
  await started.exit;
}

/** Another connection holding the write lock on the brain's vector file. */
function lockVectorFile(dataDir: string): () => void {
  const blocker = new DatabaseSync(path.join(dataDir, 'vectors.sqlite'));
  blocker.exec('PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE');
  return () => {
    blocker.exec('COMMIT');
    blocker.close();
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean | Promise<boolean>, what: string, limitMs = 120_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await sleep(200);
  }
}

describe('two brain processes on one data directory', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-brain-two-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it("refuses the second with one line naming the first one's PID, and starts once the first is killed", async () => {
    const first = startBrain(dataDir, 0);
    await listening(first);
    const second = startBrain(dataDir, 0);
    const refused = await second.exit;
    expect(refused.code).toBe(2);
    expect(refused.stderr.split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain(`in use by process ${first.child.pid}`);
    expect(refused.stderr).toContain('MONGODB_URL and QDRANT_URL');
    // A holder killed with SIGKILL leaves its lock file behind: it is recognised as stale.
    await kill(first, 'SIGKILL');
    const third = startBrain(dataDir, 0);
    await listening(third);
    await kill(third, 'SIGTERM');
    expect((await third.exit).code).toBe(0);
  }, 120_000);
});

describe('chaos: the brain killed and its vector store failing during writes', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-brain-chaos-'));
  let brain: Started;
  let port: number;
  let platform: TestPlatform;

  beforeAll(async () => {
    brain = startBrain(dataDir, 0);
    const address = await listening(brain);
    port = Number(address.split(':').at(-1));
    platform = await startTestPlatform({ BRAIN_SERVICE_ADDR: address, INTERNAL_TOKEN: token });
  }, 120_000);

  afterAll(async () => {
    await platform?.stop();
    if (brain) await kill(brain, 'SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function restart(): Promise<void> {
    brain = startBrain(dataDir, port);
    await listening(brain);
  }

  it('every acknowledged memory is findable by meaning afterwards, and the stores are consistent', async () => {
    const client = platform.ctx.clients.brain;
    const acknowledged: string[] = [];
    let failed = 0;
    let next = 0;
    let stopped = false;
    // Two writers, as clients would: a failed write is not retried (its fate is the Brain's).
    const writer = async () => {
      while (!stopped && next < MAX_WRITES) {
        const memory = syntheticMemory(next++);
        try {
          await client.putMemory({ organizationId: ORG, namespace: K, allowDuplicate: true, ...memory });
          acknowledged.push(memory.key);
        } catch {
          failed += 1;
          await sleep(250);
        }
      }
    };
    const writers = Promise.all([writer(), writer()]);

    await until(() => acknowledged.length >= 4, '4 acknowledged writes');
    await kill(brain, 'SIGKILL');
    await restart();

    await until(() => acknowledged.length >= 10, '10 acknowledged writes');
    let unlock = lockVectorFile(dataDir);
    const failedBefore = failed;
    await until(() => failed > failedBefore, 'a write failing on the locked vector file');
    // Killed while a write waits on the lock: its record may be saved, its vector not.
    await kill(brain, 'SIGKILL');
    unlock();
    await restart();

    await until(() => acknowledged.length >= 16, '16 acknowledged writes');
    unlock = lockVectorFile(dataDir);
    const failedDuring = failed;
    await until(() => failed > failedDuring + 1, 'writes failing on the locked vector file');
    unlock();
    await until(() => acknowledged.length >= 20, '20 acknowledged writes');
    stopped = true;
    await writers;

    expect(acknowledged.length).toBeGreaterThanOrEqual(16);
    expect(failed).toBeGreaterThanOrEqual(3);
    const findable = async (key: string) => {
      const memory = syntheticMemory(Number(key.split('/')[1]));
      const res = await client.searchMemories({ organizationId: ORG, namespace: K, query: memory.content, limit: 50 });
      return (res.results.find((r) => r.memory?.key === key)?.scores?.semantic ?? 0) > 0;
    };
    // Every acknowledged memory, and every other one whose record a failed write did save.
    const saved: string[] = [];
    for (let from = 0; from < next; from += 100) {
      const keys = Array.from({ length: Math.min(100, next - from) }, (_, i) => syntheticMemory(from + i).key);
      saved.push(...(await client.getMemories({ organizationId: ORG, namespace: K, keys })).memories.map((m) => m.key));
    }
    expect(saved).toEqual(expect.arrayContaining(acknowledged));
    for (const key of saved) await until(() => findable(key), `${key} findable by meaning`);

    // Nothing is left inconsistent, by the check command, once the brain has stopped.
    await kill(brain, 'SIGTERM');
    const check = spawn(process.execPath, ['services/brain/check.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, DATA_DIR: dataDir, EMBEDDINGS_THREADS: '1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    check.stdout!.on('data', (chunk) => (out += chunk));
    const code = await new Promise((resolve) => check.once('exit', resolve));
    expect(JSON.parse(out)).toMatchObject({ recordsWithoutVectors: 0, staleVectors: 0, vectorsWithoutRecords: 0 });
    expect(code).toBe(0);
  }, 300_000);
});
