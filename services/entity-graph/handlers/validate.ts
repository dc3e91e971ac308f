// Input checks shared by the entity-graph handlers; each failure is INVALID_ARGUMENT naming the field.
import { EntityKind, type RelationshipInput } from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { invalid } from '../../common/rpc/validate.ts';
import { normalizePredicate, kindName, type KindName } from '../vocabulary.ts';

export const MEMORY_KEY = /^[A-Za-z0-9._:/-]{1,200}$/;
export const MAX_NAME = 200;

export function requireNamespace(field: string, value: string, fallback?: string): string {
  const ns = value || fallback || '';
  if (ns !== 'episodes' && ns !== 'knowledge') invalid(field, 'must be "episodes" or "knowledge"');
  return ns;
}

export function requireMemoryKey(field: string, value: string): string {
  if (!value) invalid(field, 'is required');
  if (!MEMORY_KEY.test(value)) invalid(field, 'must be 1-200 characters of [A-Za-z0-9._:/-]');
  return value;
}

export function requireName(field: string, value: string): string {
  const name = value.trim();
  if (!name) invalid(field, 'is required');
  if (name.length > MAX_NAME) invalid(field, `must be at most ${MAX_NAME} characters, got ${name.length}`);
  return name;
}

export function requirePredicate(field: string, value: string): string {
  const predicate = normalizePredicate(value);
  if (!value.trim()) invalid(field, 'is required');
  return predicate ?? invalid(field, 'must be 1-64 characters: a letter, then letters, digits or underscores (spaces and dashes become _)');
}

export function requireKind(field: string, kind: EntityKind): KindName {
  if (kind === EntityKind.UNSPECIFIED) return '';
  const name = kindName(kind);
  return name || invalid(field, 'is not a known kind');
}

/** An explicit relationship as given, or the reason it is refused. */
export function checkRelationship(
  field: string,
  r: RelationshipInput,
): { subject: string; predicate: string; object: string; subjectKind: KindName; objectKind: KindName } | string {
  try {
    const subject = requireName(`${field}.subject`, r.subject);
    const object = requireName(`${field}.object`, r.object);
    const predicate = requirePredicate(`${field}.predicate`, r.predicate);
    return {
      subject,
      predicate,
      object,
      subjectKind: requireKind(`${field}.subject_kind`, r.subjectKind),
      objectKind: requireKind(`${field}.object_kind`, r.objectKind),
    };
  } catch (err) {
    return err instanceof Error ? err.message.replace(/^\[invalid_argument\] /, '') : String(err);
  }
}

export function bounded(field: string, value: number, max: number, fallback: number, min = 1): number {
  if (value === 0) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) invalid(field, `must be from ${min} to ${max} (0 for ${fallback})`);
  return value;
}
