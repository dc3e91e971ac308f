// Earlier versions of memories (ListMemoryVersions, GetMemoryVersion), in the records collection
// `memory_versions`. The records port writes one document atomically and has no transactions,
// so a version cannot be saved in the same write as the memory that replaces it. It is written
// ahead instead, the way the outbox writes an event ahead of its change (common/events/outbox.ts):
//
//   1. before a write replaces version v of a memory, or a deletion removes it, version v is
//      saved under an id of its own (`{memory id}@{created at}.{v}`): a copy of what the store
//      already holds, so writing it twice (a retry, two racing writers) writes the same thing;
//   2. the memory is written (compare-and-set on its revision).
//
// A process that dies between 1 and 2 leaves a copy of the version that is still current; reads
// leave out a saved version while the memory is at it (see versionState), so no history is lost
// and none is invented, whichever process dies when. A deletion also saves a marker (who and when)
// beside the copy; the marker counts only while nothing replaced that version since (a deletion
// that lost its race to an update leaves a marker that reads ignore).
//
// `createdAt` (the memory's creation time) tells the memories a key held apart: a memory deleted
// and written again starts at version 1.
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { MemoryVersionSchema, SourceSchema, VersionState, type MemoryVersion } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { RecordDoc } from '../common/storage/records/interface.ts';
import { isLive, toMemory, type MemoryRecord, type NamespaceName, type SourceRecord } from './memory-record.ts';

export interface VersionRecord extends RecordDoc {
  kind: 'version';
  organizationId: string;
  namespace: NamespaceName;
  key: string;
  /** The memory's creation time: which of the memories the key held. */
  createdAt: number;
  version: number;
  /** When this version was written (the list is ordered by it). */
  updatedAt: number;
  /** The memory as it was, text and writer (stats are not kept per version). */
  memory: Pick<
    MemoryRecord,
    'title' | 'content' | 'tags' | 'entities' | 'source' | 'createdBy' | 'eventAt' | 'supersedes' | 'supersededBy'
  >;
}

export interface DeletionRecord extends RecordDoc {
  kind: 'deletion';
  organizationId: string;
  namespace: NamespaceName;
  key: string;
  createdAt: number;
  version: number;
  deletedAt: number;
  deletedBy: SourceRecord;
}

export type HistoryRecord = VersionRecord | DeletionRecord;

export function versionId(memoryDocId: string, createdAt: number, version: number): string {
  return `${memoryDocId}@${createdAt}.${version}`;
}

export function deletionId(memoryDocId: string, createdAt: number, version: number): string {
  return `${versionId(memoryDocId, createdAt, version)}.deleted`;
}

/** The copy of a stored memory's current version, saved before a write replaces it. */
export function versionOf(stored: MemoryRecord): VersionRecord {
  const { title, content, tags, entities, source, createdBy, eventAt, supersedes, supersededBy } = stored;
  return {
    _id: versionId(stored._id, stored.createdAt, stored.version),
    kind: 'version',
    organizationId: stored.organizationId,
    namespace: stored.namespace,
    key: stored.key,
    createdAt: stored.createdAt,
    version: stored.version,
    updatedAt: stored.updatedAt,
    memory: { title, content, tags, entities, source, createdBy, eventAt, supersedes, supersededBy },
  };
}

export function deletionOf(stored: MemoryRecord, deletedAt: number, deletedBy: SourceRecord): DeletionRecord {
  return {
    _id: deletionId(stored._id, stored.createdAt, stored.version),
    kind: 'deletion',
    organizationId: stored.organizationId,
    namespace: stored.namespace,
    key: stored.key,
    createdAt: stored.createdAt,
    version: stored.version,
    deletedAt,
    deletedBy,
  };
}

/** The memory as a version record holds it (the message's stats are empty). */
function memoryAt(v: VersionRecord): MemoryRecord {
  return {
    _id: '',
    organizationId: v.organizationId,
    namespace: v.namespace,
    key: v.key,
    ...v.memory,
    createdBy: v.memory.createdBy ?? v.memory.source,
    createdAt: v.createdAt,
    updatedAt: v.updatedAt,
    version: v.version,
    rev: 0,
    seq: 0,
    contentHash: '',
    stats: { worked: 0, failed: 0 },
  };
}

/** What follows a saved version: the version that replaced it, or the deletion that removed it. */
export interface Successor {
  /** The next version's write: when, and by whom. */
  next?: { updatedAt: number; source: SourceRecord };
  deletion?: DeletionRecord;
}

/** Whether the memory is (live) at this version now: its saved copy is then not history yet. */
export function isCurrent(live: MemoryRecord | undefined, v: { createdAt: number; version: number }): boolean {
  return isLive(live) && live.createdAt === v.createdAt && live.version === v.version;
}

export function currentVersion(live: MemoryRecord): MemoryVersion {
  return create(MemoryVersionSchema, { memory: toMemory(live), state: VersionState.CURRENT });
}

/**
 * A saved version as a message: replaced when a later version of the same memory exists, deleted
 * when a deletion marker exists and nothing replaced it; undefined when it has neither (a write
 * that died after saving it, or lost its race: the version is still current).
 */
export function historicVersion(v: VersionRecord, { next, deletion }: Successor): MemoryVersion | undefined {
  const ts = timestampFromMs;
  if (next) {
    return create(MemoryVersionSchema, {
      memory: toMemory(memoryAt(v)),
      state: VersionState.REPLACED,
      endTime: ts(next.updatedAt),
      endedBy: create(SourceSchema, next.source),
    });
  }
  if (!deletion) return undefined;
  return create(MemoryVersionSchema, {
    memory: toMemory(memoryAt(v)),
    state: VersionState.DELETED,
    endTime: ts(deletion.deletedAt),
    endedBy: create(SourceSchema, deletion.deletedBy),
  });
}
