// Small helpers shared by the benchmarks: percentiles, a fixed-concurrency runner, a table.

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export interface LatencySummary {
  count: number;
  perSecond: number;
  p50: number;
  p95: number;
  p99: number;
}

/** Runs `task(i)` for i in [0, count) with `concurrency` in flight; returns latency figures. */
export async function measure(count: number, concurrency: number, task: (i: number) => Promise<unknown>): Promise<LatencySummary> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        await task(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    count,
    perSecond: count / elapsed,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
  };
}

export function printTable(title: string, rows: Record<string, string | number>[]): void {
  console.log(`\n${title}`);
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const cell = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : v);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  console.log(columns.map((c, i) => c.padEnd(widths[i])).join('  '));
  for (const row of rows) console.log(columns.map((c, i) => cell(row[c]).padStart(widths[i])).join('  '));
}

export function rssMiB(): number {
  return process.memoryUsage().rss / 1024 / 1024;
}

const SUBJECTS = [
  'the billing service',
  'the API gateway',
  'the nightly backup job',
  'the Postgres primary',
  'the login page',
  'the search indexer',
  'the payment webhook',
  'the staging cluster',
  'the mobile app',
  'the CI pipeline',
  'the DNS records',
  'the TLS certificates',
  'the Kafka consumers',
  'the image resizer',
  'the email sender',
  'the feature flags',
  'the audit log',
  'the rate limiter',
  'the data warehouse',
  'the on-call rota',
];
const EVENTS = [
  'failed after a deploy',
  'ran out of disk space',
  'was migrated to a new region',
  'started timing out under load',
  'needs a restart after config changes',
  'was upgraded to the latest version',
  'leaked memory for two days',
  'is owned by the platform team',
  'must be rolled back with the release script',
  'alerts the on-call engineer when it degrades',
  'was slow because of a missing index',
  'depends on the shared Redis cache',
  'is tested every Friday',
  'returns stale data when the cache is cold',
];
const DETAILS = [
  'Check the dashboard first.',
  'The fix was to raise the connection pool.',
  'Runbook lives in the wiki.',
  'Customers noticed within minutes.',
  'It happened twice this quarter.',
  'Rotate the credentials afterwards.',
  'Document the timeline in the incident report.',
  'Scale out to three replicas before retrying.',
];

/** A deterministic, varied memory text for index i. */
export function syntheticMemory(i: number): { key: string; title: string; content: string; tags: string[] } {
  const s = SUBJECTS[i % SUBJECTS.length];
  const e = EVENTS[Math.floor(i / SUBJECTS.length) % EVENTS.length];
  const d = DETAILS[Math.floor(i / (SUBJECTS.length * EVENTS.length)) % DETAILS.length];
  return {
    key: `bench/${i}`,
    title: `${s} ${e}`.replace(/^the /, ''),
    content: `Note ${i}: ${s} ${e}. ${d}`,
    tags: [`t${i % 7}`],
  };
}
