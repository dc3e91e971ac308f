import { ConfigError } from './config.ts';
import { KeyEncryptionError } from './key-encryption.ts';
import { SecretFileError } from './secret-file.ts';
import type { Logger } from './log.ts';
import { EXIT_CODES, StartRefusedError } from './start-refusal.ts';
import { DatabaseFileError } from './storage/database-file.ts';
import type { StoresDescription } from './stores.ts';
import { VERSION } from './version.ts';
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
      process.exit(EXIT_CODES.refused);
    }
    throw err;
  }
}

/** Failures an operator must fix, raised by modules that know nothing of processes. */
const REFUSALS = [ConfigError, SecretFileError, KeyEncryptionError, VectorFileLockedError, DatabaseFileError];

/** The exit code for a failed start, when the failure is one an operator can act on. */
export function refusalExitCode(err: unknown): number | undefined {
  if (err instanceof StartRefusedError) return err.exitCode;
  return REFUSALS.some((kind) => err instanceof kind) ? EXIT_CODES.refused : undefined;
}

/**
 * Awaits `start` and, when it fails for a reason the operator must fix (a bad setting, a secret
 * file that is missing or short, the data directory, a damaged database file, a port in use,
 * stored secrets sealed under another key, a store that does not answer), prints that reason in
 * one line and exits with its documented code (start-refusal.ts), never a stack trace. Anything
 * else is a bug: one line on standard error, the stack in the log, exit code 1.
 */
export async function startOrExit<T>(start: () => Promise<T>, logger?: Logger): Promise<T> {
  try {
    return await start();
  } catch (err) {
    const code = refusalExitCode(err);
    if (code !== undefined) {
      process.stderr.write(`start refused: ${oneLine((err as Error).message)}\n`);
      process.exit(code);
    }
    logger?.fatal({ err }, 'start failed unexpectedly');
    process.stderr.write(`start failed unexpectedly: ${oneLine(err instanceof Error ? err.message : String(err))}\n`);
    if (!logger) process.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
    process.exit(EXIT_CODES.unexpected);
  }
}

function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ');
}

/**
 * A signal this soon after the first is the same request delivered twice: Ctrl-C reaches node
 * from the terminal and again from npm, which forwards SIGINT and SIGTERM to the script it runs
 * (`npm start` execs node, so node is that script).
 */
const SAME_REQUEST_MS = 1_000;

/** The start line: version and what the process stores in (never a credential). */
export function logStarted(logger: Logger, name: string, stores: StoresDescription): void {
  logger.info(
    { version: VERSION, ...stores },
    `${name} ${VERSION} started: records in ${stores.records}` +
      (stores.vectors ? `; vectors in ${stores.vectors}; embeddings by ${stores.embeddings}` : ''),
  );
}

/** Time allowed past the grace for closing the stores before the exit is forced. */
const CLOSE_MARGIN_MS = 5_000;

export interface ShutdownOptions {
  /** SHUTDOWN_GRACE_MS: `stop` drains for this long; past it (plus a margin) the exit is forced. */
  graceMs?: number;
}

/**
 * Calls `stop` once on SIGTERM or SIGINT, then exits; a later second signal exits at once, and so
 * does a stop still running a few seconds past the grace (a store that hangs on close).
 */
export function onShutdown(stop: () => Promise<void>, log: (msg: string) => void, options: ShutdownOptions = {}): void {
  let firstAt: number | undefined;
  const handler = (signal: NodeJS.Signals) => {
    if (firstAt !== undefined) {
      if (performance.now() - firstAt < SAME_REQUEST_MS) return;
      process.stderr.write(`shutdown forced by a second ${signal}: in-flight requests were cut\n`);
      process.exit(EXIT_CODES.unexpected);
    }
    firstAt = performance.now();
    log(`${signal} received, draining`);
    if (options.graceMs !== undefined) {
      setTimeout(() => {
        process.stderr.write(`shutdown did not finish within ${options.graceMs} ms plus ${CLOSE_MARGIN_MS} ms: exiting\n`);
        process.exit(EXIT_CODES.unexpected);
      }, options.graceMs + CLOSE_MARGIN_MS).unref();
    }
    stop().then(
      () => {
        log('stopped');
        process.exit(EXIT_CODES.stopped);
      },
      (err) => {
        process.stderr.write(`shutdown failed: ${String(err)}\n`);
        process.exit(EXIT_CODES.unexpected);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
