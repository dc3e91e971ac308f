// The Brain's metrics: the vector-sync backlog (vector-sync.ts) and what its passes did.
// - mindgate_brain_vector_sync_pending: memories whose vector is not verified yet. Every write
//   holds the marker for VECTOR_GRACE_MS, so a busy Brain shows some; it returns to 0 when writes
//   stop and the vector store answers.
// - mindgate_brain_vector_sync_overdue: those written more than the grace ago, which vector sync
//   owes: records without their vector, the figure `brain:check` calls recordsWithoutVectors for
//   everything the markers know. Rising while the vector store or the embedder fails, back to 0
//   after.
// Both are two indexed counts, read at each scrape, so they hold across replicas (every replica
// reports the same shared backlog: aggregate with max, not sum). The full check that also finds
// what no marker records (vectorsWithoutRecords, a store restored from another backup) scans
// every memory and every vector, which is not a scrape's work: `npm run brain:check` does it.
//
// And this process's in-memory search indexes against BRAIN_INDEX_MEMORY_MB (index-budget.ts):
// - mindgate_brain_index_resident_bytes{index="lexical"|"vectors"}: their estimated bytes.
// - mindgate_brain_index_budget_bytes: the limit.
// - mindgate_brain_index_organizations: organizations with an index held.
// - mindgate_brain_index_evictions_total: organizations evicted; a steady rise means the budget
//   is smaller than the organizations in use, each of which is then rebuilt on its next use.
import { Counter, Gauge, type Metric, type Registry } from 'prom-client';
import { INDEX_KINDS } from '../common/storage/index-budget.ts';
import type { BrainContext } from './context.ts';
import { VECTOR_GRACE_MS, type ReconcileStats } from './vector-sync.ts';

/** A scrape must not wait on a store that does not answer: the last value stays. */
const COUNT_TIMEOUT_MS = 2_000;

export interface BrainMetrics {
  register(registry: Registry): void;
  /** Adds one vector-sync pass's figures. */
  countPass(stats: ReconcileStats): void;
}

function withDeadline<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('no answer')), COUNT_TIMEOUT_MS);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

export function createBrainMetrics(ctx: BrainContext): BrainMetrics {
  const gauge = (name: string, help: string, count: () => Promise<number>) =>
    new Gauge({
      name,
      help,
      registers: [],
      async collect() {
        try {
          this.set(await withDeadline(count()));
        } catch (err) {
          ctx.logger.debug({ err, metric: name }, 'metrics: count failed; the last value stays');
        }
      },
    });
  const pending = gauge('mindgate_brain_vector_sync_pending', 'Memories whose vector is not verified yet (vector sync markers).', () =>
    ctx.memories.count({ vectorDue: { $gte: 0 } }),
  );
  // By the write's time, not the marker's: vector sync moves the marker ahead while it retries,
  // so a count of passed markers would flicker between 0 and the backlog during an outage.
  const overdue = gauge(
    'mindgate_brain_vector_sync_overdue',
    'Memories written more than the grace ago whose vector is not verified: the backlog vector sync works through.',
    () => ctx.memories.count({ vectorDue: { $gte: 0 }, updatedAt: { $lte: ctx.now() - VECTOR_GRACE_MS } }),
  );
  const items = new Counter({
    name: 'mindgate_brain_vector_sync_items_total',
    help: 'Memories vector sync handled in this process, by outcome (verified, repaired, removed, skipped, failed).',
    labelNames: ['outcome'] as const,
    registers: [],
  });
  const indexMetrics = createIndexMetrics(ctx);
  return {
    register(registry) {
      for (const metric of [pending, overdue, items]) registry.registerMetric(metric);
      for (const metric of indexMetrics) registry.registerMetric(metric as Metric);
    },
    countPass(stats) {
      for (const [outcome, n] of Object.entries(stats)) if (n) items.labels(outcome).inc(n);
    },
  };
}

/** The index memory budget's figures, read at each scrape. */
function createIndexMetrics(ctx: BrainContext) {
  const budget = ctx.indexBudget;
  const resident = new Gauge({
    name: 'mindgate_brain_index_resident_bytes',
    help: "Estimated bytes of this process's in-memory search indexes (BRAIN_INDEX_MEMORY_MB), by index.",
    labelNames: ['index'] as const,
    registers: [],
    collect() {
      const { bytes } = budget.usage();
      for (const kind of INDEX_KINDS) this.labels(kind).set(bytes[kind]);
    },
  });
  const limit = new Gauge({
    name: 'mindgate_brain_index_budget_bytes',
    help: 'The bytes the in-memory search indexes may hold together (BRAIN_INDEX_MEMORY_MB).',
    registers: [],
    collect() {
      // Infinity (no budget: stores assembled by hand) is not a useful sample.
      if (Number.isFinite(budget.limitBytes)) this.set(budget.limitBytes);
    },
  });
  const organizations = new Gauge({
    name: 'mindgate_brain_index_organizations',
    help: 'Organizations with an in-memory search index in this process.',
    registers: [],
    collect() {
      this.set(budget.usage().organizations);
    },
  });
  let counted = 0;
  const evictions = new Counter({
    name: 'mindgate_brain_index_evictions_total',
    help: 'Organizations whose in-memory search indexes this process evicted to stay within BRAIN_INDEX_MEMORY_MB.',
    registers: [],
    collect() {
      const { evictions: n } = budget.usage();
      if (n > counted) this.inc(n - counted);
      counted = n;
    },
  });
  return [resident, limit, organizations, evictions];
}
