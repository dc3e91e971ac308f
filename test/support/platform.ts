// Starts the real platform in-process on port 0 with a fresh data directory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { readEdgeConfig } from '../../edge/config.ts';
import { startPlatform, type Platform } from '../../edge/platform.ts';
import { createLogger } from '../../services/common/log.ts';

export interface TestPlatform extends Platform {
  dataDir: string;
}

export function testEnv(dataDir: string, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    GATEWAY_PORT: '0',
    API_PORT: '0',
    WEB_PORT: '0',
    AUTH_PORT: '0',
    BRAIN_GRPC_PORT: '0',
    ENTITY_GRAPH_GRPC_PORT: '0',
    AGENTS_GRPC_PORT: '0',
    BILLING_GRPC_PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    EMBEDDINGS_THREADS: '1',
    ...overrides,
  };
}

export interface TestPlatformOptions {
  /** Collects every log line of the platform (at trace level) into this array. */
  logs?: string[];
  /** The platform's clock, for tests that move time (trial ends, billing periods). */
  now?: () => number;
}

export async function startTestPlatform(overrides: Record<string, string> = {}, options: TestPlatformOptions = {}): Promise<TestPlatform> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-test-'));
  const logs = options.logs;
  const config = readEdgeConfig(testEnv(dataDir, logs ? { ...overrides, LOG_LEVEL: 'trace' } : overrides), 2);
  const sink =
    logs &&
    new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
  const platform = await startPlatform({ config, logger: createLogger({ level: config.logLevel }, sink), now: options.now });
  return {
    ...platform,
    dataDir,
    async stop(graceMs = 1_000) {
      await platform.stop(graceMs);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Path of a test tool binary, or undefined; under CI=true a missing tool fails the suite. */
export function findTool(name: string, candidates: string[]): string | undefined {
  for (const candidate of candidates) {
    if (candidate && fs.existsSync(candidate)) return candidate;
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const full = path.join(dir, name);
    if (dir && fs.existsSync(full)) return full;
  }
  if (process.env.CI === 'true') {
    throw new Error(`${name} is required when CI=true (run scripts/install-test-tools.sh)`);
  }
  console.warn(`${name} not found: its tests are skipped (run scripts/install-test-tools.sh)`);
  return undefined;
}
