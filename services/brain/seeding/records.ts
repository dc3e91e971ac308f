// What the seeding service keeps in the records store, and its wire form. A run (`seeding_runs`,
// `{org}/{run id}`) holds its settings, status and lease; its source waits in `seeding_uploads`
// (parts of at most PART_BYTES, so any replica can read it and MongoDB's document limit holds)
// until it is extracted into items (`seeding_items`, `{org}/{run id}/{index}`), each with its
// outcome. `seeding_sequences` numbers the decided items of a run (the event ids of a progress
// stream).
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { createHash, randomBytes } from 'node:crypto';
import { Namespace } from '../../../gen/mindgate/brain/v1/brain_pb.js';
import {
  SeedingItemSchema,
  type SeedingOutcome,
  SeedingProgressSchema,
  SeedingRunSchema,
  type SeedingStatus,
  type SeedingItem,
  type SeedingRun,
} from '../../../gen/mindgate/brain/v1/seeding_pb.js';
import type { RecordCollection, RecordDoc, RecordStore } from '../../common/storage/records/interface.ts';

export const PART_BYTES = 256 * 1024;

export const STATUS_NAMES = ['queued', 'extracting', 'awaiting_review', 'writing', 'succeeded', 'failed', 'cancelled'] as const;
export type StatusName = (typeof STATUS_NAMES)[number];
export const FINISHED: ReadonlySet<StatusName> = new Set(['succeeded', 'failed', 'cancelled']);

export const OUTCOME_NAMES = [
  'pending',
  'awaiting_review',
  'approved',
  'stored',
  'duplicate',
  'contradiction',
  'unchanged',
  'rejected',
  'failed',
  'skipped',
] as const;
export type OutcomeName = (typeof OUTCOME_NAMES)[number];
/** Outcomes still to be decided by the worker or a reviewer. */
export const OPEN_OUTCOMES: OutcomeName[] = ['pending', 'awaiting_review', 'approved'];

export interface WriterRecord {
  clientId: string;
  userId: string;
  clientName: string;
  userName: string;
}

export interface SeedingRunDoc extends RecordDoc {
  organizationId: string;
  runId: string;
  status: StatusName;
  sourceKind: 'upload' | 'url';
  sourceName: string;
  mediaType: string;
  sourceBytes: number;
  /** How many parts the upload was stored in (0 once extracted, or for a URL). */
  parts: number;
  namespace: 'knowledge' | 'episodes';
  keyPrefix: string;
  tags: string[];
  review: boolean;
  total: number;
  error: string;
  stopReason: string;
  createdBy: string;
  writer: WriterRecord;
  attempt: number;
  /** The holder's lease ('' when none). */
  leaseId: string;
  holder: string;
  /** When a replica should take it: queued or approved work, or the end of a lease. Absent: nothing to do. */
  dueAt?: number;
  rev: number;
  createdAt: number;
  updatedAt: number;
  finishedAt?: number;
}

export interface SeedingItemDoc extends RecordDoc {
  organizationId: string;
  runKey: string;
  index: number;
  outcome: OutcomeName;
  namespace: 'knowledge' | 'episodes';
  key: string;
  title: string;
  content: string;
  tags: string[];
  entities: string[];
  eventTime?: string;
  origin: string;
  reason: string;
  duplicates: Array<{ namespace: 'knowledge' | 'episodes'; key: string }>;
  contradictionIds: string[];
  version: number;
  seq: number;
  /** A write was started: after a crash, the same text at the key means this run stored it. */
  attempted?: boolean;
}

export interface UploadPartDoc extends RecordDoc {
  data: string;
}

export interface SequenceDoc extends RecordDoc {
  seq: number;
}

export interface SeedingStore {
  runs: RecordCollection<SeedingRunDoc>;
  items: RecordCollection<SeedingItemDoc>;
  uploads: RecordCollection<UploadPartDoc>;
  sequences: RecordCollection<SequenceDoc>;
}

export function openSeedingStore(records: RecordStore): SeedingStore {
  return {
    runs: records.collection<SeedingRunDoc>('seeding_runs', {
      indexes: [{ fields: ['organizationId', 'createdAt'] }, { fields: ['dueAt'] }],
    }),
    items: records.collection<SeedingItemDoc>('seeding_items', {
      indexes: [
        { fields: ['runKey', 'index'] },
        { fields: ['runKey', 'outcome', 'index'] },
        { fields: ['runKey', 'seq'] },
        { fields: ['organizationId'] },
      ],
    }),
    uploads: records.collection<UploadPartDoc>('seeding_uploads'),
    sequences: records.collection<SequenceDoc>('seeding_sequences'),
  };
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
export const RUN_ID = /^sdr_[a-z2-7]{20}$/;

export function newRunId(): string {
  let out = '';
  for (const b of randomBytes(20)) out += BASE32[b % 32];
  return `sdr_${out}`;
}

/** The run id of a request id (StartSeedingRequest.request_id): the same for every repeat of the request. */
export function requestRunId(organizationId: string, requestId: string): string {
  const digest = createHash('sha256').update(`${organizationId}\u0000${requestId}`).digest();
  let out = '';
  for (const b of digest.subarray(0, 20)) out += BASE32[b % 32];
  return `sdr_${out}`;
}

export const runKey = (organizationId: string, runId: string) => `${organizationId}/${runId}`;
export const itemId = (key: string, index: number) => `${key}/${String(index).padStart(6, '0')}`;
export const partId = (key: string, n: number) => `${key}/${n}`;
export const nsEnum = (ns: 'knowledge' | 'episodes') => (ns === 'episodes' ? Namespace.EPISODES : Namespace.KNOWLEDGE);

/** Counts by outcome, read from the items (correct by construction, whoever recorded them). */
export type Counts = Record<OutcomeName, number>;

export async function countItems(store: SeedingStore, key: string): Promise<Counts> {
  const counts = await Promise.all(OUTCOME_NAMES.map((outcome) => store.items.count({ runKey: key, outcome })));
  return Object.fromEntries(OUTCOME_NAMES.map((name, i) => [name, counts[i]])) as Counts;
}

export async function currentSeq(store: SeedingStore, key: string): Promise<number> {
  return (await store.sequences.get(key))?.seq ?? 0;
}

const ts = (ms: number | undefined) => (ms === undefined ? undefined : timestampFromMs(ms));

export function runProto(doc: SeedingRunDoc, counts: Counts, seq: number): SeedingRun {
  return create(SeedingRunSchema, {
    runId: doc.runId,
    organizationId: doc.organizationId,
    status: (STATUS_NAMES.indexOf(doc.status) + 1) as SeedingStatus,
    sourceKind: doc.sourceKind,
    sourceName: doc.sourceName,
    mediaType: doc.mediaType,
    sourceBytes: BigInt(doc.sourceBytes),
    namespace: nsEnum(doc.namespace),
    keyPrefix: doc.keyPrefix,
    tags: doc.tags,
    review: doc.review,
    progress: create(SeedingProgressSchema, {
      total: doc.total,
      pending: counts.pending,
      awaitingReview: counts.awaiting_review,
      approved: counts.approved,
      stored: counts.stored,
      duplicate: counts.duplicate,
      contradiction: counts.contradiction,
      unchanged: counts.unchanged,
      rejected: counts.rejected,
      failed: counts.failed,
      skipped: counts.skipped,
    }),
    error: doc.error,
    stopReason: doc.stopReason,
    createdBy: doc.createdBy,
    attempt: doc.attempt,
    seq: BigInt(seq),
    createTime: ts(doc.createdAt),
    updateTime: ts(doc.updatedAt),
    finishTime: ts(doc.finishedAt),
  });
}

export function itemProto(doc: SeedingItemDoc): SeedingItem {
  return create(SeedingItemSchema, {
    index: doc.index,
    outcome: (OUTCOME_NAMES.indexOf(doc.outcome) + 1) as SeedingOutcome,
    namespace: nsEnum(doc.namespace),
    key: doc.key,
    title: doc.title,
    content: doc.content,
    tags: doc.tags,
    entities: doc.entities,
    origin: doc.origin,
    reason: doc.reason,
    duplicates: doc.duplicates.map((d) => ({ namespace: nsEnum(d.namespace), key: d.key })),
    contradictionIds: doc.contradictionIds,
    version: BigInt(doc.version),
    seq: BigInt(doc.seq),
  });
}

export const statusOf = (s: SeedingStatus): StatusName | undefined => STATUS_NAMES[s - 1];
export const outcomeOf = (o: SeedingOutcome): OutcomeName | undefined => OUTCOME_NAMES[o - 1];
