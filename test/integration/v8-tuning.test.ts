// The V8 pretenuring switch is process-wide, so only the process entry point (edge/main.ts)
// decides it, once, from GATEWAY_V8_PRETENURING; building the platform's surfaces never touches
// it. Each case runs a real child process with a preload (test/support/v8-flags-probe.ts) that
// records every v8.setFlagsFromString call and reports V8's own flag hash at exit, compared with
// that of a process started with or without --no-allocation-site-pretenuring.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testEnv } from '../support/platform.ts';
import { PROBE_MARKER } from '../support/v8-flags-probe.ts';

interface Probe {
  calls: { flags: string; stack: string }[];
  tag: number;
}

const root = path.resolve(import.meta.dirname, '../..');
const PRELOAD = ['--import', './test/support/v8-flags-probe.ts'];
const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function readProbe(stderr: string): Probe {
  const line = stderr.split('\n').find((l) => l.startsWith(PROBE_MARKER));
  if (!line) throw new Error(`the child reported no V8 flags:\n${stderr}`);
  return JSON.parse(line.slice(PROBE_MARKER.length)) as Probe;
}

/** V8's flag hash in a process that sets nothing itself, started with `nodeFlags`. */
function referenceTag(nodeFlags: string[]): number {
  const result = spawnSync(process.execPath, [...nodeFlags, ...PRELOAD, '-e', ''], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
  });
  const probe = readProbe(result.stderr);
  expect(probe.calls).toEqual([]);
  return probe.tag;
}

/** Runs `npm start` (edge/main.ts) until its gateway listens, stops it with SIGTERM, and reads the probe. */
async function runEntryPoint(env: Record<string, string>): Promise<Probe> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-v8-'));
  dataDirs.push(dataDir);
  const child = spawn(process.execPath, [...PRELOAD, 'edge/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH, ...testEnv(dataDir), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the platform did not start:\n${stderr}`)), 60_000);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if ((JSON.parse(line) as { listener?: string }).listener === 'gateway') {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', () => reject(new Error(`the platform exited:\n${stderr}`)));
  });
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  return readProbe(stderr);
}

let pretenuringOn: number;
let pretenuringOff: number;

beforeAll(() => {
  pretenuringOn = referenceTag([]);
  pretenuringOff = referenceTag(['--no-allocation-site-pretenuring']);
  // Otherwise the tag could not tell the two apart and every case below would prove nothing.
  expect(pretenuringOff).not.toBe(pretenuringOn);
});

describe('the process entry point', () => {
  it('turns allocation-site pretenuring off by default, once, itself', async () => {
    const probe = await runEntryPoint({});
    expect(probe.tag).toBe(pretenuringOff);
    expect(probe.calls.map((c) => c.flags)).toEqual(['--no-allocation-site-pretenuring']);
    expect(probe.calls[0].stack).toContain(path.join(root, 'edge/main.ts'));
  }, 90_000);

  it('keeps it with GATEWAY_V8_PRETENURING=true', async () => {
    const probe = await runEntryPoint({ GATEWAY_V8_PRETENURING: 'true' });
    expect(probe.calls).toEqual([]);
    expect(probe.tag).toBe(pretenuringOn);
  }, 90_000);

  it('turns it off with GATEWAY_V8_PRETENURING=false', async () => {
    const probe = await runEntryPoint({ GATEWAY_V8_PRETENURING: 'false' });
    expect(probe.tag).toBe(pretenuringOff);
  }, 90_000);
});

it('never sets a V8 flag when the platform and its surfaces are built', () => {
  // test/support/v8-build-platform.ts starts and stops the whole platform with the default
  // configuration (pretenuring off), as a test or an embedding program does, without edge/main.ts.
  const result = spawnSync(process.execPath, [...PRELOAD, 'test/support/v8-build-platform.ts'], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
    timeout: 90_000,
  });
  expect(result.status, result.stderr).toBe(0);
  const probe = readProbe(result.stderr);
  expect(probe.calls).toEqual([]);
  expect(probe.tag).toBe(pretenuringOn);
}, 120_000);
