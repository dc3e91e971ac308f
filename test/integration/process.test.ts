// The platform as a user starts it: `node edge/main.ts` (what `npm start` runs), configuration
// errors, health checks, and draining on SIGTERM.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { testEnv } from '../support/platform.ts';
import { inheritedEnv } from '../support/child-env.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-process-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

function startCommand(env: Record<string, string>) {
  return spawnSync(process.execPath, ['edge/main.ts'], {
    cwd: root,
    env: { ...inheritedEnv(), ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('configuration errors', () => {
  it.each([
    ['GATEWAY_PORT', 'abc'],
    ['API_PORT', '70000'],
    ['PUBLIC_AUTH_URL', 'ftp://example.com'],
    ['PUBLIC_WEB_URL', 'https://example.com/?q=1'],
    ['MONGODB_URL', 'http://localhost:27017'],
    ['QDRANT_URL', 'not a url'],
    ['LOG_LEVEL', 'loud'],
    ['INTERNAL_TOKEN', 'short'],
    ['BRAIN_SERVICE_ADDR', 'localhost'],
    ['EMBEDDINGS_PROVIDER', 'openai'],
    ['ACCESS_LOG', 'maybe'],
  ])('%s=%s stops the process with one line naming it and exit code 2', (name, value) => {
    const result = startCommand({ ...testEnv(dataDir), [name]: value });
    expect(result.status).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^configuration error: /);
    expect(lines[0]).toContain(name === 'EMBEDDINGS_PROVIDER' ? 'EMBEDDINGS_URL' : name);
    expect(result.stdout).toBe('');
  });

  it('never echoes a rejected secret', () => {
    const result = startCommand({ ...testEnv(dataDir), INTERNAL_TOKEN: 'sup3r-s3cret' });
    expect(result.status).toBe(2);
    expect(result.stderr).not.toContain('sup3r-s3cret');
  });
});

describe('npm start', () => {
  it('logs one line per listener, answers health checks and drains on SIGTERM', async () => {
    const child = spawn(process.execPath, ['edge/main.ts'], {
      cwd: root,
      env: { ...inheritedEnv(), ...testEnv(dataDir), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const urls: Record<string, string> = {};
    const grpc: Record<string, string> = {};
    const lines = readline.createInterface({ input: child.stdout! });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('platform did not start')), 60_000);
      lines.on('line', (line) => {
        const entry = JSON.parse(line);
        if (entry.listener && entry.url) urls[entry.listener] = entry.url;
        if (entry.service && entry.address && /listening/.test(entry.msg)) grpc[entry.service] = entry.address;
        if (Object.keys(urls).length === 4 && Object.keys(grpc).length === 4) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    expect(Object.keys(urls).sort()).toEqual(['api', 'auth', 'gateway', 'web']);
    expect(Object.keys(grpc).sort()).toEqual(['agents', 'billing', 'brain', 'entity-graph']);
    for (const address of Object.values(grpc)) expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    for (const url of Object.values(urls)) {
      const res = await fetch(`${url}/health`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(((await res.json()) as { status: string }).status).toBe('ok');
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(`${urls.gateway}/health`)).rejects.toThrow();
  }, 90_000);
});
