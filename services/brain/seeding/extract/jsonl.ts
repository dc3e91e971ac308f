// JSON Lines of memories into candidates: one object per line with `key` and `content`, and
// optionally `title`, `namespace` (knowledge or episodes), `tags`, `entities`, `event_time`. A
// line that is not such an object is a rejected candidate naming its line number; the other
// lines are seeded. Blank lines are skipped. The Brain validates each memory again on write.
import { type Candidate, entitiesOf } from './candidate.ts';

const strings = (v: unknown): string[] | undefined =>
  Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;

function lineCandidate(path: string, n: number, line: string): Candidate {
  const origin = `${path} line ${n}`;
  const rejected = (why: string): Candidate => ({
    key: '',
    title: '',
    content: '',
    tags: [],
    entities: [],
    origin,
    rejected: `line ${n}: ${why}`,
  });
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return rejected(`not JSON (${(err as Error).message})`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return rejected('must be a JSON object');
  const m = value as Record<string, unknown>;
  if (typeof m.key !== 'string' || m.key.trim() === '') return rejected('key: must be a non-empty string');
  if (typeof m.content !== 'string' || m.content.trim() === '') return rejected('content: must be a non-empty string');
  for (const field of ['title', 'namespace', 'event_time'] as const) {
    if (m[field] !== undefined && typeof m[field] !== 'string') return rejected(`${field}: must be a string`);
  }
  for (const field of ['tags', 'entities'] as const) {
    if (m[field] !== undefined && !strings(m[field])) return rejected(`${field}: must be an array of strings`);
  }
  if (typeof m.event_time === 'string' && !Number.isFinite(Date.parse(m.event_time))) {
    return rejected('event_time: must be an ISO 8601 date or date-time');
  }
  if (m.namespace !== undefined && m.namespace !== 'knowledge' && m.namespace !== 'episodes') {
    return rejected('namespace: must be knowledge or episodes');
  }
  const given = strings(m.entities) ?? [];
  return {
    key: m.key.trim(),
    title: (m.title as string | undefined) ?? '',
    content: m.content,
    tags: strings(m.tags) ?? [],
    entities: given.length > 0 ? given : entitiesOf(`${m.title ?? ''}. ${m.content}`),
    namespace: m.namespace as string | undefined,
    eventTime: m.event_time as string | undefined,
    origin,
  };
}

/** The candidates of one JSONL file at `path`, one per non-blank line. */
export function jsonlCandidates(path: string, text: string): Candidate[] {
  const out: Candidate[] = [];
  for (const [i, line] of text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .entries()) {
    if (line.trim() === '') continue;
    out.push(lineCandidate(path, i + 1, line));
  }
  return out;
}
