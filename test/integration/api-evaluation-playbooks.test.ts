// Evaluating playbooks over the real REST API: two versions of one playbook, evaluated over one
// dataset (each case a run of the version, worked by the platform's built-in playbook runner, its
// Brain reads and output scored by the dataset's evaluators), then compared: the cases whose
// scores moved and the deltas of the aggregates. Also: the LLM judge (a scripted chat-completions
// server) grading the runs' outputs, the subject's checks (a version the playbook does not have, an
// input it does not declare, one of another organization, a playbook never published), and a case
// whose input does not fit the playbook.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { problemType } from '../../edge/api/problems.ts';
import { startChatServer, type ChatRequest, type ChatServer } from '../support/chat-server.ts';
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
let datasetId: string;
let playbookId: string;
const call = restClient(() => api);
const path = (p: string) => `/organizations/${org}${p}`;

const MEMORIES = [
  ['services/checkout/db-pool', 'Checkout database pool', 'The checkout database connection pool holds 50 connections.'],
  ['runbooks/disk-full', 'Disk full on the database host', 'When the database disk fills, rotate the WAL archive and grow the volume.'],
  ['services/search/cache', 'Search result cache', 'The search service caches query results in Redis for 300 seconds.'],
] as const;

const CASES = [
  {
    input: 'How many connections does the checkout database pool hold?',
    expected_memories: [{ namespace: 'knowledge', key: 'services/checkout/db-pool' }],
    expected_answer: '50 connections',
  },
  {
    input: 'What do I do when the database disk is full?',
    expected_memories: [{ namespace: 'knowledge', key: 'runbooks/disk-full' }],
    answer_pattern: 'rotate the (WAL|wal) archive',
  },
  {
    input: 'How long does the search service cache query results?',
    expected_memories: [{ namespace: 'knowledge', key: 'services/search/cache' }],
    expected_answer: '300 seconds',
  },
];

/** A playbook that answers with the content of the first memory its one Brain read finds. */
const answerer = (query: string) => ({
  name: 'Answer from the Brain',
  instructions: 'Look the question up in the knowledge namespace and answer with what is found.',
  inputs: [{ name: 'question', type: 'string', required: true }],
  namespaces: ['knowledge'],
  steps: [{ id: 'lookup', kind: 'brain_read', namespace: 'knowledge', query, limit: 1 }],
  output: '{{ steps.lookup.result.memories[0].content }}',
});

async function evaluate(subject: Json, label: string): Promise<Json> {
  const created = await call(path('/evaluations'), { token: owner.access_token, body: { dataset_id: datasetId, subject, label } });
  expect(created.status).toBe(201);
  return until(
    async () => (await call(path(`/evaluations/${created.json.id}`), { token: owner.access_token })).json,
    isEvaluationFinished,
    { what: 'the evaluation to end', timeoutMs: 120_000 },
  );
}

const results = async (evaluationId: string) =>
  (await call(path(`/evaluations/${evaluationId}/results`), { token: owner.access_token })).json.results as Json[];
const metric = (evaluation: Json, name: string) => evaluation.metrics.find((m: Json) => m.name === name)?.value;

/** The judge: passes an answer that holds the expected text. */
function judge(req: ChatRequest) {
  const prompt = req.messages.find((m) => m.role === 'user')?.content ?? '';
  const expected = /Expected answer:\n(.*)\n\nAnswer to grade:/s.exec(prompt)?.[1] ?? '';
  const answer = prompt.split('Answer to grade:\n')[1] ?? '';
  const pass = answer.toLowerCase().includes(expected.toLowerCase());
  return { content: `{"pass": ${pass}, "score": ${pass ? 1 : 0}, "reason": "compared"}` };
}

beforeAll(async () => {
  model = await startChatServer(judge);
  platform = await startOAuthTestPlatform({ EVALUATION_POLL_MS: '50', RUNNER_POLL_MS: '50', LLM_URL: model.url, LLM_MODEL: 'judge-1' });
  api = platform.ctx.config.publicUrls.api;
  owner = await obtainAccessToken(platform, { resource: api });
  other = await obtainAccessToken(platform, { resource: api });
  org = owner.organizationId;
  for (const [key, title, content] of MEMORIES)
    await platform.ctx.clients.brain.putMemory({ organizationId: org, namespace: Namespace.KNOWLEDGE, key, title, content });
  const dataset = await call(path('/evaluation-datasets'), { token: owner.access_token, body: { name: 'Ops questions' } });
  datasetId = dataset.json.id;
  for (const c of CASES) {
    const added = await call(path(`/evaluation-datasets/${datasetId}/cases`), { token: owner.access_token, body: c });
    expect(added.status).toBe(201);
  }
  // Version 1 looks every question up as the checkout pool; version 2 looks up the question asked.
  const created = await call(path('/playbooks'), {
    token: owner.access_token,
    body: { document: answerer('checkout database connection pool'), publish: true },
  });
  expect(created.status).toBe(201);
  playbookId = created.json.id;
  const v2 = await call(path(`/playbooks/${playbookId}`), {
    token: owner.access_token,
    method: 'PUT',
    headers: { 'if-match': created.headers.get('etag')! },
    body: { document: answerer('{{ inputs.question }}') },
  });
  expect(v2.json).toMatchObject({ latest_version: 2, published_version: 1 });
}, 240_000);

afterAll(async () => {
  await platform?.stop();
  await model?.close();
});

describe('evaluating playbooks', () => {
  it('an evaluation run compares two playbook versions: per-case differences and aggregate deltas', async () => {
    const subject = { type: 'playbook', playbook_id: playbookId, input_name: 'question' };
    const first = await evaluate(subject, 'published (v1)');
    expect(first).toMatchObject({
      status: 'succeeded',
      case_total: 3,
      cases_scored: 3,
      subject: { type: 'playbook', playbook_id: playbookId, version: 1, input_name: 'question', timeout_seconds: 600 },
    });
    const second = await evaluate({ ...subject, version: 2 }, 'v2');
    expect(second).toMatchObject({ status: 'succeeded', cases_scored: 3, subject: { version: 2 } });

    // Version 1 finds the pool for every question: right for the first case only.
    expect(metric(first, 'recall@1')).toBeCloseTo(1 / 3, 3);
    expect(metric(first, 'contains_pass_rate')).toBe(0.5);
    expect(metric(first, 'regex_pass_rate')).toBe(0);
    expect(metric(second, 'recall@1')).toBe(1);
    expect(metric(second, 'contains_pass_rate')).toBe(1);
    expect(metric(second, 'regex_pass_rate')).toBe(1);

    // Each case was one run of the version, whose output was the answer and whose read was found.
    const byCase = await results(second.id);
    expect(byCase.map((r) => r.found)).toEqual(CASES.map((c) => c.expected_memories));
    expect(byCase[2]).toMatchObject({ answer: MEMORIES[2][2], first_relevant_rank: 1, error: null });
    for (const r of byCase) {
      const run = await call(path(`/runs/${r.run_id}`), { token: owner.access_token });
      expect(run.json).toMatchObject({ status: 'succeeded', playbook_id: playbookId, playbook_version: 2, inputs: { question: r.input } });
      const steps = await call(path(`/runs/${r.run_id}/steps`), { token: owner.access_token });
      expect(steps.json.steps.map((s: Json) => s.kind)).toEqual(['brain_read']);
    }

    const compared = await call(path(`/evaluations/${second.id}/comparison?base=${first.id}`), { token: owner.access_token });
    expect(compared.status).toBe(200);
    expect(compared.json.cases_compared).toBe(3);
    const delta = (name: string) => compared.json.metrics.find((m: Json) => m.name === name);
    expect(delta('recall@1')).toMatchObject({ head: 1, delta: 0.6667 });
    expect(delta('contains_pass_rate')).toMatchObject({ base: 0.5, head: 1, delta: 0.5 });
    expect(delta('regex_pass_rate')).toMatchObject({ base: 0, head: 1, delta: 1 });
    // The first case answered the same under both versions; the other two improved.
    const firstResults = await results(first.id);
    expect(compared.json.changed_cases).toEqual([
      expect.objectContaining({
        case_id: byCase[1].case_id,
        change: 'improved',
        base_rank: null,
        head_rank: 1,
        base_run_id: firstResults[1].run_id,
        head_run_id: byCase[1].run_id,
      }),
      expect.objectContaining({ case_id: byCase[2].case_id, change: 'improved', base_rank: null, head_rank: 1 }),
    ]);
    expect(compared.json.changed_cases[1].head_scores).toContainEqual({ name: 'contains', value: 1, passed: true });
    expect(compared.json.changed_cases[1].base_scores).toContainEqual({ name: 'contains', value: 0, passed: false });
    expect(new Set([...firstResults, ...byCase].map((r) => r.run_id)).size).toBe(6);
  }, 180_000);

  it("has the LLM judge grade each run's output against the expected answer", async () => {
    const created = await call(path('/evaluations'), {
      token: owner.access_token,
      body: {
        dataset_id: datasetId,
        subject: { type: 'playbook', playbook_id: playbookId, version: 1, input_name: 'question' },
        evaluators: ['llm_judge'],
      },
    });
    const done = await until(
      async () => (await call(path(`/evaluations/${created.json.id}`), { token: owner.access_token })).json,
      isEvaluationFinished,
      { what: 'the evaluation to end', timeoutMs: 120_000 },
    );
    // Version 1 answers with the pool for every question: the judge passes the first case only.
    expect(done.metrics).toEqual([{ name: 'llm_judge_pass_rate', value: 0.5, cases: 2 }]);
    const graded = model.requests.filter((r) => r.model === 'judge-1').map((r) => r.messages.find((m) => m.role === 'user')!.content);
    expect(graded).toHaveLength(2);
    for (const prompt of graded) expect(prompt).toContain(`Answer to grade:\n${MEMORIES[0][2]}`);
  }, 120_000);

  it('checks the subject against the playbook: its version, its inputs, its organization', async () => {
    const create = (subject: Json, token = owner.access_token, organization = org) =>
      call(`/organizations/${organization}/evaluations`, { token, body: { dataset_id: datasetId, subject } });
    const undeclared = await create({ type: 'playbook', playbook_id: playbookId, input_name: 'service' });
    expect(undeclared.status).toBe(422);
    expect(undeclared.json.errors).toContainEqual(expect.objectContaining({ loc: ['body', 'subject', 'input_name'] }));
    const noVersion = await create({ type: 'playbook', playbook_id: playbookId, version: 7 });
    expect(noVersion.status).toBe(422);
    expect(noVersion.json.errors).toContainEqual(expect.objectContaining({ loc: ['body', 'subject', 'version'] }));
    const unknownType = await create({ type: 'model' });
    expect(unknownType.status).toBe(422);
    // With no version named, the published one is evaluated: a playbook without one cannot be.
    const draft = await call(path('/playbooks'), { token: owner.access_token, body: { document: { ...answerer('x'), name: 'Draft' } } });
    const unpublished = await create({ type: 'playbook', playbook_id: draft.json.id, input_name: 'question' });
    expect(unpublished.status).toBe(409);
    expect(unpublished.json.type).toBe(problemType(409, 'playbook-unpublished'));
    // Another organization's playbook is not found from here.
    const elsewhere = await call(`/organizations/${other.organizationId}/playbooks`, {
      token: other.access_token,
      body: { document: answerer('{{ inputs.question }}'), publish: true },
    });
    const foreign = await create({ type: 'playbook', playbook_id: elsewhere.json.id, input_name: 'question' });
    expect(foreign.status).toBe(404);
    expect(foreign.json.type).toBe(problemType(404));
  });

  it('records a case whose input does not fit the playbook as its error, with no run', async () => {
    // Without input_name each case's input must be a JSON object of the inputs: plain questions are not.
    const evaluation = await evaluate({ type: 'playbook', playbook_id: playbookId, version: 2 }, 'inputs as JSON');
    expect(evaluation).toMatchObject({ status: 'succeeded', cases_scored: 3 });
    const byCase = await results(evaluation.id);
    for (const r of byCase) {
      expect(r.run_id).toBeNull();
      expect(r.error).toContain('case.input: must be a JSON object');
      expect(r.scores.every((s: Json) => s.value === 0)).toBe(true);
    }
  }, 120_000);
});
