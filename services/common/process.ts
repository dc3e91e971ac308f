import { ConfigError } from './config.ts';
import { KeyEncryptionError } from './key-encryption.ts';
import { SecretFileError } from './secret-file.ts';
import { VectorFileLockedError } from './storage/vectors/process-lock.ts';

/**
 * Runs `read` and, when it throws a ConfigError, prints one line naming the variable and exits
 * with status 2 (the convention for a usage error), never a stack trace.
 */
export function readConfigOrExit<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/**
 * Awaits `start` and, when it fails for a reason the operator must fix (a secret file that is
 * missing or short, stored secrets sealed under another key-encryption key, a bad setting, the
 * embedded vector file held by another process),
 * prints that reason in one line and exits with status 2, never a stack trace.
 */
export async function startOrExit<T>(start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    const refused = [ConfigError, SecretFileError, KeyEncryptionError, VectorFileLockedError].some((kind) => err instanceof kind);
    if (refused) {
      process.stderr.write(`start refused: ${(err as Error).message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/**
 * A signal this soon after the first is the same request delivered twice: Ctrl-C reaches node
 * from the terminal and again from npm, which forwards SIGINT and SIGTERM to the script it runs
 * (`npm start` execs node, so node is that script).
 */
const SAME_REQUEST_MS = 1_000;

/** Calls `stop` once on SIGTERM or SIGINT, then exits; a later second signal exits at once. */
export function onShutdown(stop: () => Promise<void>, log: (msg: string) => void): void {
  let firstAt: number | undefined;
  const handler = (signal: NodeJS.Signals) => {
    if (firstAt !== undefined) {
      if (performance.now() - firstAt < SAME_REQUEST_MS) return;
      process.stderr.write(`shutdown forced by a second ${signal}: in-flight requests were cut\n`);
      process.exit(1);
    }
    firstAt = performance.now();
    log(`${signal} received, draining`);
    stop().then(
      () => {
        log('stopped');
        process.exit(0);
      },
      (err) => {
        process.stderr.write(`shutdown failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
