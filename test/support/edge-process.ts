// A whole edge (`node edge/main.ts`, as `npm start` runs it) in its own process: a second replica
// beside a test's in-process platform, sharing its MongoDB, key-encryption key and secrets, or
// reaching the platform's own services over gRPC (`platformServicesEnv`). Its listeners bind port 0
// and their URLs are read from its start lines; a test of durable work kills it (`kill`, SIGKILL)
// in the middle of that work and starts another.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { inheritedEnv } from './child-env.ts';
import type { TestPlatform } from './platform.ts';

const root = path.resolve(import.meta.dirname, '../..');

export interface EdgeProcess {
  child: ChildProcess;
  /** Local URL of each listener. */
  urls: Record<'gateway' | 'api' | 'web' | 'auth', string>;
  /** Every JSON log line so far. */
  logs: Record<string, unknown>[];
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** Ends it with SIGTERM (drained) unless it has already exited, and removes its data directory. */
  stop(): Promise<void>;
  /** Ends it with SIGKILL, as a crash would, unless it has already exited, and removes its data directory. */
  kill(): Promise<void>;
}

export interface EdgeProcessOptions {
  /** Log messages to wait for besides the listeners' (a worker's "… started"), before it counts as started. */
  readyWhen?: string[];
}

/** What points an edge at a test platform's services (over gRPC) instead of starting its own. */
export function platformServicesEnv(platform: Pick<TestPlatform, 'grpc'>, internalToken: string): Record<string, string> {
  const { grpc } = platform;
  return {
    INTERNAL_TOKEN: internalToken,
    AGENTS_SERVICE_ADDR: grpc.agents!,
    BRAIN_SERVICE_ADDR: grpc.brain!,
    ENTITY_GRAPH_SERVICE_ADDR: grpc['entity-graph']!,
    BILLING_SERVICE_ADDR: grpc.billing!,
  };
}

/** Edge replicas a durable-work test starts one after another (killing some), all ended at its end. */
export interface EdgeReplicas {
  /** Every replica started, in order. */
  all: EdgeProcess[];
  /** Starts one more, with the environment and options the set was made with. */
  start(): Promise<EdgeProcess>;
  /** Kills (SIGKILL) every replica still running. */
  killAll(): Promise<void>;
  /** The last log lines of all of them, oldest first: to tell why an awaited state did not come. */
  lastLogLines(count?: number): string;
}

/** `env` is read at each start, so it may name what exists only once the test has started it. */
export function edgeReplicas(env: () => Record<string, string>, options: EdgeProcessOptions = {}): EdgeReplicas {
  const all: EdgeProcess[] = [];
  return {
    all,
    async start() {
      const replica = await startEdgeProcess(env(), options);
      all.push(replica);
      return replica;
    },
    async killAll() {
      for (const replica of all) await replica.kill();
    },
    lastLogLines: (count = 30) =>
      all
        .flatMap((replica) => replica.logs)
        .slice(-count)
        .map((entry) => JSON.stringify(entry))
        .join('\n'),
  };
}

export async function startEdgeProcess(env: Record<string, string>, options: EdgeProcessOptions = {}): Promise<EdgeProcess> {
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
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      await exited;
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  const waiting = new Set(options.readyWhen);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the edge did not start: ${stderr}`)), 120_000);
      readline.createInterface({ input: child.stdout! }).on('line', (line) => {
        if (!line.startsWith('{')) return;
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (typeof entry.listener === 'string' && typeof entry.url === 'string')
          urls[entry.listener as keyof EdgeProcess['urls']] = entry.url;
        if (typeof entry.msg === 'string') waiting.delete(entry.msg);
        if (Object.keys(urls).length === 4 && waiting.size === 0) {
          clearTimeout(timer);
          resolve();
        }
      });
      exited.then((code) => reject(new Error(`the edge exited with ${code}: ${stderr}`)));
    });
  } catch (err) {
    await end('SIGKILL');
    throw err;
  }
  return { child, urls, logs, exited, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}
