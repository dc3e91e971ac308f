// `npm start` exactly as a user runs it: npm, then the shell npm runs the script with, then node.
// Stopping the process the user started (SIGTERM to npm, as a service manager or `kill` does) or
// the whole terminal's process group (Ctrl-C) must stop the platform, leaving no process behind.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import pkg from '../../package.json' with { type: 'json' };
import { testEnv } from '../support/platform.ts';

const root = path.resolve(import.meta.dirname, '../..');
const started: { child: ChildProcess; dataDir: string }[] = [];

afterEach(() => {
  for (const { child, dataDir } of started.splice(0)) {
    // A failed test must not leave a platform running: end the group it started in.
    if (groupAlive(child.pid!)) process.kill(-child.pid!, 'SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

/** Whether any process is left in the process group `npm start` was started in. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function groupGone(pgid: number): Promise<boolean> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (!groupAlive(pgid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** `npm start` in a process group of its own (like a terminal's job), logging what node says. */
async function npmStart() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-npm-start-'));
  const child = spawn('npm', ['start'], {
    cwd: root,
    detached: true,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...testEnv(dataDir), LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '2000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push({ child, dataDir });
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const gateway = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`platform did not start: ${stderr}`)), 60_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      if (!line.startsWith('{')) return; // npm's own "> mindgate start" banner
      const entry = JSON.parse(line);
      if (entry.listener === 'gateway' && entry.url) {
        clearTimeout(timer);
        resolve(entry.url);
      }
    });
    exited.then((code) => reject(new Error(`npm start exited with ${code}: ${stderr}`)));
  });
  return { child, exited, gateway, lines, dataDir, stderr: () => stderr };
}

function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('npm start', () => {
  it('SIGTERM to the npm process stops node too: no process of the platform survives', async () => {
    const { child, exited, gateway, lines, dataDir } = await npmStart();
    // The start line names the version and the stores in use.
    const started = lines
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .find((entry) => / started: /.test(entry.msg));
    expect(started).toMatchObject({
      version: pkg.version,
      records: `SQLite ${path.join(dataDir, 'records.sqlite')}`,
      vectors: `embedded ${path.join(dataDir, 'vectors.sqlite')}`,
      embeddings: 'USE-lite, offline (1 worker thread)',
    });
    expect(started.msg).toBe(
      `mindgate ${pkg.version} started: records in SQLite ${path.join(dataDir, 'records.sqlite')}; ` +
        `vectors in embedded ${path.join(dataDir, 'vectors.sqlite')}; embeddings by USE-lite, offline (1 worker thread)`,
    );
    process.kill(child.pid!, 'SIGTERM');
    await exited;
    expect(await groupGone(child.pid!)).toBe(true);
    expect(await refused(gateway)).toBe(true);
    expect(lines.filter((line) => line.includes('SIGTERM received, draining'))).toHaveLength(1);
  }, 90_000);

  it('Ctrl-C (SIGINT to the whole process group) drains once and exits cleanly', async () => {
    const { child, exited, gateway, lines, stderr } = await npmStart();
    process.kill(-child.pid!, 'SIGINT');
    await exited; // npm ends itself with the signal it forwarded once its script has exited
    expect(await groupGone(child.pid!)).toBe(true);
    expect(await refused(gateway)).toBe(true);
    // The terminal signals node and npm forwards the same signal: one shutdown, not a forced exit.
    expect(lines.filter((line) => line.includes('SIGINT received, draining'))).toHaveLength(1);
    expect(lines.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
    expect(stderr()).not.toMatch(/shutdown failed|forced/);
  }, 90_000);
});
