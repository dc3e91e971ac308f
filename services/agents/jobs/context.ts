// What the jobs' handlers and scheduler share.
import type { Client } from '@connectrpc/connect';
import type { SeedingService } from '../../../gen/mindgate/brain/v1/seeding_pb.js';
import type { JobsConfig } from '../../common/config.ts';
import type { EventOutbox } from '../../common/events/outbox.ts';
import type { Logger } from '../../common/log.ts';
import type { SeedingConfig } from '../../brain/seeding/config.ts';
import type { PlaybooksContext } from '../handlers/playbooks.ts';
import type { RunsContext } from '../handlers/runs.ts';
import type { JobCollections } from './records.ts';

export interface JobsContext extends JobCollections {
  /** Threads and runs, with the plan's run limit: a run target goes through them as CreateRun does. */
  runs: RunsContext;
  /** Playbooks, which a playbook target runs as StartPlaybookRun does. */
  playbooks: PlaybooksContext;
  /** The brain's SeedingService, which a seeding target starts runs of; absent: no brain to reach. */
  seeding?: () => Client<typeof SeedingService>;
  /** The URL sources' settings, to refuse a seeding target's URL when the job is stored. */
  seedingConfig: SeedingConfig;
  /** The service's outbox: job_execution.failed, job_execution.skipped and job.backed_off go with their change. */
  outbox: EventOutbox;
  config: JobsConfig;
  logger: Logger;
  now: () => number;
}
