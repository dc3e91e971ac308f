// Web API benchmark: requests per second and latency percentiles of a post read and of a blog
// search over POSTS generated posts (default 1,000), with rate limiting on: every request goes
// through the limiter (an atomic increment in the embedded records store), each from its own
// client address (X-Forwarded-For through a trusted proxy) so that none is refused.
//
//   ./node_modules/.bin/node test/bench/web.bench.ts
//   POSTS=1000 READS=5000 SEARCHES=2000 CONCURRENCY=16 BENCH_DATA_DIR=/tmp/web-bench ...
//
// BENCH_DATA_DIR keeps the embedded store between runs, so the posts' vectors are embedded once.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readEdgeConfig } from '../../edge/config.ts';
import { startPlatform } from '../../edge/platform.ts';
import { createLogger } from '../../services/common/log.ts';
import { testEnv } from '../support/platform.ts';
import { measure, printTable, rssMiB } from './support.ts';

const POSTS = Number(process.env.POSTS ?? 1_000);
const READS = Number(process.env.READS ?? 5_000);
const SEARCHES = Number(process.env.SEARCHES ?? 2_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const THREADS = process.env.EMBEDDINGS_THREADS ?? '2';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const contentDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-web-bench-content-'));
const keepData = process.env.BENCH_DATA_DIR;
const dataDir = keepData ?? fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-web-bench-'));
fs.mkdirSync(dataDir, { recursive: true });

// --- generated content: the real site and pages, and POSTS posts on infrastructure topics ---
const SUBJECTS = [
  'billing service',
  'API gateway',
  'nightly backup',
  'Postgres primary',
  'login page',
  'search indexer',
  'payment webhook',
  'staging cluster',
  'mobile app',
  'CI pipeline',
  'DNS records',
  'TLS certificates',
  'Kafka consumers',
  'image resizer',
  'email sender',
  'feature flags',
  'audit log',
  'rate limiter',
  'data warehouse',
  'on-call rota',
];
const ACTIONS = [
  'scaling',
  'debugging',
  'migrating',
  'securing',
  'monitoring',
  'testing',
  'deploying',
  'replacing',
  'tuning',
  'documenting',
];
const DETAILS = [
  'latency went down after we cached the lookups',
  'the retries doubled the load during the incident',
  'a missing index made every query scan the table',
  'the alert fired an hour after users noticed',
  'we rolled back within ten minutes',
  'the queue drained once the consumers were restarted',
  'the certificate expired on a Sunday',
  'memory grew until the pods were killed',
  'two replicas disagreed about the leader',
  'the dashboard showed the wrong time zone',
];

let seed = 42;
const rand = (n: number) => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed % n;
};
const pick = <T>(list: T[]) => list[rand(list.length)];

fs.cpSync(path.join(root, 'content/site.yaml'), path.join(contentDir, 'site.yaml'));
fs.cpSync(path.join(root, 'content/pages'), path.join(contentDir, 'pages'), { recursive: true });
fs.mkdirSync(path.join(contentDir, 'blog'));
const slugs: string[] = [];
for (let i = 0; i < POSTS; i++) {
  const subject = pick(SUBJECTS);
  const action = pick(ACTIONS);
  const slug = `${action}-the-${subject.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${i}`;
  slugs.push(slug);
  const date = new Date(Date.UTC(2024, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);
  const para = () => Array.from({ length: 4 }, () => `When ${action} the ${subject}, ${pick(DETAILS)}.`).join(' ');
  fs.writeFileSync(
    path.join(contentDir, 'blog', `${slug}.md`),
    `---
title: "${action[0].toUpperCase()}${action.slice(1)} the ${subject}, part ${i}"
slug: ${slug}
date: ${date}
category: ${i % 2 ? 'Engineering' : 'Product'}
summary: What we learned ${action} the ${subject}.
agent:
  summary: Notes on ${action} the ${subject} and what went wrong.
  when_to_use: [Before ${action} the ${subject}.]
  key_claims: [${pick(DETAILS)}]
  related_concepts: [${subject}, ${action}]
---

${para()}

## What happened

${para()}

## What we changed

${para()}
`,
  );
}

// --- the platform, with the limiter counting every request ---
const config = readEdgeConfig(
  testEnv(dataDir, {
    WEB_CONTENT_DIR: contentDir,
    TRUSTED_PROXIES: '127.0.0.1',
    EMBEDDINGS_THREADS: THREADS,
    LOG_LEVEL: 'warn',
    ACCESS_LOG: 'false',
  }),
  os.availableParallelism(),
);
let t0 = performance.now();
const platform = await startPlatform({ config, logger: createLogger({ level: 'warn' }) });
const web = platform.urls.web;
const startMs = performance.now() - t0;

let client = 0;
/** A distinct client address per request: 10.x.y.z. */
const nextIp = () => {
  client++;
  return `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}`;
};
const statuses = new Map<number, number>();
async function call(pathAndQuery: string): Promise<void> {
  const res = await fetch(web + pathAndQuery, { headers: { 'x-forwarded-for': nextIp() } });
  await res.arrayBuffer();
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
}

t0 = performance.now();
await call('/api/v1/blog/search?q=warm%20up');
const indexMs = performance.now() - t0;

const QUERIES = Array.from({ length: 100 }, () => `${pick(ACTIONS)} ${pick(SUBJECTS)} ${pick(DETAILS).split(' ').slice(0, 3).join(' ')}`);
await measure(200, CONCURRENCY, () => call(`/api/v1/blog/posts/${pick(slugs)}`));

const rows: Record<string, string | number>[] = [];
const run = async (name: string, count: number, task: (i: number) => Promise<void>) => {
  statuses.clear();
  const r = await measure(count, CONCURRENCY, task);
  rows.push({
    scenario: name,
    requests: count,
    'req/s': r.perSecond,
    'p50 ms': r.p50,
    'p99 ms': r.p99,
    statuses: [...statuses].map(([s, n]) => `${s}:${n}`).join(' '),
  });
};
await run('post read', READS, () => call(`/api/v1/blog/posts/${pick(slugs)}`));
await run('post list (20)', READS, () =>
  call(`/api/v1/blog/posts?limit=20&cursor=${Buffer.from(`o:${rand(POSTS - 20)}`).toString('base64url')}`),
);
await run('search, 100 queries', SEARCHES, () => call(`/api/v1/blog/search?q=${encodeURIComponent(pick(QUERIES))}&limit=10`));
await run('search, all distinct', Math.min(SEARCHES, 1000), (i) =>
  call(`/api/v1/blog/search?q=${encodeURIComponent(`${pick(QUERIES)} ${i}`)}&limit=10`),
);

const status = (await (await fetch(`${web}/api/v1/platform-status`)).json()) as { components: Array<{ id: string; latency_ms: number }> };
console.log(
  `Web API, ${POSTS} posts, concurrency ${CONCURRENCY}, ${THREADS} embedding thread(s), rate limiting on (one client address per request)`,
);
console.log(
  `platform start ${startMs.toFixed(0)} ms; blog index ready after ${(indexMs / 1000).toFixed(1)} s (${keepData ? 'store kept in BENCH_DATA_DIR' : 'cold cache'}); rss ${rssMiB().toFixed(0)} MiB`,
);
printTable('results', rows);
console.log(`\nplatform status checks (ms): ${status.components.map((c) => `${c.id} ${c.latency_ms}`).join(', ')}`);

await platform.stop(1_000);
fs.rmSync(contentDir, { recursive: true, force: true });
if (!keepData) fs.rmSync(dataDir, { recursive: true, force: true });
