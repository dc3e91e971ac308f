// What the jobs' handlers and scheduler share.
import type { JobsConfig } from '../../common/config.ts';
import type { Logger } from '../../common/log.ts';
import type { RunsContext } from '../handlers/runs.ts';
import type { JobCollections } from './records.ts';

export interface JobsContext extends JobCollections {
  /** Threads and runs, with the plan's run limit: a run target goes through them as CreateRun does. */
  runs: RunsContext;
  config: JobsConfig;
  logger: Logger;
  now: () => number;
}
