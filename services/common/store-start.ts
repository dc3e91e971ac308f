// At start, a store that does not answer yet (MongoDB, Qdrant or the embeddings endpoint coming up
// beside the platform, or briefly unreachable) is waited for, with a warning per attempt, up to a
// deadline (STORE_START_TIMEOUT_MS); then the start is refused with one line and exit code 3, so a
// supervisor restarts it later. Failures that waiting cannot fix (a wrong password, a collection
// of another dimensionality) are refused at once.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from './log.ts';
import { EXIT_CODES, StartRefusedError } from './start-refusal.ts';
import { storeUnavailableIn } from './storage/unavailable.ts';

export interface WaitOptions {
  /** Epoch milliseconds after which a store that still does not answer refuses the start. */
  deadline: number;
  /** The setting naming the store (MONGODB_URL, QDRANT_URL, EMBEDDINGS_URL), named in the refusal. */
  setting: string;
  logger: Logger;
}

const FIRST_DELAY_MS = 250;
const LONGEST_DELAY_MS = 5_000;

/** Runs `attempt` until it succeeds, fails for a reason waiting cannot fix, or the deadline passes. */
export async function untilAnswered<T>(options: WaitOptions, attempt: () => Promise<T>): Promise<T> {
  let delay = FIRST_DELAY_MS;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (err) {
      if (err instanceof StartRefusedError) throw err;
      const unavailable = storeUnavailableIn(err);
      if (!unavailable) {
        throw new StartRefusedError(`${options.setting}: ${(err as Error).message ?? String(err)}`, EXIT_CODES.refused, { cause: err });
      }
      const left = options.deadline - Date.now();
      if (left <= 0) {
        throw new StartRefusedError(
          `${options.setting}: ${unavailable.message.replace(/^the (\w+) store is unavailable: /, '')} ` +
            `(still not answering after ${tries} attempt${tries === 1 ? '' : 's'}; STORE_START_TIMEOUT_MS)`,
          EXIT_CODES.unreachable,
          { cause: err },
        );
      }
      const wait = Math.min(delay, left);
      options.logger.warn(
        { store: unavailable.store, setting: options.setting, reason: unavailable.message, retryInMs: wait },
        `${unavailable.message}; retrying (start gives up in ${Math.ceil(left / 1000)} s)`,
      );
      await sleep(wait);
      delay = Math.min(delay * 2, LONGEST_DELAY_MS);
    }
  }
}
