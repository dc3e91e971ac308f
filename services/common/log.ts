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
  '*.authorization',
  '*.cookie',
  '*["set-cookie"]',
  '*["x-api-key"]',
  '*["x-gateway-key"]',
  '*["x-internal-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-gateway-key"]',
  'req.headers["x-internal-token"]',
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

export function createLogger(options: LogOptions, destination?: pino.DestinationStream): Logger {
  const config: LoggerOptions = {
    level: options.level,
    name: options.name,
    base: undefined,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(config, destination) : pino(config);
}
