// The durable part of deleting an organization: a job record per organization in the records
// store (`organization_deletions`), shared by every replica, worked on by exactly one of them at a
// time under a lease, step after step (steps.ts). Every replica runs the worker, from its start:
// a job left half-done by a replica that crashed is taken over once its lease has run out, and
// resumes at the step it was in (each step is safe to repeat, so the batch in flight when the
// crash came is simply done again). The job record stays, finished, as the trace of the deletion.
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import type { RecordCollection, RecordDoc } from '../../../services/common/storage/records/interface.ts';
import type { PurgeStep } from './steps.ts';

export const DELETIONS_COLLECTION = 'organization_deletions';
/** How long a claim keeps other replicas off a job; renewed after every batch. */
const LEASE_MS = 15_000;
/** Pause between looks for due jobs. */
const POLL_MS = 2_000;
/** Delay before a job whose step failed is tried again (doubling, at most RETRY_MAX_MS). */
const RETRY_MS = 5_000;
const RETRY_MAX_MS = 300_000;

export interface DeletionJob extends RecordDoc {
  organizationId: string;
  /** The organization's name and slug, and who asked (for the trace). */
  name: string;
  slug: string;
  requestedBy: string;
  requestedAt: number;
  state: 'pending' | 'done';
  /** Index of the step in progress (steps.ts). */
  step: number;
  /** Records deleted so far, by step. */
  deleted: Record<string, number>;
  /** Not worked on before this (the start delay, a lease, a retry). */
  dueAt: number;
  owner: string;
  attempts: number;
  lastError?: string;
  finishedAt?: number;
  version: number;
}

export interface PurgeWorker {
  /** Runs due jobs now (and resolves once this pass is over). */
  poke(): Promise<void>;
  stop(): Promise<void>;
}

export function deletionJobs(ctx: AppContext): RecordCollection<DeletionJob> {
  return ctx.stores.records.collection<DeletionJob>(DELETIONS_COLLECTION, { indexes: [{ fields: ['state', 'dueAt'] }] });
}

export function startPurgeWorker(ctx: AppContext, steps: PurgeStep[], options: { batch: number }): PurgeWorker {
  const jobs = deletionJobs(ctx);
  const me = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const logger = ctx.logger.child({ component: 'organization-purge' });
  let stopped = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  /** Compare-and-set on the version this replica read: false when another replica moved first. */
  async function save(job: DeletionJob, changes: Partial<DeletionJob>): Promise<DeletionJob | undefined> {
    const next = { ...job, ...changes, version: job.version + 1 };
    return (await jobs.put(next, { expect: { version: job.version } })) ? next : undefined;
  }

  async function work(claimed: DeletionJob): Promise<void> {
    let job: DeletionJob | undefined = claimed;
    while (job && job.step < steps.length && !stopped) {
      const step = steps[job.step];
      const result = await step.run(job.organizationId, options.batch);
      const deleted = { ...job.deleted, [step.name]: (job.deleted[step.name] ?? 0) + result.deleted };
      logger.debug({ organizationId: job.organizationId, step: step.name, ...result }, 'organization purge: batch done');
      job = await save(job, { deleted, step: result.done ? job.step + 1 : job.step, dueAt: ctx.now() + LEASE_MS, attempts: 0 });
    }
    if (job && job.step < steps.length) {
      // Stopping (a graceful shutdown): another replica, or the next start, takes over at once.
      await save(job, { owner: '', dueAt: ctx.now() });
      return;
    }
    if (job) {
      await save(job, { state: 'done', finishedAt: ctx.now(), owner: '', dueAt: 0, lastError: undefined });
      logger.info({ organizationId: job.organizationId, deleted: job.deleted, requestedBy: job.requestedBy }, 'organization purged');
    }
  }

  async function pass(): Promise<void> {
    const due = await jobs.find(
      { state: 'pending', dueAt: { $lte: ctx.now() } },
      { sort: { field: 'dueAt', direction: 'asc' }, limit: 10 },
    );
    for (const found of due) {
      if (stopped) return;
      const job = await save(found, { owner: me, dueAt: ctx.now() + LEASE_MS });
      if (!job) continue;
      try {
        await work(job);
      } catch (err) {
        const current = await jobs.get(job._id);
        const delay = Math.min(RETRY_MAX_MS, RETRY_MS * 2 ** Math.min(job.attempts, 10));
        logger.warn(
          { err, organizationId: job.organizationId, step: steps[current?.step ?? 0]?.name },
          'organization purge failed; retrying later',
        );
        if (current?.owner === me)
          await save(current, { attempts: current.attempts + 1, lastError: String(err), dueAt: ctx.now() + delay });
      }
    }
  }

  function poke(): Promise<void> {
    running ??= pass()
      .catch((err: unknown) => logger.warn({ err }, 'organization purge: could not read the jobs'))
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  const loop = () => {
    if (stopped) return;
    void poke().then(() => {
      if (!stopped) timer = setTimeout(loop, POLL_MS);
    });
  };
  loop();
  return {
    poke,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
