// A deployment runs each service as its own process; the edge reaches it over gRPC at the
// configured address, with the shared internal credential.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { inheritedEnv } from '../support/child-env.ts';

const root = path.resolve(import.meta.dirname, '../..');
const token = 'a-shared-internal-token-of-at-least-32-chars';
const brainDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-brain-'));
let brain: ChildProcess;
let brainAddress: string;
let platform: TestPlatform;

beforeAll(async () => {
  brain = spawn(process.execPath, ['services/brain/main.ts'], {
    cwd: root,
    env: {
      ...inheritedEnv(),
      DATA_DIR: brainDir,
      BRAIN_GRPC_PORT: '0',
      INTERNAL_TOKEN: token,
      EMBEDDINGS_THREADS: '1',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  brainAddress = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('brain did not start')), 60_000);
    readline.createInterface({ input: brain.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line);
      if (entry.address) {
        clearTimeout(timer);
        resolve(entry.address);
      }
    });
    brain.once('exit', (code) => reject(new Error(`brain exited with ${code}`)));
  });
  platform = await startTestPlatform({ BRAIN_SERVICE_ADDR: brainAddress, INTERNAL_TOKEN: token });
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  if (brain && brain.exitCode === null) {
    const exited = new Promise((resolve) => brain.once('exit', resolve));
    brain.kill('SIGTERM');
    await exited;
  }
  fs.rmSync(brainDir, { recursive: true, force: true });
});

describe('services in their own processes', () => {
  it('the edge stores and searches through a remote brain over gRPC', async () => {
    expect(platform.grpc.brain).toBeUndefined();
    const { brain: client } = platform.ctx.clients;
    await client.putMemory({
      organizationId: 'org-remote',
      namespace: Namespace.KNOWLEDGE,
      key: 'backup',
      title: 'Backups',
      content: 'Nightly backups are written to cold storage and kept for thirty days.',
    });
    const res = await client.searchMemories({
      organizationId: 'org-remote',
      namespace: Namespace.KNOWLEDGE,
      query: 'how long do we retain backups',
    });
    expect(res.results[0].memory?.key).toBe('backup');
    // The memory lives in the brain process's store, not the edge's.
    expect(fs.existsSync(path.join(brainDir, 'records.sqlite'))).toBe(true);
  });

  it('the remote service refuses a caller without the credential', async () => {
    const res = await fetch(`http://${brainAddress}/mindgate.brain.v1.BrainService/GetMemories`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ organizationId: 'org-remote', namespace: 'NAMESPACE_KNOWLEDGE', keys: ['backup'] }),
    });
    expect(res.status).toBe(401);
  });

  it('the service drains and exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => brain.once('exit', (code) => resolve(code)));
    brain.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
