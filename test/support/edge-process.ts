// A whole edge (`node edge/main.ts`, as `npm start` runs it) in its own process: a second replica
// beside a test's in-process platform, sharing its MongoDB, key-encryption key and secrets. Its
// listeners bind port 0 and their URLs are read from its start lines.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { inheritedEnv } from './child-env.ts';

const root = path.resolve(import.meta.dirname, '../..');

export interface EdgeProcess {
  child: ChildProcess;
  /** Local URL of each listener. */
  urls: Record<'gateway' | 'api' | 'web' | 'auth', string>;
  /** Every JSON log line so far. */
  logs: Record<string, unknown>[];
  stop(): Promise<void>;
}

export async function startEdgeProcess(env: Record<string, string>): Promise<EdgeProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-replica-'));
  const child = spawn(process.execPath, ['edge/main.ts'], {
    cwd: root,
    env: {
      ...inheritedEnv(),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      EMBEDDINGS_THREADS: '1',
      GATEWAY_PORT: '0',
      API_PORT: '0',
      WEB_PORT: '0',
      AUTH_PORT: '0',
      BRAIN_GRPC_PORT: '0',
      ENTITY_GRAPH_GRPC_PORT: '0',
      AGENTS_GRPC_PORT: '0',
      BILLING_GRPC_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logs: Record<string, unknown>[] = [];
  const urls = {} as EdgeProcess['urls'];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the edge did not start: ${stderr}`)), 120_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (typeof entry.listener === 'string' && typeof entry.url === 'string')
        urls[entry.listener as keyof EdgeProcess['urls']] = entry.url;
      if (Object.keys(urls).length === 4) {
        clearTimeout(timer);
        resolve();
      }
    });
    exited.then((code) => reject(new Error(`the edge exited with ${code}: ${stderr}`)));
  });
  return {
    child,
    urls,
    logs,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
