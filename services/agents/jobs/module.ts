// The part of the agents service that keeps scheduled jobs: the JobsService and the scheduler that
// fires them in the background, in every replica.
import type { ConnectRouter } from '@connectrpc/connect';
import { JobsService } from '../../../gen/mindgate/agents/v1/jobs_pb.js';
import type { JobsConfig } from '../../common/config.ts';
import type { Logger } from '../../common/log.ts';
import type { RecordStore } from '../../common/storage/records/interface.ts';
import type { Client } from '@connectrpc/connect';
import type { SeedingService } from '../../../gen/mindgate/brain/v1/seeding_pb.js';
import type { SeedingConfig } from '../../brain/seeding/config.ts';
import type { EventOutbox } from '../../common/events/outbox.ts';
import type { PlaybooksContext } from '../handlers/playbooks.ts';
import type { RunsContext } from '../handlers/runs.ts';
import type { JobsContext } from './context.ts';
import { listJobExecutions, triggerJob } from './executions.ts';
import { createJob, deleteJob, getJob, listJobs, pauseJob, resumeJob, updateJob } from './jobs.ts';
import { openJobCollections } from './records.ts';
import { createScheduler } from './scheduler.ts';

export interface JobsModuleOptions {
  records: RecordStore;
  /** The runs' context with the plan's run limit (withRunLimit). */
  runs: RunsContext;
  playbooks: PlaybooksContext;
  /** The brain's SeedingService, for seeding targets; absent: they are refused. */
  seeding?: () => Client<typeof SeedingService>;
  seedingConfig: SeedingConfig;
  outbox: EventOutbox;
  config: JobsConfig;
  logger: Logger;
  now: () => number;
}

export function jobsModule(options: JobsModuleOptions) {
  const logger = options.logger.child({ component: 'jobs' });
  const { records, logger: _logger, ...rest } = options;
  const ctx: JobsContext = { ...openJobCollections(records), ...rest, logger };
  const scheduler = createScheduler(ctx, logger);
  return {
    services: [JobsService],
    /** What an organization's deletion purges (executions before their jobs). */
    owned: [ctx.executions, ctx.jobs],
    routes(router: ConnectRouter) {
      router.service(JobsService, {
        createJob: (req) => createJob(ctx, req),
        getJob: (req) => getJob(ctx, req),
        listJobs: (req) => listJobs(ctx, req),
        updateJob: (req) => updateJob(ctx, req),
        deleteJob: (req) => deleteJob(ctx, req),
        pauseJob: (req) => pauseJob(ctx, req),
        resumeJob: (req) => resumeJob(ctx, req),
        triggerJob: (req) => triggerJob(ctx, req),
        listJobExecutions: (req) => listJobExecutions(ctx, req),
      });
    },
    close: () => scheduler.stop(),
  };
}
