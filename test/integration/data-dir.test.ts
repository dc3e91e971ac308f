// DATA_DIR is private to the service user: the folder 0700, every file in it 0600, whatever the
// umask of the shell that started the platform; an existing folder with looser modes is repaired
// at start and each change is logged.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../services/common/log.ts';
import { openStores } from '../../services/common/stores.ts';
import { readStorageConfig } from '../../services/common/config.ts';
import { startTestPlatform, testEnv } from '../support/platform.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-modes-'));
  dirs.push(parent);
  // A folder that does not exist yet, as DATA_DIR is on a first start.
  return path.join(parent, 'data');
}

/** Mode bits of the folder and of every file below it, by path relative to the folder. */
function modes(dir: string): Record<string, string> {
  const out: Record<string, string> = { '.': (fs.statSync(dir).mode & 0o777).toString(8) };
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    out[path.relative(dir, full)] = (fs.statSync(full).mode & 0o777).toString(8);
  }
  return out;
}

function expectPrivate(dir: string, expected: string[]) {
  const found = modes(dir);
  for (const name of expected) expect(Object.keys(found)).toContain(name);
  for (const [name, mode] of Object.entries(found)) {
    const isDir = name === '.' || fs.statSync(path.join(dir, name)).isDirectory();
    expect({ name, mode }).toEqual({ name, mode: isDir ? '700' : '600' });
  }
}

describe('DATA_DIR file modes', () => {
  it('a first `node edge/main.ts` under umask 022 leaves the folder 0700 and every file 0600', async () => {
    const dataDir = freshDir();
    const child = spawn('/bin/sh', ['-c', 'umask 022 && exec "$0" edge/main.ts', process.execPath], {
      cwd: root,
      env: { PATH: process.env.PATH, ...testEnv(dataDir), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const urls: Record<string, string> = {};
    const lines = readline.createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`platform did not start: ${stderr}`)), 60_000);
      child.on('exit', () => reject(new Error(`platform exited: ${stderr}`)));
      lines.on('line', (line) => {
        const entry = JSON.parse(line);
        if (entry.listener && entry.url) urls[entry.listener] = entry.url;
        if (Object.keys(urls).length === 4) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    // A write, so that the records store has its WAL and shared-memory files.
    const res = await fetch(`${urls.auth}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expectPrivate(dataDir, [
      'records.sqlite',
      'records.sqlite-wal',
      'records.sqlite-shm',
      'vectors.sqlite',
      'internal-token',
      'gateway-state-secret',
      'key-encryption-key',
    ]);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 90_000);

  it('startPlatform in a process whose umask is 022 leaves the same modes', async () => {
    const previous = process.umask(0o022);
    try {
      const platform = await startTestPlatform();
      try {
        expectPrivate(platform.dataDir, [
          'records.sqlite',
          'records.sqlite-wal',
          'records.sqlite-shm',
          'vectors.sqlite',
          'internal-token',
          'key-encryption-key',
        ]);
      } finally {
        await platform.stop();
      }
    } finally {
      process.umask(previous);
    }
  });

  it('repairs an existing folder of 0755 and files of 0644 at start, logging each change', async () => {
    const dataDir = freshDir();
    const config = readStorageConfig({ DATA_DIR: dataDir, EMBEDDINGS_THREADS: '1' }, 1);
    const quiet = createLogger({ level: 'silent' });
    const first = await openStores(config, { logger: quiet });
    await first.records.collection('c').put({ _id: 'a', v: 1 });
    await first.close();
    fs.writeFileSync(path.join(dataDir, 'internal-token'), `${'t'.repeat(43)}\n`);
    fs.chmodSync(dataDir, 0o755);
    for (const name of fs.readdirSync(dataDir)) fs.chmodSync(path.join(dataDir, name), 0o644);

    const logs: { level: number; msg: string; path?: string; from?: string; to?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logs.push(JSON.parse(line));
        done();
      },
    });
    const stores = await openStores(config, { logger: createLogger({ level: 'info' }, sink) });
    try {
      expectPrivate(dataDir, ['records.sqlite', 'vectors.sqlite', 'internal-token']);
      const changes = logs.filter((l) => l.path !== undefined);
      expect(changes.every((l) => l.level === 40)).toBe(true);
      const byPath = Object.fromEntries(changes.map((l) => [path.relative(dataDir, l.path!) || '.', `${l.from}->${l.to}`]));
      expect(byPath).toMatchObject({
        '.': '755->700',
        'records.sqlite': '644->600',
        'vectors.sqlite': '644->600',
        'internal-token': '644->600',
      });
      expect(await stores.records.collection('c').get('a')).toMatchObject({ v: 1 });
    } finally {
      await stores.close();
    }
  });
});
