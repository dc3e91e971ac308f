// The Brain's events (services/common/events/catalogue.ts): memories written, deleted and
// superseded, contradictions flagged and closed, questions asked and settled. Each is written to the
// Brain's outbox with the change that makes it (putWithEvents), so none is lost or invented.
import { event, type NewEvent } from '../common/events/outbox.ts';
import type { BrainContext } from './context.ts';
import type { ContradictionRecord, QuestionRecord } from './items-record.ts';
import type { MemoryRecord, MemoryRefRecord, SourceRecord } from './memory-record.ts';

/** The collections the Brain's events are about, by the names the outbox knows them by. */
export const SUBJECTS = { memories: 'memories', contradictions: 'memory_contradictions', questions: 'memory_questions' } as const;

/** Each collection as putWithEvents takes it. */
export const memorySubject = (ctx: BrainContext) => ({ collection: SUBJECTS.memories, records: ctx.memories });
export const contradictionSubject = (ctx: BrainContext) => ({ collection: SUBJECTS.contradictions, records: ctx.contradictions });
export const questionSubject = (ctx: BrainContext) => ({ collection: SUBJECTS.questions, records: ctx.questions });

const iso = (ms: number) => new Date(ms).toISOString();

function writer(source: SourceRecord | undefined) {
  return {
    client_id: source?.clientId ?? '',
    client_name: source?.clientName ?? '',
    user_id: source?.userId ?? '',
    user_name: source?.userName ?? '',
  };
}

const ref = (r: MemoryRefRecord) => ({ namespace: r.namespace, key: r.key });

export function memoryWritten(record: MemoryRecord, created: boolean): NewEvent {
  return event(created ? 'memory.created' : 'memory.updated', record.organizationId, {
    namespace: record.namespace,
    key: record.key,
    title: record.title,
    content: record.content,
    tags: record.tags,
    entities: record.entities,
    version: record.version,
    written_by: writer(record.source),
    created_at: iso(record.createdAt),
    updated_at: iso(record.updatedAt),
    supersedes: record.supersedes ? ref(record.supersedes) : null,
  });
}

export function memoryDeleted(record: MemoryRecord, by: SourceRecord): NewEvent {
  return event('memory.deleted', record.organizationId, {
    namespace: record.namespace,
    key: record.key,
    version: record.version,
    deleted_by: writer(by),
  });
}

export function memorySuperseded(record: MemoryRecord, by: MemoryRefRecord): NewEvent {
  return event('memory.superseded', record.organizationId, {
    namespace: record.namespace,
    key: record.key,
    version: record.version,
    superseded_by: ref(by),
  });
}

function contradiction(r: ContradictionRecord) {
  return {
    id: r.id,
    memories: r.members.map((m) => ({ namespace: m.namespace, key: m.key, version: m.version })),
    reason: r.reason,
    status: r.status,
    resolution: r.resolution,
    flagged_by: r.flaggedBy,
  };
}

export function contradictionFlagged(r: ContradictionRecord): NewEvent {
  return event('contradiction.flagged', r.organizationId, { ...contradiction(r), flagged: writer(r.source) });
}

export function contradictionClosed(r: ContradictionRecord): NewEvent {
  return event('contradiction.resolved', r.organizationId, { ...contradiction(r), resolved_by: writer(r.resolvedBy) });
}

function question(r: QuestionRecord) {
  return {
    id: r.id,
    question: r.question,
    memories: r.members.map(ref),
    entities: r.entityNames,
    status: r.status,
    resolution: r.resolution,
  };
}

export function questionOpened(r: QuestionRecord): NewEvent {
  return event('question.opened', r.organizationId, { ...question(r), asked_by: writer(r.source) });
}

export function questionResolved(r: QuestionRecord): NewEvent {
  return event('question.resolved', r.organizationId, { ...question(r), resolved_by: writer(r.resolvedBy) });
}
