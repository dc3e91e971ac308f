// The Brain's labeled quality set (test/fixtures/brain-quality.json) as an evaluation dataset, on a
// slice: scripts/labeled-set-to-jsonl.ts run as the documented command turns it into JSON Lines,
// the lines of 20 queries (of every kind) are imported through the REST API, the memories they
// need (and 200 others, as distractors) are written to the organization's Brain, and an evaluation
// of the Brain search is worked by the platform's evaluation worker. Each case must have found what
// the Brain's search finds for that query, and the aggregates are the means of the cases' scores.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { LabeledSet } from '../../scripts/labeled-set-to-jsonl.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { isEvaluationFinished, restClient, type Json } from '../support/rest.ts';
import { until } from '../support/until.ts';
import { ingest, type LabeledMemory } from '../support/retrieval-eval.ts';

const root = path.resolve(import.meta.dirname, '../..');
const FIXTURE = 'test/fixtures/brain-quality.json';
const SLICE = 20;
const DISTRACTORS = 200;
const LIMIT = 10;
let platform: TestPlatform;
let api: string;
let owner: ObtainedToken;
let org: string;
const call = restClient(() => api);
const orgPath = (p: string) => `/organizations/${org}${p}`;

const set = JSON.parse(fs.readFileSync(path.join(root, FIXTURE), 'utf8')) as LabeledSet & { memories: LabeledMemory[] };
/** Every 13th query: the slice holds facts, how-tos and incidents, as the whole set does. */
const picked = set.queries
  .map((_, i) => i)
  .filter((i) => i % 13 === 0)
  .slice(0, SLICE);

beforeAll(async () => {
  platform = await startOAuthTestPlatform({ EVALUATION_POLL_MS: '50', EMBEDDINGS_THREADS: '2' });
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  const needed = new Set(picked.flatMap((i) => set.queries[i].relevant));
  const memories = set.memories.filter((m, i) => needed.has(m.key) || i < DISTRACTORS);
  await ingest(platform.ctx.clients.brain, org, memories);
}, 600_000);

afterAll(async () => {
  await platform?.stop();
});

describe("the Brain's labeled quality set as a dataset", () => {
  it('imports a slice of the lines the script makes and evaluates the Brain search over it', async () => {
    const lines = execFileSync(process.execPath, ['scripts/labeled-set-to-jsonl.ts', FIXTURE], { cwd: root, encoding: 'utf8' })
      .trimEnd()
      .split('\n');
    expect(lines).toHaveLength(set.queries.length);
    const dataset = await call(orgPath('/evaluation-datasets'), { token: owner.access_token, body: { name: 'brain-quality (slice)' } });
    const imported = await call(orgPath(`/evaluation-datasets/${dataset.json.id}/cases/import`), {
      token: owner.access_token,
      rawBody: `${picked.map((i) => lines[i]).join('\n')}\n`,
      contentType: 'application/jsonl',
    });
    expect(imported.json).toMatchObject({ imported: SLICE, failed: [] });
    const cases = (await call(orgPath(`/evaluation-datasets/${dataset.json.id}/cases?page_size=100`), { token: owner.access_token })).json
      .cases as Json[];
    expect(cases.map((c) => [c.input, c.namespace, c.labels])).toEqual(
      picked.map((i) => [set.queries[i].query, set.queries[i].namespace, [set.queries[i].kind]]),
    );
    expect(new Set(cases.map((c) => c.labels[0]))).toEqual(new Set(['fact', 'howto', 'incident']));

    const created = await call(orgPath('/evaluations'), {
      token: owner.access_token,
      body: { dataset_id: dataset.json.id, subject: { type: 'brain_search', limit: LIMIT }, evaluators: ['retrieval'] },
    });
    expect(created.status).toBe(201);
    const done = await until(
      async () => (await call(orgPath(`/evaluations/${created.json.id}`), { token: owner.access_token })).json,
      isEvaluationFinished,
      { what: 'the evaluation to end', timeoutMs: 180_000 },
    );
    expect(done).toMatchObject({ status: 'succeeded', case_total: SLICE, cases_scored: SLICE });
    const results = (await call(orgPath(`/evaluations/${created.json.id}/results?page_size=100`), { token: owner.access_token })).json
      .results as Json[];

    // Each case found what the Brain's search finds for its query, in its namespace.
    for (const [n, r] of results.entries()) {
      const q = set.queries[picked[n]];
      const direct = await platform.ctx.clients.brain.searchMemories({
        organizationId: org,
        namespace: q.namespace === 'knowledge' ? Namespace.KNOWLEDGE : Namespace.EPISODES,
        query: q.query,
        limit: LIMIT,
      });
      expect(r.found.map((f: Json) => f.key)).toEqual(direct.results.map((x) => x.memory!.key));
      const rank = direct.results.findIndex((x) => q.relevant.includes(x.memory!.key)) + 1;
      expect(r.first_relevant_rank).toBe(rank === 0 ? null : rank);
    }
    // The aggregates are the means of the cases' scores.
    const mean = (name: string) => results.reduce((s, r) => s + r.scores.find((x: Json) => x.name === name).value, 0) / SLICE;
    for (const [metric, score] of [
      ['recall@1', 'recall@1'],
      ['recall@10', 'recall@10'],
      ['mrr', 'reciprocal_rank'],
    ])
      expect(done.metrics.find((m: Json) => m.name === metric)).toMatchObject({
        cases: SLICE,
        value: Math.round(mean(score) * 10_000) / 10_000,
      });
    // Most of the slice's relevant memories are within the first ten (the whole set measures 0.92).
    expect(done.metrics.find((m: Json) => m.name === 'recall@10').value).toBeGreaterThanOrEqual(0.6);
  }, 300_000);
});
