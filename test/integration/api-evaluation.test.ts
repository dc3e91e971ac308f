// Evaluation over the real REST API: a dataset of cases over memories written to the platform's
// Brain, imported as JSON Lines (a bad line reported with its number, the rest imported) and
// exported back; an evaluation worked by the platform's evaluation worker through the Brain's
// search, with the recall@k and MRR the cases call for; a second evaluation after the memories
// changed, compared with the first; roles, tenants and the audit log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { problemType } from '../../edge/api/problems.ts';
import { startChatServer, type ChatReply, type ChatRequest, type ChatServer } from '../support/chat-server.ts';
import { joinAs, type TestMember } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { isEvaluationFinished, restClient, type Json } from '../support/rest.ts';
import { until } from '../support/until.ts';

let platform: TestPlatform;
let model: ChatServer;
let api: string;
let owner: ObtainedToken;
let other: ObtainedToken;
let org: string;
let viewer: TestMember;
const call = restClient(() => api);
const path = (p: string) => `/organizations/${org}${p}`;

const MEMORIES = [
  [
    'knowledge',
    'services/checkout/db-pool',
    'Checkout database connection pool',
    'The checkout service database connection pool size is 50 connections since the March incident.',
  ],
  [
    'knowledge',
    'runbooks/disk-full',
    'Disk full on the database host',
    'When the database disk fills, rotate the WAL archive and raise the volume.',
  ],
  ['knowledge', 'services/search/cache', 'Search result cache', 'The search service caches query results in Redis for 300 seconds.'],
  [
    'episodes',
    'incidents/2026-03-payment-timeouts',
    'Payment timeouts on 3 March',
    'Payments timed out for 40 minutes because the payment provider rotated its TLS certificate.',
  ],
] as const;

const CASES = [
  {
    input: 'How many connections does the checkout database pool hold?',
    namespace: 'knowledge',
    expected_memories: [{ namespace: 'knowledge', key: 'services/checkout/db-pool' }],
    expected_answer: 'POOL SIZE IS 50',
  },
  {
    input: 'What do I do when the database disk is full?',
    namespace: 'knowledge',
    expected_memories: [{ namespace: 'knowledge', key: 'runbooks/disk-full' }],
    answer_pattern: 'rotate the (WAL|wal) archive',
  },
  {
    input: 'How long does the search service cache query results?',
    namespace: 'knowledge',
    expected_memories: [{ namespace: 'knowledge', key: 'services/search/cache' }],
  },
  {
    input: 'How do we fix Kafka consumer lag?',
    namespace: 'knowledge',
    expected_memories: [{ namespace: 'knowledge', key: 'runbooks/kafka-lag' }],
  },
  {
    input: 'Why did payments time out in March?',
    expected_memories: [{ namespace: 'episodes', key: 'incidents/2026-03-payment-timeouts' }],
    labels: ['recall'],
  },
];

const metric = (evaluation: Json, name: string) => evaluation.metrics.find((m: Json) => m.name === name)?.value;

async function evaluate(datasetId: string, label: string): Promise<Json> {
  const created = await call(path('/evaluations'), { token: owner.access_token, body: { dataset_id: datasetId, label } });
  expect(created.status).toBe(201);
  expect(created.json).toMatchObject({ status: 'queued', case_total: CASES.length, subject: { type: 'brain_search', limit: 10 } });
  return until(
    async () => (await call(path(`/evaluations/${created.json.id}`), { token: viewer.access_token })).json,
    isEvaluationFinished,
    { what: 'the evaluation to end', timeoutMs: 60_000 },
  );
}

/** The judge: passes an answer that holds the expected text; one question gets prose instead of a verdict. */
function judge(req: ChatRequest): ChatReply {
  const prompt = req.messages.find((m) => m.role === 'user')?.content ?? '';
  const expected = /Expected answer:\n(.*)\n\nAnswer to grade:/s.exec(prompt)?.[1] ?? '';
  const answer = prompt.split('Answer to grade:\n')[1] ?? '';
  if (prompt.includes('[prose]')) return { content: 'Looks right to me.' };
  const pass = answer.toLowerCase().includes(expected.toLowerCase());
  return { content: `Verdict: {"pass": ${pass}, "score": ${pass ? 0.9 : 0.1}, "reason": "compared"}` };
}

beforeAll(async () => {
  model = await startChatServer(judge);
  platform = await startOAuthTestPlatform({
    EVALUATION_POLL_MS: '50',
    LLM_URL: model.url,
    LLM_API_KEY: 'sk-judge-0123456789',
    LLM_MODEL: 'judge-1',
  });
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  viewer = await joinAs(platform, org, 'viewer');
  for (const [ns, key, title, content] of MEMORIES) {
    const namespace = ns === 'knowledge' ? Namespace.KNOWLEDGE : Namespace.EPISODES;
    await platform.ctx.clients.brain.putMemory({ organizationId: org, namespace, key, title, content });
  }
}, 180_000);

afterAll(async () => {
  await platform?.stop();
  await model?.close();
});

describe('datasets', () => {
  it('creates, lists, renames under If-Match and deletes a dataset; viewers read but do not write', async () => {
    const t = owner.access_token;
    const created = await call(path('/evaluation-datasets'), { token: t, body: { name: 'Scratch', description: 'to delete' } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'Scratch', case_count: 0 });
    const id = created.json.id;
    const etag = created.headers.get('etag')!;
    expect((await call(path('/evaluation-datasets'), { token: viewer.access_token })).json.datasets.map((d: Json) => d.id)).toContain(id);
    expect((await call(path('/evaluation-datasets'), { token: viewer.access_token, body: { name: 'x' } })).status).toBe(403);
    const renamed = await call(path(`/evaluation-datasets/${id}`), {
      token: t,
      method: 'PATCH',
      body: { name: 'Renamed' },
      headers: { 'if-match': etag },
    });
    expect(renamed.json.name).toBe('Renamed');
    const stale = await call(path(`/evaluation-datasets/${id}`), {
      token: t,
      method: 'PATCH',
      body: { name: 'Again' },
      headers: { 'if-match': etag },
    });
    expect(stale.status).toBe(412);
    expect(stale.json.type).toBe(problemType(412, 'etag-mismatch'));
    const c = await call(path(`/evaluation-datasets/${id}/cases`), { token: t, body: CASES[0] });
    expect(c.status).toBe(201);
    expect(c.json).toMatchObject({ seq: 1, namespace: 'knowledge', expected_answer: 'POOL SIZE IS 50' });
    expect((await call(path(`/evaluation-datasets/${id}/cases/${c.json.id}`), { token: t, method: 'DELETE' })).status).toBe(204);
    expect((await call(path(`/evaluation-datasets/${id}/cases/${c.json.id}`), { token: t, method: 'DELETE' })).status).toBe(404);
    expect((await call(path(`/evaluation-datasets/${id}`), { token: t, method: 'DELETE' })).status).toBe(204);
    expect((await call(path(`/evaluation-datasets/${id}`), { token: t })).status).toBe(404);
  });

  it('refuses bad cases with their problem: no expectation, a pattern RE2 does not take, an unknown namespace', async () => {
    const t = owner.access_token;
    const id = (await call(path('/evaluation-datasets'), { token: t, body: { name: 'Bad input' } })).json.id;
    const cases = path(`/evaluation-datasets/${id}/cases`);
    expect((await call(cases, { token: t, body: { input: 'no expectation' } })).status).toBe(422);
    const lookbehind = await call(cases, { token: t, body: { input: 'q', answer_pattern: '(?<=a)b' } });
    expect(lookbehind.status).toBe(422);
    expect(lookbehind.json.errors).toEqual([
      expect.objectContaining({ loc: ['body', 'answer_pattern'], msg: expect.stringContaining('RE2') }),
    ]);
    expect((await call(cases, { token: t, body: { input: 'q', expected_answer: 'a', namespace: 'facts' } })).status).toBe(422);
    const empty = await call(path('/evaluations'), { token: t, body: { dataset_id: id } });
    expect(empty.status).toBe(409);
    expect(empty.json.type).toBe(problemType(409, 'dataset-empty'));
  });

  it('imports JSON Lines, reporting bad lines by number, and exports what imports back', async () => {
    const t = owner.access_token;
    const id = (await call(path('/evaluation-datasets'), { token: t, body: { name: 'Imported' } })).json.id;
    const lines = [
      JSON.stringify(CASES[0]),
      '{"input": "broken',
      '',
      JSON.stringify({ input: 'nothing expected' }),
      JSON.stringify({ input: 'bad pattern', answer_pattern: '(a+' }),
      JSON.stringify(CASES[1]),
    ].join('\r\n');
    const imported = await call(path(`/evaluation-datasets/${id}/cases/import`), {
      token: t,
      rawBody: lines,
      contentType: 'application/jsonl',
    });
    expect(imported.status).toBe(200);
    expect(imported.json.imported).toBe(2);
    expect(imported.json.failed.map((f: Json) => f.line)).toEqual([2, 4, 5]);
    expect(imported.json.failed[0].detail).toContain('not JSON');
    expect(imported.json.failed[2].detail).toContain('answer_pattern');
    const exported = await call(path(`/evaluation-datasets/${id}/cases/export`), { token: viewer.access_token });
    expect(exported.headers.get('content-type')).toContain('application/jsonl');
    expect(
      exported.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([CASES[0], CASES[1]]);
    const wrongType = await call(path(`/evaluation-datasets/${id}/cases/import`), { token: t, rawBody: lines, contentType: 'text/csv' });
    expect(wrongType.status).toBe(415);
    const huge = await call(path(`/evaluation-datasets/${id}/cases/import`), {
      token: t,
      rawBody: `${JSON.stringify(CASES[0])}\n`.repeat(Math.ceil((10 * 1024 * 1024) / 150) + 1000),
      contentType: 'application/jsonl',
    });
    expect(huge.status).toBe(413);
    expect(huge.json.status).toBe(413);
    expect((await call(path(`/evaluation-datasets/${id}`), { token: t })).json.case_count).toBe(2);
    // A retried import with the same Idempotency-Key answers the first result and adds nothing.
    const once = {
      token: t,
      rawBody: JSON.stringify(CASES[2]),
      contentType: 'application/jsonl',
      headers: { 'idempotency-key': 'import-1' },
    };
    expect((await call(path(`/evaluation-datasets/${id}/cases/import`), once)).json.imported).toBe(1);
    const again = await call(path(`/evaluation-datasets/${id}/cases/import`), once);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await call(path(`/evaluation-datasets/${id}`), { token: t })).json.case_count).toBe(3);
  });
});

describe('evaluations', () => {
  let datasetId: string;
  let first: Json;

  it("scores every case through the Brain's search: recall@k, MRR and the answer evaluators", async () => {
    const t = owner.access_token;
    datasetId = (await call(path('/evaluation-datasets'), { token: t, body: { name: 'Brain quality' } })).json.id;
    const text = CASES.map((c) => JSON.stringify(c)).join('\n');
    expect(
      (await call(path(`/evaluation-datasets/${datasetId}/cases/import`), { token: t, rawBody: text, contentType: 'application/jsonl' }))
        .json.imported,
    ).toBe(CASES.length);
    first = await evaluate(datasetId, 'before');
    expect(first).toMatchObject({ status: 'succeeded', cases_scored: CASES.length, attempt: 1, error: null });
    // Four of the five expected memories exist and rank first; the fifth is not in the Brain.
    expect(metric(first, 'recall@1')).toBe(0.8);
    expect(metric(first, 'recall@5')).toBe(0.8);
    expect(metric(first, 'recall@10')).toBe(0.8);
    expect(metric(first, 'mrr')).toBe(0.8);
    expect(metric(first, 'contains_pass_rate')).toBe(1);
    expect(metric(first, 'regex_pass_rate')).toBe(1);
    const results = (await call(path(`/evaluations/${first.id}/results`), { token: viewer.access_token })).json.results as Json[];
    expect(results.map((r) => r.first_relevant_rank)).toEqual([1, 1, 1, null, 1]);
    expect(results[0].found[0]).toEqual({ namespace: 'knowledge', key: 'services/checkout/db-pool' });
    expect(results[4].answer).toContain('TLS certificate');
    const listed = (await call(path(`/evaluations?dataset_id=${datasetId}`), { token: viewer.access_token })).json.evaluations as Json[];
    expect(listed.map((e) => e.id)).toEqual([first.id]);
  });

  it('compares a second evaluation after the memories changed: deltas and the cases that moved', async () => {
    const brain = platform.ctx.clients.brain;
    await brain.putMemory({
      organizationId: org,
      namespace: Namespace.KNOWLEDGE,
      key: 'runbooks/kafka-lag',
      title: 'Kafka consumer lag',
      content: 'When Kafka consumer lag grows, add partitions and scale the consumers out.',
    });
    await brain.deleteMemory({ organizationId: org, namespace: Namespace.KNOWLEDGE, key: 'services/search/cache' });
    const second = await evaluate(datasetId, 'after');
    expect(metric(second, 'mrr')).toBe(0.8);
    const compared = await call(path(`/evaluations/${second.id}/comparison?base=${first.id}`), { token: viewer.access_token });
    expect(compared.status).toBe(200);
    expect(compared.json.cases_compared).toBe(CASES.length);
    expect(compared.json.metrics.find((m: Json) => m.name === 'mrr')).toEqual({ name: 'mrr', base: 0.8, head: 0.8, delta: 0 });
    const changes = compared.json.changed_cases.map((c: Json) => [c.input, c.change, c.base_rank, c.head_rank]);
    expect(changes).toEqual([
      [CASES[2].input, 'regressed', 1, null],
      [CASES[3].input, 'improved', null, 1],
    ]);
  });

  it('keeps tenants apart and records the changes in the audit log', async () => {
    const mine = (await call(path('/evaluations'), { token: owner.access_token })).json.evaluations as Json[];
    expect((await call(path('/evaluations'), { token: other.access_token })).status).toBe(403);
    const theirs = `/organizations/${other.organizationId}`;
    expect((await call(`${theirs}/evaluations/${mine[0].id}`, { token: other.access_token })).status).toBe(404);
    expect((await call(`${theirs}/evaluation-datasets/${datasetId}/cases`, { token: other.access_token })).status).toBe(404);
    expect((await call(`${theirs}/evaluations`, { token: other.access_token, body: { dataset_id: datasetId } })).status).toBe(404);
    const events = async (query: string) =>
      (await call(path(`/audit-events?${query}`), { token: owner.access_token })).json.events as Json[];
    for (const action of ['createEvaluationDataset', 'importEvaluationCases', 'createEvaluation'])
      expect((await events(`action=${action}&outcome=success`)).length).toBeGreaterThan(0);
  });

  it('asks the LLM judge behind LLM_URL when asked for, and records a verdict it cannot read as the case error', async () => {
    const t = owner.access_token;
    const id = (await call(path('/evaluation-datasets'), { token: t, body: { name: 'Judged' } })).json.id;
    const cases = [
      { input: 'How many connections does the checkout database pool hold?', namespace: 'knowledge', expected_answer: '50 connections' },
      { input: 'What do I do when the database disk is full?', namespace: 'knowledge', expected_answer: 'restart the payment service' },
      { input: '[prose] What is the search cache TTL?', namespace: 'knowledge', expected_answer: '300 seconds' },
    ];
    await call(path(`/evaluation-datasets/${id}/cases/import`), {
      token: t,
      rawBody: cases.map((c) => JSON.stringify(c)).join('\n'),
      contentType: 'application/jsonl',
    });
    const before = model.requests.length;
    const created = await call(path('/evaluations'), { token: t, body: { dataset_id: id, evaluators: ['llm_judge'] } });
    expect(created.json.evaluators).toEqual(['llm_judge']);
    const done = await until(async () => (await call(path(`/evaluations/${created.json.id}`), { token: t })).json, isEvaluationFinished, {
      what: 'the evaluation to end',
      timeoutMs: 60_000,
    });
    expect(done.status).toBe('succeeded');
    expect(done.metrics).toEqual([{ name: 'llm_judge_pass_rate', value: 0.3333, cases: 3 }]);
    const results = (await call(path(`/evaluations/${done.id}/results`), { token: t })).json.results as Json[];
    expect(results.map((r) => r.scores)).toEqual([
      [{ name: 'llm_judge', value: 0.9, passed: true }],
      [{ name: 'llm_judge', value: 0.1, passed: false }],
      [{ name: 'llm_judge', value: 0, passed: false }],
    ]);
    expect(results[2].error).toContain('did not answer the JSON verdict');
    const asked = model.requests.slice(before);
    expect(asked).toHaveLength(3);
    expect(asked[0]).toMatchObject({ model: 'judge-1', authorization: 'Bearer sk-judge-0123456789' });
    expect(asked[0].messages[1].content).toContain('pool size is 50 connections');
  });
});
