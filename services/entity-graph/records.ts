// What the entity-graph service stores (records port), and the ids and names that tie it together.
//
// - graph_entities     `{org}/{entityId}`: an entity; merged-away entities stay as tombstones
//                      (`mergedInto`) for TOMBSTONE_TTL_MS so that other replicas' indexes learn of it.
// - graph_names        `{org}/{normalized name}`: which entity a name or alias belongs to; the
//                      write-time authority that keeps two replicas from creating one name twice.
// - graph_relationships `{org}/{relationshipId}`: an edge and its citations; with its last
//                      citation it becomes a tombstone (`deleted`).
// - graph_assertions   `{org}/{namespace}/{key}`: what one memory asserts, so that an update or a
//                      deletion retracts exactly that.
// - graph_sequences    `{org}`: the write sequence every entity and relationship write takes a
//                      number from (`seq`), which replicas' in-memory indexes refresh by.
import { createHash } from 'node:crypto';
import type { CitationOrigin } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { RecordDoc } from '../common/storage/records/interface.ts';
import type { KindName } from './vocabulary.ts';

export const TOMBSTONE_TTL_MS = 7 * 24 * 3600_000;

export interface EntityRecord extends RecordDoc {
  organizationId: string;
  entityId: string;
  name: string;
  kind: KindName;
  aliases: string[];
  description: string;
  /** Normalized name and aliases: what resolves to this entity. */
  names: string[];
  createdAt: number;
  updatedAt: number;
  version: number;
  /** Storage revision for compare-and-set (+1 on every write). */
  rev: number;
  seq: number;
  /** Set on the tombstone of an entity merged into another. */
  mergedInto?: string;
}

export interface NameRecord extends RecordDoc {
  organizationId: string;
  entityId: string;
}

export interface CitationRecord {
  namespace: string;
  key: string;
  version: number;
  origin: CitationOrigin;
  title: string;
  assertedAt: number;
}

export interface RelationshipRecord extends RecordDoc {
  organizationId: string;
  relationshipId: string;
  subjectId: string;
  predicate: string;
  objectId: string;
  citations: CitationRecord[];
  createdAt: number;
  updatedAt: number;
  rev: number;
  seq: number;
  deleted?: boolean;
}

export interface AssertionItem {
  relationshipId: string;
  origin: CitationOrigin;
}

export interface AssertionRecord extends RecordDoc {
  organizationId: string;
  namespace: string;
  key: string;
  version: number;
  items: AssertionItem[];
  /**
   * While a sync is being applied: every relationship it may have touched (the previous and the
   * new assertions), so that a sync after a crash retracts what the interrupted one left behind.
   */
  touched?: string[];
  rev: number;
}

export interface SequenceDoc extends RecordDoc {
  seq: number;
}

/** Case-folded, whitespace-collapsed name without a leading "the": the key names resolve by. */
export function normalizeName(name: string): string {
  return name.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase().replace(/^the /, '');
}

/** The entity's name or alias as it spells it, of a normalized one that resolves to it. */
export function spelling(entity: EntityRecord, normalized: string): string {
  return [entity.name, ...entity.aliases].find((n) => normalizeName(n) === normalized) ?? normalized;
}

/** A readable id for a new entity: "Payments API" → payments-api. */
export function slugOf(name: string): string {
  const slug = normalizeName(name)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug || 'entity';
}

export const ENTITY_ID = /^[a-z0-9][a-z0-9-]{0,63}$/;
export const RELATIONSHIP_ID = /^rel_[a-z2-7]{26}$/;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** rel_ + 26 base32 characters of SHA-256 over the triple: the same edge always gets the same id. */
export function relationshipIdOf(subjectId: string, predicate: string, objectId: string): string {
  const digest = createHash('sha256').update(`${subjectId}\u0000${predicate}\u0000${objectId}`).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 26) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length === 26) break;
  }
  return `rel_${out}`;
}

export const entityDocId = (organizationId: string, entityId: string) => `${organizationId}/${entityId}`;
export const nameDocId = (organizationId: string, normalized: string) => `${organizationId}/${normalized}`;
export const relationshipDocId = (organizationId: string, relationshipId: string) => `${organizationId}/${relationshipId}`;
export const assertionDocId = (organizationId: string, namespace: string, key: string) => `${organizationId}/${namespace}/${key}`;

export function isLiveEntity(record: EntityRecord | undefined): record is EntityRecord {
  return record !== undefined && record.mergedInto === undefined;
}

export function isLiveRelationship(record: RelationshipRecord | undefined): record is RelationshipRecord {
  return record !== undefined && !record.deleted;
}
