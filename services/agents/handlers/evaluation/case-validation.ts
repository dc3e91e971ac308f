// What a case may hold, checked by the service whatever the caller (the REST API checks the same
// limits first, for its 422). A pattern is compiled with RE2JS, RE2's port to JavaScript: its
// matching is linear in the text, so no pattern can backtrack catastrophically, and syntax RE2
// does not have (backreferences, lookarounds) is refused here rather than failing at scoring.
import { RE2JS } from 're2js';
import type { MemoryKey, NewCase } from '../../../../gen/mindgate/agents/v1/evaluation_pb.js';
import { invalid, requireText } from '../../../common/rpc/validate.ts';
import type { MemoryKeyRecord } from './records.ts';

export const LIMITS = {
  input: 4_000,
  alert: 20_000,
  expectedAnswer: 20_000,
  pattern: 1_000,
  memories: 50,
  key: 200,
  labels: 10,
  label: 100,
} as const;

export const NAMESPACES = ['knowledge', 'episodes'] as const;

/** Compiles a pattern, or says why it is not one. */
export function compilePattern(pattern: string): RE2JS {
  return RE2JS.compile(pattern);
}

export function patternProblem(pattern: string): string | undefined {
  if (pattern.length > LIMITS.pattern) return `must be at most ${LIMITS.pattern} characters`;
  try {
    compilePattern(pattern);
    return undefined;
  } catch (err) {
    return `is not an RE2 regular expression (${(err as Error).message})`;
  }
}

function memoryKeys(field: string, keys: MemoryKey[]): MemoryKeyRecord[] {
  if (keys.length > LIMITS.memories) invalid(field, `must have at most ${LIMITS.memories} items`);
  return keys.map((k, i) => {
    if (!(NAMESPACES as readonly string[]).includes(k.namespace)) invalid(`${field}[${i}].namespace`, 'must be knowledge or episodes');
    if (k.key.trim() === '' || k.key.length > LIMITS.key) invalid(`${field}[${i}].key`, `must be 1-${LIMITS.key} characters`);
    return { namespace: k.namespace, key: k.key };
  });
}

/** The case as it will be stored, or INVALID_ARGUMENT naming the field (under `at`). */
export function validCase(c: NewCase, at: string) {
  const input = requireText(`${at}.input`, c.input.trim(), LIMITS.input, { required: true });
  if (c.namespace !== '' && !(NAMESPACES as readonly string[]).includes(c.namespace))
    invalid(`${at}.namespace`, 'must be knowledge, episodes or empty (both)');
  const problem = c.answerPattern === '' ? undefined : patternProblem(c.answerPattern);
  if (problem) invalid(`${at}.answer_pattern`, problem);
  if (c.labels.length > LIMITS.labels) invalid(`${at}.labels`, `must have at most ${LIMITS.labels} items`);
  for (const [i, label] of c.labels.entries())
    if (label.trim() === '' || label.length > LIMITS.label) invalid(`${at}.labels[${i}]`, `must be 1-${LIMITS.label} characters`);
  const expectedMemories = memoryKeys(`${at}.expected_memories`, c.expectedMemories);
  const expectedAnswer = requireText(`${at}.expected_answer`, c.expectedAnswer, LIMITS.expectedAnswer);
  if (expectedMemories.length === 0 && expectedAnswer.trim() === '' && c.answerPattern === '')
    invalid(at, 'give expected_memories, expected_answer or answer_pattern: a case needs an expectation');
  return {
    input,
    alert: requireText(`${at}.alert`, c.alert, LIMITS.alert),
    namespace: c.namespace,
    expectedMemories,
    expectedAnswer,
    answerPattern: c.answerPattern,
    labels: c.labels,
  };
}
