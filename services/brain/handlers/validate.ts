import { Code, ConnectError } from '@connectrpc/connect';
import type { MemoryRef, MemoryRelationship, Namespace, Source } from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { invalid } from '../../common/rpc/validate.ts';
import { normalizePredicate } from '../../entity-graph/vocabulary.ts';
import type { RefRecord } from '../items-record.ts';
import { namespaceName, type NamespaceName, type RelationshipRecord, type SourceRecord } from '../memory-record.ts';

export const MEMORY_KEY = /^[A-Za-z0-9._:/-]{1,200}$/;

export function requireNamespace(ns: Namespace, field = 'namespace'): NamespaceName {
  return namespaceName(ns) ?? invalid(field, 'must be NAMESPACE_EPISODES or NAMESPACE_KNOWLEDGE');
}

export function requireKey(field: string, key: string): string {
  if (!key) invalid(field, 'is required');
  if (!MEMORY_KEY.test(key)) invalid(field, 'must be 1-200 characters of [A-Za-z0-9._:/-]');
  return key;
}

export function requireRefs(field: string, refs: MemoryRef[], min: number, max: number): RefRecord[] {
  if (refs.length < min) invalid(field, min === 1 ? 'must name at least one memory' : `must name at least ${min} memories`);
  if (refs.length > max) invalid(field, `must have at most ${max} items, got ${refs.length}`);
  const out: RefRecord[] = [];
  refs.forEach((ref, i) => {
    const r = { namespace: requireNamespace(ref.namespace, `${field}[${i}].namespace`), key: requireKey(`${field}[${i}].key`, ref.key) };
    if (!out.some((o) => o.namespace === r.namespace && o.key === r.key)) out.push(r);
  });
  return out;
}

export function sourceOf(source: Source | undefined): SourceRecord {
  const clip = (s: string | undefined) => (s ?? '').slice(0, 200);
  return {
    clientId: clip(source?.clientId),
    userId: clip(source?.userId),
    clientName: clip(source?.clientName),
    userName: clip(source?.userName),
  };
}

export function notFound(message: string): never {
  throw new ConnectError(message, Code.NotFound);
}

/** Relationships a writer states, checked as the entity graph will take them (predicates normalized). */
export function requireRelationships(field: string, list: MemoryRelationship[]): RelationshipRecord[] {
  if (list.length > 64) invalid(field, `must have at most 64 items, got ${list.length}`);
  return list.map((r, i) => {
    const name = (part: 'subject' | 'object') => {
      const value = r[part].trim();
      if (!value) invalid(`${field}[${i}].${part}`, 'is required');
      if (value.length > 200) invalid(`${field}[${i}].${part}`, 'must be at most 200 characters');
      return value;
    };
    const subject = name('subject');
    const object = name('object');
    if (!r.predicate.trim()) invalid(`${field}[${i}].predicate`, 'is required');
    const predicate =
      normalizePredicate(r.predicate) ??
      invalid(`${field}[${i}].predicate`, 'must be a word or phrase of letters, digits and underscores (depends_on, runs on, ...)');
    return { subject, predicate, object };
  });
}

export function sameRelationships(a: RelationshipRecord[] | undefined, b: RelationshipRecord[]): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b);
}
