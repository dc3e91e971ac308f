// Memory seeding (docs/brain.md, "Seeding"): the SeedingService's routes and the worker that runs
// seeding jobs, hosted in the brain process beside the memories they write.
import type { ConnectRouter } from '@connectrpc/connect';
import { SeedingService } from '../../../gen/mindgate/brain/v1/seeding_pb.js';
import type { BrainContext } from '../context.ts';
import { readSeedingConfig, type SeedingConfig } from './config.ts';
import type { SeedingContext } from './context.ts';
import { cancelSeedingRun, reviewSeedingItems } from './control.ts';
import { getSeedingRun, listSeedingItems, listSeedingRuns } from './read.ts';
import { openSeedingStore } from './records.ts';
import { startSeeding } from './start.ts';
import { startSeedingWorker } from './worker.ts';

export interface Seeding {
  routes: (router: ConnectRouter) => void;
  close: () => Promise<void>;
}

export function createSeeding(brain: BrainContext, config: SeedingConfig = readSeedingConfig({})): Seeding {
  const ctx: SeedingContext = { brain, store: openSeedingStore(brain.stores.records), config, now: brain.now, wake: () => {} };
  const worker = startSeedingWorker(ctx);
  ctx.wake = () => worker.wake();
  return {
    routes: (router) =>
      router.service(SeedingService, {
        startSeeding: (req) => startSeeding(ctx, req),
        listSeedingRuns: (req) => listSeedingRuns(ctx, req),
        getSeedingRun: (req) => getSeedingRun(ctx, req),
        cancelSeedingRun: (req) => cancelSeedingRun(ctx, req),
        listSeedingItems: (req) => listSeedingItems(ctx, req),
        reviewSeedingItems: (req) => reviewSeedingItems(ctx, req),
      }),
    close: () => worker.stop(),
  };
}
