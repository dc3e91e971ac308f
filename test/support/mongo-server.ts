// A real MongoDB-wire server for the adapter tests: mongo-java-server (Maven Central), installed
// by scripts/install-test-tools.sh into ~/.cache/mindgate/mongo-wire-server and started here on
// a free loopback port. When MONGODB_URL is set, that server is used instead (e.g. a real
// mongod), and nothing is started.
//
// Under CI=true a missing server fails the suite; otherwise the suite may skip with a notice.

import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface MongoWireServer {
  /** A mongodb:// URL (directConnection for the started server). */
  url: string;
  /** True when MONGODB_URL pointed at a server this process did not start. */
  external: boolean;
  /** What is behind the URL, for test names and notices. */
  description: string;
  stop(): Promise<void>;
}

const MAIN_CLASS = 'MindgateMongoWireServer';
const START_TIMEOUT_MS = 60_000;

function installDir(): string {
  const cache = process.env.MINDGATE_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'mindgate');
  return path.join(cache, 'mongo-wire-server');
}

/** Whether a server can be had: MONGODB_URL is set, or the installed wrapper and java exist. */
export function mongoWireServerAvailability(): { available: true } | { available: false; reason: string } {
  if (process.env.MONGODB_URL) return { available: true };
  const dir = installDir();
  if (!fs.existsSync(path.join(dir, 'installed')) || !fs.existsSync(path.join(dir, 'classes', `${MAIN_CLASS}.class`))) {
    return { available: false, reason: `no MongoDB-wire server in ${dir} (run scripts/install-test-tools.sh)` };
  }
  const java = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (java.error || java.status !== 0) return { available: false, reason: 'java is not installed' };
  return { available: true };
}

/**
 * Decides whether a suite that needs the server runs: true when it can, false (after a printed
 * notice) when it cannot and CI is not 'true'. Under CI=true it returns true regardless, so
 * that the suite runs and fails in startMongoWireServer.
 */
export function shouldRunMongoSuite(suite: string): boolean {
  const availability = mongoWireServerAvailability();
  if (availability.available) return true;
  if (process.env.CI === 'true') return true;
  console.warn(`${suite}: skipped: ${availability.reason}`);
  return false;
}

/** `port` 0 takes any free port; a given one restarts a stopped server at its old address. */
export async function startMongoWireServer(port = 0): Promise<MongoWireServer> {
  const external = process.env.MONGODB_URL;
  if (external) {
    return { url: external, external: true, description: 'MONGODB_URL', stop: async () => undefined };
  }
  const availability = mongoWireServerAvailability();
  if (!availability.available) {
    throw new Error(`MongoDB-wire server unavailable: ${availability.reason}`);
  }
  const dir = installDir();
  const classpath = [path.join(dir, 'classes'), path.join(dir, 'lib', '*')].join(path.delimiter);
  const child = spawn(
    'java',
    ['-XX:+UseSerialGC', '-Xms64m', '-Xmx1g', '-XX:TieredStopAtLevel=1', '-cp', classpath, MAIN_CLASS, '127.0.0.1', String(port)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const bound = await waitForPort(child);
  let stopped: Promise<void> | undefined;
  return {
    url: `mongodb://127.0.0.1:${bound}/?directConnection=true`,
    external: false,
    description: 'mongo-java-server',
    stop() {
      stopped ??= stop(child);
      return stopped;
    },
  };
}

function waitForPort(child: ChildProcessWithoutNullStreams): Promise<number> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const fail = (message: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${message}${stderr ? `\n${stderr.slice(-2000)}` : ''}`));
    };
    const timer = setTimeout(() => fail('MongoDB-wire server did not start in time'), START_TIMEOUT_MS);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /LISTENING \S+:(\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        child.stdout.removeAllListeners('data');
        child.stdout.resume();
        resolve(Number(match[1]));
      }
    });
    child.once('error', (error) => fail(`cannot start java: ${error.message}`));
    child.once('exit', (code, signal) => fail(`MongoDB-wire server exited early (${signal ?? code})`));
  });
}

function stop(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    // The server exits when its standard input closes.
    child.stdin.end();
  });
}
