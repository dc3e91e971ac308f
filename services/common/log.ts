import fs from 'node:fs';
import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export interface LogOptions {
  level: string;
  /** Pretty output is not bundled; `json` is the only format, one object per line. */
  name?: string;
}

/** Paths whose values never reach a log line, wherever they appear in a bound object. */
export const REDACT_PATHS = [
  'authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-gateway-key',
  'x-internal-token',
  'brain-pass-token',
  '*.authorization',
  '*.cookie',
  '*["set-cookie"]',
  '*["x-api-key"]',
  '*["x-gateway-key"]',
  '*["x-internal-token"]',
  '*["brain-pass-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-gateway-key"]',
  'req.headers["x-internal-token"]',
  'req.headers["brain-pass-token"]',
  'res.headers["set-cookie"]',
  'password',
  'client_secret',
  'secret',
  'token',
  '*.password',
  '*.client_secret',
  '*.secret',
  '*.token',
];

let stampedAt = -1;
let stamp = '';
/**
 * pino's isoTime, formatted once per millisecond: lines of the same millisecond (a busy
 * gateway writes dozens) share the string, and Date#toISOString was a visible part of the
 * access log's cost.
 */
function isoTimeOncePerMillisecond(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

/**
 * Log lines written to `fd` once per event-loop turn: every line of a turn in one write(2),
 * instead of pino's default of one synchronous write per line. At proxy rates the gateway
 * writes an access line per request, and the syscall was a measurable part of its CPU per
 * request (test/bench/gateway.bench.ts). Lines keep their order, leave before the next turn
 * polls for I/O (so no later than with a synchronous write, for anyone reading them), and are
 * flushed at exit; a process killed with SIGKILL loses at most one turn's lines. A full pipe
 * (EAGAIN) is waited out, as pino's own destination does; a closed one drops the lines.
 */
export function createTurnBatchedDestination(fd = 1): pino.DestinationStream & { flush(): void } {
  let pending = '';
  let scheduled = false;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  function flush(): void {
    scheduled = false;
    if (pending === '') return;
    const data = Buffer.from(pending, 'utf8');
    pending = '';
    let offset = 0;
    while (offset < data.length) {
      try {
        offset += fs.writeSync(fd, data, offset);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return;
        Atomics.wait(pause, 0, 0, 1);
      }
    }
  }
  process.once('exit', flush);
  return {
    write(line: string) {
      pending += line;
      if (pending.length >= 256 * 1024) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

/**
 * Standard output, shared by every logger of the process: one buffer keeps the lines of all of
 * them in the order they were logged, and one exit handler flushes it.
 */
let stdout: ReturnType<typeof createTurnBatchedDestination> | undefined;

export function createLogger(options: LogOptions, destination?: pino.DestinationStream): Logger {
  const config: LoggerOptions = {
    level: options.level,
    name: options.name,
    base: undefined,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: isoTimeOncePerMillisecond,
  };
  return pino(config, destination ?? (stdout ??= createTurnBatchedDestination(1)));
}
