// What the seeding service's handlers and worker share, built once with the brain module.
import type { BrainContext } from '../context.ts';
import type { SeedingConfig } from './config.ts';
import type { SeedingStore } from './records.ts';

export interface SeedingContext {
  brain: BrainContext;
  store: SeedingStore;
  config: SeedingConfig;
  now: () => number;
  /** Tells this replica's worker there is work now (a run started or items approved), rather than at its next poll. */
  wake: () => void;
}
