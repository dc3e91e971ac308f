// The Brain as a process of its own, as the Helm chart runs it, for brain-mcp.bench.ts with
// BRAIN_PROCESS=separate: the edge reaches it over gRPC at a fixed port. Seeding stops it, writes
// its stores directly (the vector file admits one process) and starts it again on the same port.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBrainContext } from '../../services/brain/context.ts';
import { readStorageConfig } from '../../services/common/config.ts';
import { createLogger } from '../../services/common/log.ts';
import { openStores } from '../../services/common/stores.ts';
import { reservePorts } from '../support/ports.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { inheritedEnv } from '../support/child-env.ts';
import type { Seeder } from './brain-seed.ts';

const INTERNAL_TOKEN = 'brain-benchmark-internal-token-of-32-characters';
const silent = createLogger({ level: 'silent' });

export class SeparateBrain {
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-bench-brain-'));
  private child?: ChildProcess;
  private readonly port: number;
  private readonly settings: Record<string, string>;

  private constructor(port: number, settings: Record<string, string>) {
    this.port = port;
    this.settings = settings;
    // A benchmark that fails leaves no brain behind.
    process.once('exit', () => this.child?.kill('SIGKILL'));
  }

  /** A brain process with `settings` (EMBEDDINGS_THREADS, BRAIN_INDEX_MEMORY_MB...), started. */
  static async start(settings: Record<string, string>): Promise<SeparateBrain> {
    const [port] = await reservePorts(1);
    const brain = new SeparateBrain(port!, settings);
    await brain.restart();
    return brain;
  }

  /** What the platform needs to call it. */
  get platformEnv(): Record<string, string> {
    return { BRAIN_SERVICE_ADDR: `127.0.0.1:${this.port}`, INTERNAL_TOKEN };
  }

  /**
   * Starts `node services/brain/main.ts` at warn, as the benchmark's platform logs (no line per
   * call), and waits for its port: at warn it does not log the address it listens on.
   */
  private async restart(): Promise<void> {
    const env = { ...inheritedEnv(), ...this.settings, DATA_DIR: this.dir, BRAIN_GRPC_PORT: String(this.port), INTERNAL_TOKEN };
    const root = path.resolve(import.meta.dirname, '../..');
    this.child = spawn(process.execPath, ['services/brain/main.ts'], { cwd: root, env: { ...env, LOG_LEVEL: 'warn' }, stdio: 'inherit' });
    for (const started = Date.now(); !(await accepts(this.port)); ) {
      if (this.child.exitCode !== null) throw new Error(`the brain exited with ${this.child.exitCode}`);
      if (Date.now() - started > 120_000) throw new Error('the brain did not listen within two minutes');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Seeds memories [from, to) of `organizationId` into the stopped brain's stores, then starts it again. */
  async seed(seeder: Seeder, from: number, to: number): Promise<void> {
    await this.halt();
    const config = readStorageConfig({ ...this.settings, DATA_DIR: this.dir }, os.cpus().length);
    const stores = await openStores(config, { logger: silent });
    try {
      await seeder.seed(from, to, undefined, createBrainContext(stores, silent));
    } finally {
      await stores.close();
    }
    await this.restart();
  }

  /** CPU time the brain process has used, in ms (/proc). */
  cpuMs(): number {
    const stat = fs.readFileSync(`/proc/${this.child!.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  }

  /** Waits until the brain has been idle for two seconds (its approximate index built). */
  async settled(): Promise<void> {
    let quiet = 0;
    for (let last = this.cpuMs(); quiet < 2; ) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const now = this.cpuMs();
      quiet = now - last < 50 ? quiet + 1 : 0;
      last = now;
    }
  }

  private async halt(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  async stop(): Promise<void> {
    await this.halt();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
