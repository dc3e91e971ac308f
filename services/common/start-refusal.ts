// Why a process refused to start, as one line and an exit code an operator (or a supervisor) can
// act on. The codes are documented in docs/operations.md ("Exit codes"); never change one.

export const EXIT_CODES = {
  /** Stopped on a signal after draining. */
  stopped: 0,
  /** An unexpected failure (a bug), or a shutdown that failed or was forced by a second signal. */
  unexpected: 1,
  /**
   * Refused: something the operator must change before a new start can succeed (a setting, a
   * secret file, the data directory, a damaged database file, a port in use, a held lock).
   */
  refused: 2,
  /** A store or endpoint the process needs did not answer in time: a later start may succeed. */
  unreachable: 3,
} as const;

/** A start refused for a reason named in its one-line message (never a secret). */
export class StartRefusedError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT_CODES.refused, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StartRefusedError';
    this.exitCode = exitCode;
  }
}

/** The reason of a Node system error: `EACCES: permission denied` rather than a stack. */
export function systemReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (typeof e?.code === 'string') {
    const detail = typeof e.message === 'string' ? e.message.replace(/^.*?\b[A-Z]+: /, '').replace(/, \w+ '.*'$/, '') : '';
    return detail ? `${e.code}: ${detail}` : e.code;
  }
  return err instanceof Error ? err.message : String(err);
}
