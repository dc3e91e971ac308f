import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import {
  MemoryRefSchema,
  MemorySchema,
  Namespace,
  OutcomeStatsSchema,
  SourceSchema,
  type Memory,
} from '../../gen/mindgate/brain/v1/brain_pb.js';
import { createHash } from 'node:crypto';
import type { RecordDoc } from '../common/storage/records/interface.ts';
import type { VectorPoint } from '../common/storage/vectors/interface.ts';

export type NamespaceName = 'episodes' | 'knowledge';

export interface SourceRecord {
  clientId: string;
  userId: string;
  clientName: string;
  /** Absent in memories written before it was recorded. */
  userName?: string;
}

export interface OutcomeStatsRecord {
  worked: number;
  failed: number;
  lastWorkedAt?: number;
  lastWorkedBy?: string;
  lastFailedAt?: number;
  lastFailedBy?: string;
  lastFailedNote?: string;
}

/**
 * A memory as the records store holds it. A deleted memory stays for a while as a tombstone
 * (`deleted: true`, empty text, `expiresAt` set) so that other replicas' lexical indexes learn
 * of the deletion when they refresh (see search/index-registry.ts); reads skip tombstones.
 */
export interface MemoryRecord extends RecordDoc {
  organizationId: string;
  namespace: NamespaceName;
  key: string;
  title: string;
  content: string;
  tags: string[];
  entities: string[];
  /** Who last wrote it. */
  source: SourceRecord;
  /** Who first created it. */
  createdBy: SourceRecord;
  createdAt: number;
  updatedAt: number;
  /**
   * When what it says happened or became true (event-time.ts); absent on memories written before
   * event times existed, which use createdAt.
   */
  eventAt?: number;
  /** Content version seen by clients: 1 on create, +1 on every content update. */
  version: number;
  /** Storage revision for compare-and-set: +1 on every write, feedback included. */
  rev: number;
  /** Position in the (organization, namespace) write sequence; orders index refreshes. */
  seq: number;
  /** Hash of the normalized content (exact-duplicate detection). */
  contentHash: string;
  deleted?: boolean;
  stats: OutcomeStatsRecord;
  /** The memory this one corrects (written with `supersedes`). */
  supersedes?: MemoryRefRecord;
  /** The memory that corrects this one: this one is history, ranked below it. */
  supersededBy?: MemoryRefRecord;
  /**
   * Set by every write of the memory (and its deletion) in the same record write, cleared once
   * its vector has been verified: the reconciler (vector-sync.ts) works on records whose time
   * has come. The writer's own vector write normally lands long before.
   */
  vectorDue?: number;
  /** Relationships its writer stated (PutMemory.relationships), asserted in the entity graph. */
  relationships?: RelationshipRecord[];
  /**
   * Set by every write and deletion in the same record write while the entity graph has not yet
   * been told (graph-sync.ts); cleared once it has.
   */
  graphDue?: number;
}

export interface RelationshipRecord {
  subject: string;
  predicate: string;
  object: string;
}

/** A memory of the same organization, by namespace and key. */
export interface MemoryRefRecord {
  namespace: NamespaceName;
  key: string;
}

export function isLive(record: MemoryRecord | undefined): record is MemoryRecord {
  return record !== undefined && !record.deleted;
}

export function namespaceName(ns: Namespace): NamespaceName | undefined {
  if (ns === Namespace.EPISODES) return 'episodes';
  if (ns === Namespace.KNOWLEDGE) return 'knowledge';
  return undefined;
}

export function namespaceEnum(name: NamespaceName): Namespace {
  return name === 'episodes' ? Namespace.EPISODES : Namespace.KNOWLEDGE;
}

/** Record id: organization ids and namespaces never contain '/', so the key may. */
export function memoryId(organizationId: string, namespace: NamespaceName, key: string): string {
  return `${organizationId}/${namespace}/${key}`;
}

/** Vector point id within an organization. */
export function memoryPointId(namespace: NamespaceName, key: string): string {
  return `${namespace}/${key}`;
}

/**
 * The text that is embedded: the title carries much of the meaning, and the fields around the
 * text (tags, entities) measurably help retrieval (see docs/brain.md).
 */
export function memoryText(record: Pick<MemoryRecord, 'title' | 'content' | 'tags' | 'entities'>): string {
  return [
    record.title,
    record.content,
    record.entities.length ? `about: ${record.entities.join(', ')}` : '',
    record.tags.length ? `tags: ${record.tags.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * Fingerprint of the embedded text, stored in the vector's payload as `text`: a vector whose
 * fingerprint differs from its record's was made from another version of the memory.
 */
export function vectorTextHash(record: Pick<MemoryRecord, 'title' | 'content' | 'tags' | 'entities'>): string {
  return createHash('sha256').update(memoryText(record)).digest('base64url').slice(0, 22);
}

/** The vector point of a memory. */
export function memoryPoint(record: MemoryRecord, vector: Float32Array | number[]): VectorPoint {
  return {
    id: memoryPointId(record.namespace, record.key),
    organizationId: record.organizationId,
    vector,
    payload: {
      namespace: record.namespace,
      key: record.key,
      tags: record.tags,
      updatedAt: record.updatedAt,
      text: vectorTextHash(record),
    },
  };
}

export function refString(namespace: NamespaceName, key: string): string {
  return `${namespace}/${key}`;
}

export function toMemory(record: MemoryRecord): Memory {
  const ts = (ms: number | undefined) => (ms === undefined ? undefined : timestampFromMs(ms));
  return create(MemorySchema, {
    organizationId: record.organizationId,
    namespace: namespaceEnum(record.namespace),
    key: record.key,
    title: record.title,
    content: record.content,
    tags: record.tags,
    entities: record.entities,
    source: create(SourceSchema, record.source),
    createdBy: create(SourceSchema, record.createdBy ?? record.source),
    createTime: ts(record.createdAt),
    updateTime: ts(record.updatedAt),
    eventTime: ts(record.eventAt ?? record.createdAt),
    version: BigInt(record.version),
    stats: create(OutcomeStatsSchema, {
      worked: record.stats.worked,
      failed: record.stats.failed,
      lastWorkedAt: ts(record.stats.lastWorkedAt),
      lastFailedAt: ts(record.stats.lastFailedAt),
      lastFailedBy: record.stats.lastFailedBy ?? '',
      lastFailedNote: record.stats.lastFailedNote ?? '',
      lastWorkedBy: record.stats.lastWorkedBy ?? '',
    }),
    supersedes: refMessage(record.supersedes),
    supersededBy: refMessage(record.supersededBy),
  });
}

function refMessage(ref: MemoryRefRecord | undefined) {
  return ref ? create(MemoryRefSchema, { namespace: namespaceEnum(ref.namespace), key: ref.key }) : undefined;
}
