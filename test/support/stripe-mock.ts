// Stripe's official mock server (stripe-mock, installed by scripts/install-test-tools.sh with
// `go install`), started on a free port for a test file. It answers the whole Stripe API with
// fixtures and validates every request against Stripe's OpenAPI document; it keeps no state, so
// tests drive state changes with signed webhook payloads. Its log (each request's method, path and
// form data) is kept, so tests can check what the platform asked of Stripe.
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { findTool } from './platform.ts';

export interface StripeMock {
  url: string;
  /** Every line stripe-mock printed, oldest first. */
  log: string[];
  stop(): Promise<void>;
}

/** The stripe-mock binary, or undefined (its tests skip with a notice) when not installed; under CI=true that fails. */
export function findStripeMock(): string | undefined {
  return findTool('stripe-mock', [path.join(os.homedir(), 'go/bin/stripe-mock')]);
}

/** Starts stripe-mock on a free port. */
export async function startStripeMock(binary: string): Promise<StripeMock> {
  const child: ChildProcess = spawn(binary, ['-http-port', '0', '-https-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`stripe-mock did not start:\n${log.join('\n')}`)), 30_000);
    for (const stream of [child.stdout!, child.stderr!]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        log.push(line);
        const match = /^Listening for HTTP at address: .*:(\d+)$/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
    }
    child.once('exit', (code) => reject(new Error(`stripe-mock exited with ${code}:\n${log.join('\n')}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
