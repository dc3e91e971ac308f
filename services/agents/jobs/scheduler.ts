// The scheduler, in every replica of the agents service: every JOBS_POLL_MS it reads the jobs
// whose next occurrence is due (the index on nextFireAt) and fires each (firing.ts decides which
// replica does). Time comes from the service's clock, so tests move it instead of waiting.
import type { Logger } from '../../common/log.ts';
import type { JobsContext } from './context.ts';
import { fireDue } from './firing.ts';

const BATCH = 100;

export interface Scheduler {
  /** One pass over the due jobs; resolves when each was fired or left to another replica. */
  pass(): Promise<number>;
  stop(): Promise<void>;
}

export function createScheduler(ctx: JobsContext, logger: Logger): Scheduler {
  const state = { stopped: false, timer: undefined as NodeJS.Timeout | undefined, wake: undefined as (() => void) | undefined };

  async function pass(): Promise<number> {
    const due = await ctx.jobs.find({ nextFireAt: { $lte: ctx.now() } }, { sort: { field: 'nextFireAt', direction: 'asc' }, limit: BATCH });
    for (const job of due) {
      if (state.stopped) break;
      await fireDue(ctx, job).catch((err: unknown) =>
        logger.warn({ err, job: job._id }, 'job occurrence not fired; tried again at the next pass'),
      );
    }
    return due.length;
  }

  const loop = (async () => {
    while (!state.stopped) {
      await pass().catch((err: unknown) => logger.warn({ err }, 'job scheduler pass failed; retried'));
      if (state.stopped) break;
      await new Promise<void>((resolve) => {
        state.timer = setTimeout(resolve, ctx.config.pollMs);
        state.wake = resolve;
      });
    }
  })();

  return {
    pass,
    async stop() {
      state.stopped = true;
      clearTimeout(state.timer);
      state.wake?.();
      await loop;
    },
  };
}
