// A service run as its own process (`node services/<name>/main.ts`), as a deployment runs it:
// started on a port (0 for any), with its log lines collected, called through the edge's own
// clients, and stopped or killed by tests.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { createServiceClients, type ServiceClients } from '../../edge/clients.ts';
import { createLogger } from '../../services/common/log.ts';
import { inheritedEnv } from './child-env.ts';

const root = path.resolve(import.meta.dirname, '../..');

export interface ServiceProcess {
  child: ChildProcess;
  /** host:port it listens on. */
  address: string;
  /** Every JSON log line so far. */
  logs: Record<string, unknown>[];
  exited: Promise<number | null>;
}

export async function startServiceProcess(
  service: 'brain' | 'entity-graph' | 'agents' | 'billing',
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [`services/${service}/main.ts`], {
    cwd: root,
    env: { ...inheritedEnv(), EMBEDDINGS_THREADS: '1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logs: Record<string, unknown>[] = [];
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${service} did not start: ${stderr}`)), 60_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (typeof entry.address === 'string') {
        clearTimeout(timer);
        resolve(entry.address);
      }
    });
    exited.then((code) => reject(new Error(`${service} exited with ${code}: ${stderr}`)));
  });
  return { child, address, logs, exited };
}

/** Ends the process: SIGTERM (drained) unless it has already exited. */
export async function stopServiceProcess(service: ServiceProcess | undefined): Promise<void> {
  if (!service || service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGTERM');
  await service.exited;
}

/** Ends the process with SIGKILL, as a crash would, unless it has already exited. */
export async function killServiceProcess(service: ServiceProcess | undefined): Promise<void> {
  if (!service) return;
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
  await service.exited;
}

/** The edge's clients of every service, all reaching the one process at `address`. */
export function serviceClientsAt(address: string, internalToken: string): ServiceClients {
  const target = { address };
  return createServiceClients({
    targets: { brain: target, 'entity-graph': target, agents: target, billing: target },
    internalToken,
    logger: createLogger({ level: 'silent', name: 'test' }),
  });
}
