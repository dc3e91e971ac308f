// The Brain's labeled quality sets run as evaluations: the set's memories written to an
// organization's Brain (PutMemories), its queries imported as a dataset (the cases
// scripts/labeled-set-to-jsonl.ts makes), and an evaluation of the Brain search worked by the
// platform's evaluation worker through the Brain service, as the organization's agents search.
// Prints recall@1/5/10, MRR (over the 20 results asked for) by kind and overall, and the time the
// evaluation took, for docs/agents.md beside docs/brain.md's figures for the same sets.
//
//   ./node_modules/.bin/node test/bench/evaluation-brain-quality.bench.ts    (SETS=quality,conversations)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EvaluationStatus, type CaseResult } from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { labeledCases, type LabeledSet } from '../../scripts/labeled-set-to-jsonl.ts';
import { startTestPlatform } from '../support/platform.ts';
import { ingest, type LabeledMemory } from '../support/retrieval-eval.ts';
import { printTable } from './support.ts';

const SETS = (process.env.SETS ?? 'quality').split(',');
const LIMIT = 20;
const here = path.dirname(fileURLToPath(import.meta.url));
const platform = await startTestPlatform({
  EMBEDDINGS_THREADS: process.env.EMBEDDINGS_THREADS ?? '2',
  EVALUATION_POLL_MS: '100',
  LOG_LEVEL: 'warn',
});
const evaluation = platform.ctx.clients.evaluation;
const round = (x: number) => Math.round(x * 1000) / 1000;

function summary(results: CaseResult[], labels: Map<string, string>) {
  const groups = new Map<string, CaseResult[]>([['all', results]]);
  for (const r of results) {
    const kind = labels.get(r.caseId) ?? '?';
    groups.set(kind, [...(groups.get(kind) ?? []), r]);
  }
  return [...groups].map(([kind, rs]) => {
    const mean = (name: string) => round(rs.reduce((s, r) => s + (r.scores.find((x) => x.name === name)?.value ?? 0), 0) / rs.length);
    return {
      kind,
      n: rs.length,
      'R@1': mean('recall@1'),
      'R@5': mean('recall@5'),
      'R@10': mean('recall@10'),
      MRR: mean('reciprocal_rank'),
    };
  });
}

async function run(set: string) {
  const fixture = JSON.parse(fs.readFileSync(path.join(here, `../fixtures/brain-${set}.json`), 'utf8')) as LabeledSet & {
    memories: LabeledMemory[];
  };
  const organizationId = `org_eval${set}`;
  const t0 = performance.now();
  await ingest(platform.ctx.clients.brain, organizationId, fixture.memories);
  console.log(`${set}: ${fixture.memories.length} memories written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const { dataset } = await evaluation.createDataset({ organizationId, name: `brain-${set}`, createdBy: 'bench' });
  const datasetId = dataset!.datasetId;
  const cases = labeledCases(fixture).map((c) => ({
    input: c.input,
    namespace: c.namespace,
    expectedMemories: c.expected_memories,
    labels: c.labels,
  }));
  for (let i = 0; i < cases.length; i += 500) await evaluation.addCases({ organizationId, datasetId, cases: cases.slice(i, i + 500) });
  const started = performance.now();
  const { evaluation: queued } = await evaluation.createEvaluation({
    organizationId,
    datasetId,
    subject: { kind: { case: 'brainSearch', value: { limit: LIMIT } } },
    createdBy: 'bench',
  });
  const evaluationId = queued!.evaluationId;
  for (;;) {
    const { evaluation: e } = await evaluation.getEvaluation({ organizationId, evaluationId });
    if (e!.status === EvaluationStatus.SUCCEEDED || e!.status === EvaluationStatus.FAILED) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const seconds = (performance.now() - started) / 1000;
  const results: CaseResult[] = [];
  let pageToken = '';
  do {
    const page = await evaluation.listCaseResults({ organizationId, evaluationId, pageSize: 1_000, pageToken });
    results.push(...page.results);
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  const labels = new Map<string, string>();
  for (let pageToken = '', first = true; first || pageToken !== ''; first = false) {
    const page = await evaluation.listCases({ organizationId, datasetId, pageSize: 1_000, pageToken });
    for (const c of page.cases) labels.set(c.caseId, c.labels[0] ?? '?');
    pageToken = page.nextPageToken;
  }
  console.log(`${set}: ${results.length} cases evaluated in ${seconds.toFixed(1)} s (${(results.length / seconds).toFixed(1)} cases/s)`);
  printTable(`Evaluation of the Brain search on ${set} (limit ${LIMIT})`, summary(results, labels));
}

try {
  for (const set of SETS) await run(set);
} finally {
  await platform.stop();
}
