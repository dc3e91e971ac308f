// Waiting for a state a test is not told of (a run finished, an evaluation scored, a lease taken
// over): read until the value is done, or give up after a while with the last value read in the
// error. A test asserts on the value it gets, never on how long it took (the machine is shared).

export interface UntilOptions {
  /** What is awaited, named in the error when it does not come. */
  what?: string;
  /** How long to keep reading; 30 s unless told. */
  timeoutMs?: number;
  /** The pause between two reads; 100 ms unless told. */
  intervalMs?: number;
  /** More to show when it does not come: say, the last log lines of the process doing the work. */
  context?: () => string;
}

/** Reads until `done` holds of the value read, and returns that value. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, options: UntilOptions = {}): Promise<T> {
  const { what = 'the awaited state', timeoutMs = 30_000, intervalMs = 100 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      const context = options.context?.();
      throw new Error(`timed out waiting for ${what}; last read: ${shown(value)}${context ? `\n${context}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function shown(value: unknown): string {
  const text = JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(value);
  return text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text;
}
