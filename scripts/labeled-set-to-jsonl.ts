// Turns one of the Brain's labeled retrieval sets (test/fixtures/brain-quality.json,
// brain-conversations.json: memories and queries with the keys of their relevant memories) into
// evaluation cases as JSON Lines, for importEvaluationCases: one case per query, searched in the
// query's namespace, expecting its relevant memories, labelled with its kind. The memories
// themselves are the organization's to write (the evaluation searches what its Brain holds).
//
//   ./node_modules/.bin/node scripts/labeled-set-to-jsonl.ts test/fixtures/brain-quality.json > quality.jsonl
//   curl -X POST "$API/organizations/$ORG/evaluation-datasets/$DATASET/cases/import" \
//     -H "authorization: Bearer $TOKEN" -H 'content-type: application/jsonl' --data-binary @quality.jsonl
//
// test/integration/evaluation-labeled-set.test.ts runs this command and imports a slice of its lines.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface LabeledSet {
  queries: { namespace: 'knowledge' | 'episodes'; query: string; relevant: string[]; kind: string }[];
}

/** The cases of a labeled set, as importEvaluationCases takes them. */
export function labeledCases(set: LabeledSet) {
  return set.queries.map((q) => ({
    input: q.query,
    namespace: q.namespace,
    expected_memories: q.relevant.map((key) => ({ namespace: q.namespace, key })),
    labels: [q.kind],
  }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node scripts/labeled-set-to-jsonl.ts <labeled-set.json>\n');
    process.exit(2);
  }
  const set = JSON.parse(fs.readFileSync(file, 'utf8')) as LabeledSet;
  for (const c of labeledCases(set)) process.stdout.write(`${JSON.stringify(c)}\n`);
}
