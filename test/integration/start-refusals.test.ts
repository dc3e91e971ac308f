// Every start failure an operator can meet is one line on standard error naming the file, port or
// setting, and a documented exit code (docs/operations.md, "Exit codes"): 2 when something must
// be changed first, 3 when a store did not answer in time. Never a stack trace.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.ts';
import { testEnv } from '../support/platform.ts';
import { inheritedEnv } from '../support/child-env.ts';

const root = path.resolve(import.meta.dirname, '../..');
const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-refusals-'));
afterAll(() => fs.rmSync(temp, { recursive: true, force: true }));

let n = 0;
function dir(): string {
  const made = path.join(temp, `case-${++n}`);
  fs.mkdirSync(made, { mode: 0o700 });
  return made;
}

interface Run {
  status: number | null;
  stderr: string;
  stdout: string;
}

function run(entry: string, env: Record<string, string>, options: { uid?: number; gid?: number } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [entry], { cwd: root, env: { ...inheritedEnv(), ...env }, ...options });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.once('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

const edge = (env: Record<string, string>, options?: { uid?: number; gid?: number }) => run('edge/main.ts', env, options);

/** One line `start refused: ...` containing every fragment, the given exit code, no stack. */
function expectRefused(result: Run, code: number, ...fragments: string[]) {
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^start refused: /);
  for (const fragment of fragments) expect(lines[0]).toContain(fragment);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.status).toBe(code);
}

/** A listening socket on a free loopback port, as another program holding the port. */
async function occupiedPort(): Promise<{ port: number; release: () => void }> {
  const port = await freePort();
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, release: () => server.close() };
}

describe('the data directory', () => {
  it('DATA_DIR that is a file', async () => {
    const file = path.join(dir(), 'data');
    fs.writeFileSync(file, 'not a folder');
    expectRefused(await edge(testEnv(file)), 2, `DATA_DIR: ${file} is not a directory`);
  }, 120_000);

  it('DATA_DIR under a file', async () => {
    const file = path.join(dir(), 'file');
    fs.writeFileSync(file, '');
    const data = path.join(file, 'data');
    expectRefused(await edge(testEnv(data)), 2, `DATA_DIR: ${data} is not a directory`);
  }, 120_000);

  it('DATA_DIR not writable by the user the process runs as', async () => {
    // Root writes anywhere, so the platform runs as `nobody` here; otherwise the folder is made read-only.
    const parent = dir();
    const data = path.join(parent, 'data');
    fs.mkdirSync(data, { mode: 0o700 });
    const asRoot = process.getuid?.() === 0;
    if (asRoot) for (const reachable of [temp, parent]) fs.chmodSync(reachable, 0o755);
    else fs.chmodSync(data, 0o500);
    const result = await edge(testEnv(data), asRoot ? { uid: 65534, gid: 65534 } : {});
    fs.chmodSync(data, 0o700);
    expectRefused(result, 2, `DATA_DIR: ${data} is not writable by this process`, 'EACCES');
  }, 120_000);
});

describe('damaged database files', () => {
  it('a records.sqlite that is not a database', async () => {
    const data = dir();
    fs.writeFileSync(path.join(data, 'records.sqlite'), Buffer.alloc(8192, 'x'), { mode: 0o600 });
    expectRefused(
      await edge(testEnv(data)),
      2,
      `${path.join(data, 'records.sqlite')}: is not a SQLite database`,
      'restore it from a backup',
    );
  }, 120_000);

  it('a records.sqlite with a damaged page fails the quick check', async () => {
    const data = dir();
    const file = path.join(data, 'records.sqlite');
    const db = new DatabaseSync(file);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t (v)');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    db.exec('BEGIN');
    for (let i = 0; i < 2000; i++) insert.run(`value ${i} `.repeat(8));
    db.exec('COMMIT');
    db.close();
    // Scribble over the middle of the file: pages of the table and its index, not the header.
    const fd = fs.openSync(file, 'r+');
    const size = fs.fstatSync(fd).size;
    fs.writeSync(fd, Buffer.alloc(16_384, 0xa5), 0, 16_384, Math.floor(size / 2 / 4096) * 4096);
    fs.closeSync(fd);
    const result = await edge(testEnv(data));
    expectRefused(result, 2, `${file}:`, 'restore it from a backup');
    expect(result.stderr).toMatch(/fails its integrity check/);
  }, 120_000);

  it('a vectors.sqlite that is not a database', async () => {
    const data = dir();
    fs.writeFileSync(path.join(data, 'vectors.sqlite'), Buffer.alloc(8192, 'y'), { mode: 0o600 });
    expectRefused(await edge(testEnv(data)), 2, `${path.join(data, 'vectors.sqlite')}: is not a SQLite database`);
  }, 120_000);
});

describe('ports in use', () => {
  it('a public listener port names the port and its setting', async () => {
    const taken = await occupiedPort();
    try {
      expectRefused(
        await edge(testEnv(dir(), { GATEWAY_PORT: String(taken.port) })),
        2,
        `GATEWAY_PORT: port ${taken.port} on 127.0.0.1 is already in use`,
      );
    } finally {
      taken.release();
    }
  }, 120_000);

  it('a gRPC port names the port and its setting, in the platform and in a service of its own', async () => {
    const taken = await occupiedPort();
    try {
      expectRefused(await edge(testEnv(dir(), { BRAIN_GRPC_PORT: String(taken.port) })), 2, `BRAIN_GRPC_PORT: port ${taken.port}`);
      const alone = await run('services/brain/main.ts', { DATA_DIR: dir(), BRAIN_GRPC_PORT: String(taken.port), EMBEDDINGS_THREADS: '1' });
      expectRefused(alone, 2, `BRAIN_GRPC_PORT: port ${taken.port} on 127.0.0.1 is already in use`);
    } finally {
      taken.release();
    }
  }, 180_000);
});

describe('secret files', () => {
  it('a short internal-token file stops a service run alone', async () => {
    const data = dir();
    fs.writeFileSync(path.join(data, 'internal-token'), 'short\n', { mode: 0o600 });
    const result = await run('services/brain/main.ts', { DATA_DIR: data, BRAIN_GRPC_PORT: '0', EMBEDDINGS_THREADS: '1' });
    expectRefused(result, 2, `${path.join(data, 'internal-token')}: must hold a secret of at least 32 characters`);
    expect(result.stderr).not.toContain('short');
  }, 120_000);

  it('an empty gateway-state-secret file stops the platform', async () => {
    const data = dir();
    fs.writeFileSync(path.join(data, 'gateway-state-secret'), '', { mode: 0o600 });
    expectRefused(await edge(testEnv(data)), 2, `${path.join(data, 'gateway-state-secret')}: must hold a secret of at least 32 characters`);
  }, 120_000);
});

describe('stores that do not answer', () => {
  const wait = { STORE_START_TIMEOUT_MS: '1500', MONGODB_SERVER_SELECTION_TIMEOUT_MS: '200', LOG_LEVEL: 'warn' };

  it('an unreachable MONGODB_URL is retried, then refused with exit code 3 and no credential', async () => {
    const port = await freePort();
    const url = `mongodb://mindgate:hunter2-password@127.0.0.1:${port}/?directConnection=true`;
    const result = await edge(testEnv(dir(), { ...wait, MONGODB_URL: url }));
    expectRefused(result, 3, 'MONGODB_URL: MongoDB at 127.0.0.1:', 'STORE_START_TIMEOUT_MS');
    const retries = result.stdout
      .trim()
      .split('\n')
      .filter((line) => line.includes('retrying'));
    expect(retries.length).toBeGreaterThan(0);
    expect(result.stderr + result.stdout).not.toContain('hunter2-password');
  }, 120_000);

  it('an unreachable QDRANT_URL is retried, then refused with exit code 3', async () => {
    const port = await freePort();
    const result = await edge(testEnv(dir(), { ...wait, QDRANT_URL: `http://127.0.0.1:${port}` }));
    expectRefused(result, 3, `QDRANT_URL: Qdrant at http://127.0.0.1:${port}`, 'STORE_START_TIMEOUT_MS');
  }, 120_000);
});
