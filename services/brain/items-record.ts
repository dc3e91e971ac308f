// Contradictions and open questions as the records store holds them. Their `_id` is
// `{organizationId}/{id}`, so an id from one organization never resolves in another.
import { randomBytes } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import {
  ContradictionMemberSchema,
  ContradictionSchema,
  ItemStatus,
  MemoryRefSchema,
  OpenQuestionSchema,
  SourceSchema,
  type Contradiction,
  type OpenQuestion,
} from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { RecordDoc } from '../common/storage/records/interface.ts';
import { namespaceEnum, type NamespaceName, type SourceRecord } from './memory-record.ts';

export type ItemStatusName = 'open' | 'resolved' | 'dismissed' | 'obsolete';

export interface RefRecord {
  namespace: NamespaceName;
  key: string;
}

export interface ContradictionRecord extends RecordDoc {
  id: string;
  organizationId: string;
  members: (RefRecord & { version: number })[];
  /** `namespace/key` of every member, for lookups by memory. */
  refs: string[];
  /** Sorted refs joined: one open contradiction per set of memories. */
  memberSet: string;
  reason: string;
  status: ItemStatusName;
  resolution: string;
  flaggedBy: 'detector' | 'client';
  source: SourceRecord;
  createdAt: number;
  resolvedAt?: number;
  resolvedBy?: SourceRecord;
  rev: number;
}

export interface QuestionRecord extends RecordDoc {
  id: string;
  organizationId: string;
  question: string;
  members: RefRecord[];
  refs: string[];
  /** Lower-cased entity names. */
  entities: string[];
  entityNames: string[];
  status: ItemStatusName;
  resolution: string;
  source: SourceRecord;
  createdAt: number;
  resolvedAt?: number;
  resolvedBy?: SourceRecord;
  rev: number;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

export function newItemId(prefix: 'ctr' | 'q'): string {
  const bytes = randomBytes(20);
  let out = '';
  for (const b of bytes) out += BASE32[b % 32];
  return `${prefix}_${out}`;
}

export const ITEM_ID = /^(ctr|q)_[a-z2-7]{20}$/;

export function itemDocId(organizationId: string, id: string): string {
  return `${organizationId}/${id}`;
}

const STATUS: Record<ItemStatusName, ItemStatus> = {
  open: ItemStatus.OPEN,
  resolved: ItemStatus.RESOLVED,
  dismissed: ItemStatus.DISMISSED,
  obsolete: ItemStatus.OBSOLETE,
};

export function statusEnum(status: ItemStatusName): ItemStatus {
  return STATUS[status];
}

export function statusName(status: ItemStatus): ItemStatusName | undefined {
  return (Object.keys(STATUS) as ItemStatusName[]).find((name) => STATUS[name] === status);
}

const ts = (ms: number | undefined) => (ms === undefined ? undefined : timestampFromMs(ms));

export function toContradiction(r: ContradictionRecord): Contradiction {
  return create(ContradictionSchema, {
    id: r.id,
    organizationId: r.organizationId,
    memories: r.members.map((m) =>
      create(ContradictionMemberSchema, {
        ref: create(MemoryRefSchema, { namespace: namespaceEnum(m.namespace), key: m.key }),
        version: BigInt(m.version),
      }),
    ),
    reason: r.reason,
    status: statusEnum(r.status),
    resolution: r.resolution,
    flaggedBy: r.flaggedBy === 'detector' ? 'DETECTOR' : 'CLIENT',
    source: create(SourceSchema, r.source),
    createTime: ts(r.createdAt),
    resolveTime: ts(r.resolvedAt),
    resolvedBy: r.resolvedBy ? create(SourceSchema, r.resolvedBy) : undefined,
  });
}

export function toQuestion(r: QuestionRecord): OpenQuestion {
  return create(OpenQuestionSchema, {
    id: r.id,
    organizationId: r.organizationId,
    question: r.question,
    memories: r.members.map((m) => create(MemoryRefSchema, { namespace: namespaceEnum(m.namespace), key: m.key })),
    entities: r.entityNames,
    status: statusEnum(r.status),
    resolution: r.resolution,
    source: create(SourceSchema, r.source),
    createTime: ts(r.createdAt),
    resolveTime: ts(r.resolvedAt),
    resolvedBy: r.resolvedBy ? create(SourceSchema, r.resolvedBy) : undefined,
  });
}
