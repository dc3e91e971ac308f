// DATA_DIR is private to the service user: the folder 0700, every file in it 0600, whatever the
// umask of the shell that started the platform; an existing folder with looser modes is repaired
// at start, sub-folders at any depth included (symbolic links are not followed), and each change
// is logged.
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
import { inheritedEnv } from '../support/child-env.ts';

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
      env: { ...inheritedEnv(), ...testEnv(dataDir), LOG_LEVEL: 'info' },
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

  it('repairs sub-folders at any depth, without following symbolic links', async () => {
    const dataDir = freshDir();
    const config = readStorageConfig({ DATA_DIR: dataDir, EMBEDDINGS_THREADS: '1' }, 1);
    const quiet = createLogger({ level: 'silent' });
    await (await openStores(config, { logger: quiet })).close();
    // Folders and files an earlier version or an operator left behind, three levels down.
    const deep = path.join(dataDir, 'outbox', '2025', 'june');
    fs.mkdirSync(deep, { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'outbox', 'index.json'), '{}');
    fs.writeFileSync(path.join(deep, 'message.eml'), 'Subject: a secret link');
    for (const folder of ['outbox', 'outbox/2025', 'outbox/2025/june']) fs.chmodSync(path.join(dataDir, folder), 0o755);
    for (const file of ['outbox/index.json', 'outbox/2025/june/message.eml']) fs.chmodSync(path.join(dataDir, file), 0o644);
    // Links to a file and a folder outside DATA_DIR, one of them inside a sub-folder: their
    // targets belong to someone else's decision and must keep their modes.
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-modes-outside-'));
    dirs.push(outside);
    fs.mkdirSync(path.join(outside, 'shared'), { mode: 0o755 });
    fs.writeFileSync(path.join(outside, 'shared', 'public.txt'), 'public');
    fs.writeFileSync(path.join(outside, 'notes.txt'), 'public');
    fs.chmodSync(path.join(outside, 'shared'), 0o755);
    for (const file of ['shared/public.txt', 'notes.txt']) fs.chmodSync(path.join(outside, file), 0o644);
    fs.symlinkSync(path.join(outside, 'shared'), path.join(dataDir, 'outbox', 'shared-link'));
    fs.symlinkSync(path.join(outside, 'notes.txt'), path.join(deep, 'notes-link'));

    const logs: { path?: string; from?: string; to?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logs.push(JSON.parse(line));
        done();
      },
    });
    const stores = await openStores(config, { logger: createLogger({ level: 'info' }, sink) });
    await stores.close();

    const mode = (file: string) => (fs.lstatSync(file).mode & 0o777).toString(8);
    expect({
      outbox: mode(path.join(dataDir, 'outbox')),
      year: mode(path.join(dataDir, 'outbox', '2025')),
      month: mode(deep),
      index: mode(path.join(dataDir, 'outbox', 'index.json')),
      message: mode(path.join(deep, 'message.eml')),
    }).toEqual({ outbox: '700', year: '700', month: '700', index: '600', message: '600' });
    expect({
      folder: mode(path.join(outside, 'shared')),
      inFolder: mode(path.join(outside, 'shared', 'public.txt')),
      file: mode(path.join(outside, 'notes.txt')),
    }).toEqual({ folder: '755', inFolder: '644', file: '644' });
    expect(fs.lstatSync(path.join(deep, 'notes-link')).isSymbolicLink()).toBe(true);
    const byPath = Object.fromEntries(logs.filter((l) => l.path).map((l) => [path.relative(dataDir, l.path!), `${l.from}->${l.to}`]));
    expect(byPath).toEqual({
      outbox: '755->700',
      'outbox/2025': '755->700',
      'outbox/2025/june': '755->700',
      'outbox/index.json': '644->600',
      'outbox/2025/june/message.eml': '644->600',
    });
  });
});
