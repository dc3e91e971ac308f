// Ends runs past their timeout that nothing touches: a queue no executor claims from, or a holder
// gone with its lease expired. Claims and the holder's calls end such runs too (run-leases.ts), but
// only when they come; this sweep makes `timed_out` (and its run.timed_out event) arrive within
// SWEEP_MS of the lease's or the deadline's end whatever the executors do. Every replica sweeps;
// each end is the run's compare-and-set (finish), so a run is timed out once, never twice.
import { setTimeout as sleep } from 'node:timers/promises';
import { RunStatus } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import type { Logger } from '../../common/log.ts';
import { finish, FINISHED, type RunsContext } from './runs.ts';

const SWEEP_MS = 5_000;
const BATCH = 100;

/** Times out the due runs past their deadline (a batch); returns how many it ended. */
export async function timeOutOverdueRuns(ctx: RunsContext): Promise<number> {
  const now = ctx.now();
  const overdue = await ctx.runs.find(
    { dueAt: { $lte: now }, deadlineAt: { $lte: now } },
    { sort: { field: 'dueAt', direction: 'asc' }, limit: BATCH },
  );
  let ended = 0;
  for (const run of overdue) {
    if (FINISHED.has(run.status)) continue;
    if (await finish(ctx, run, RunStatus.TIMED_OUT, { error: `timed out after ${run.timeoutSeconds} s` })) ended++;
  }
  return ended;
}

export interface RunTimeouts {
  stop(): Promise<void>;
}

export function startRunTimeouts(ctx: RunsContext, logger: Logger): RunTimeouts {
  const stopping = new AbortController();
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        const ended = await timeOutOverdueRuns(ctx);
        if (ended > 0) logger.info({ ended }, 'runs past their timeout ended as timed_out');
        if (ended === BATCH) continue;
      } catch (err) {
        logger.warn({ err }, 'sweep of runs past their timeout failed; retried');
      }
      await sleep(SWEEP_MS, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
