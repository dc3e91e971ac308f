import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import {
  MemorySchema,
  Namespace,
  OutcomeStatsSchema,
  SourceSchema,
  type Memory,
} from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { RecordDoc } from '../common/storage/records/interface.ts';

export type NamespaceName = 'episodes' | 'knowledge';

/** A memory as the records store holds it. */
export interface MemoryRecord extends RecordDoc {
  organizationId: string;
  namespace: NamespaceName;
  key: string;
  title: string;
  content: string;
  tags: string[];
  entities: string[];
  source: { clientId: string; userId: string; clientName: string };
  createdAt: number;
  updatedAt: number;
  version: number;
  stats: {
    worked: number;
    failed: number;
    lastWorkedAt?: number;
    lastFailedAt?: number;
    lastFailedBy?: string;
    lastFailedNote?: string;
  };
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

/** The text that is embedded and searched: the title carries much of the meaning. */
export function memoryText(record: Pick<MemoryRecord, 'title' | 'content' | 'tags'>): string {
  return [record.title, record.content, record.tags.length ? `tags: ${record.tags.join(', ')}` : '']
    .filter(Boolean)
    .join('\n');
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
    createTime: ts(record.createdAt),
    updateTime: ts(record.updatedAt),
    version: BigInt(record.version),
    stats: create(OutcomeStatsSchema, {
      worked: record.stats.worked,
      failed: record.stats.failed,
      lastWorkedAt: ts(record.stats.lastWorkedAt),
      lastFailedAt: ts(record.stats.lastFailedAt),
      lastFailedBy: record.stats.lastFailedBy ?? '',
      lastFailedNote: record.stats.lastFailedNote ?? '',
    }),
  });
}
