// A candidate memory read out of a seeding source, before the Brain sees it: its key (derived
// from the file's path and the heading it sits under), title, text and entities, or why the
// piece of the source cannot become a memory (a malformed JSONL line, with its line number).
import { createHash } from 'node:crypto';
import { extractPatterns } from '../../../entity-graph/extractor/patterns.ts';

export interface Candidate {
  /** The memory's key, before the run's key prefix. */
  key: string;
  title: string;
  content: string;
  tags: string[];
  entities: string[];
  /** knowledge or episodes; absent: the run's namespace. */
  namespace?: string;
  /** ISO 8601, from a JSONL line. */
  eventTime?: string;
  /** Where in the source: `docs/deploy.md#rollback`, `memories.jsonl line 7`. */
  origin: string;
  /** Set when this piece of the source is not a memory: why. */
  rejected?: string;
}

/** The Brain's limits (docs/brain.md, Memory). */
export const MAX_KEY = 200;
export const MAX_TITLE = 300;
export const MAX_CONTENT = 32_000;
const MAX_ENTITIES = 64;

/** A path or heading as key characters: lower case, [a-z0-9._/-], no empty segments. */
export function slug(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9._/-]+/g, '-')
    .replace(/\/{2,}/g, '/')
    .replace(/-{2,}/g, '-')
    .split('/')
    .map((s) => s.replace(/^[-.]+|[-.]+$/g, ''))
    .filter(Boolean)
    .join('/');
}

/** A key within `max` characters: a long one keeps its start and gets a hash of the whole, so keys stay distinct. */
export function fitKey(key: string, max = MAX_KEY): string {
  if (key.length <= max) return key;
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 10);
  return `${key.slice(0, max - 11).replace(/[/-]+$/, '')}-${hash}`;
}

/** Makes keys unique within a source: a second `a/b` becomes `a/b-2`. */
export function uniqueKeys(candidates: Candidate[]): Candidate[] {
  const seen = new Map<string, number>();
  for (const c of candidates) {
    if (c.rejected) continue;
    const n = (seen.get(c.key) ?? 0) + 1;
    seen.set(c.key, n);
    if (n > 1) c.key = fitKey(`${c.key}-${n}`);
  }
  return candidates;
}

/**
 * The names a text talks about, read by the entity graph's model-free extractor (the same one the
 * graph runs on every memory): the subjects and objects of "X depends on Y", "X runs on Y", …
 */
export function entitiesOf(text: string, given: string[] = []): string[] {
  const out = new Map<string, string>();
  const add = (name: string) => {
    const n = name.trim();
    if (n && n.length <= 200 && !out.has(n.toLowerCase()) && out.size < MAX_ENTITIES) out.set(n.toLowerCase(), n);
  };
  given.forEach(add);
  for (const r of extractPatterns({ text: text.slice(0, MAX_CONTENT), entities: given })) {
    add(r.subject);
    add(r.object);
  }
  return [...out.values()];
}

/** Splits text longer than the Brain takes at paragraph, then line, boundaries. */
export function splitLong(text: string, max = MAX_CONTENT): string[] {
  if (text.length <= max) return [text];
  const parts: string[] = [];
  let current = '';
  for (const para of text.split(/(?<=\n\n)/)) {
    for (let piece = para; piece.length > 0; ) {
      const room = max - current.length;
      if (piece.length <= room) {
        current += piece;
        break;
      }
      if (current) {
        parts.push(current);
        current = '';
        continue;
      }
      parts.push(piece.slice(0, max));
      piece = piece.slice(max);
    }
  }
  if (current) parts.push(current);
  return parts;
}

/** A file's name without its folders and extension, for titles. */
export function baseName(path: string): string {
  const name = path.split('/').pop() ?? path;
  return name.replace(/\.[A-Za-z0-9]+$/, '');
}

/** A path without its extension, as key characters. */
export function pathKey(path: string): string {
  return slug(path.replace(/\.[A-Za-z0-9]+$/, '')) || 'document';
}
