import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  AskQuestionResponseSchema,
  ListQuestionsResponseSchema,
  ResolveQuestionResponseSchema,
  type AskQuestionRequest,
  type ListQuestionsRequest,
  type ResolveQuestionRequest,
} from '../../../gen/mindgate/brain/v1/brain_pb.js';
import { putWithEvents } from '../../common/events/outbox.ts';
import { requireList, requireOrganization, requireText } from '../../common/rpc/validate.ts';
import type { Filter } from '../../common/storage/records/interface.ts';
import type { BrainContext } from '../context.ts';
import { questionOpened, questionResolved, questionSubject } from '../events.ts';
import { itemDocId, newItemId, toQuestion, type ItemStatusName, type QuestionRecord, type RefRecord } from '../items-record.ts';
import { refString } from '../memory-record.ts';
import { normalizeEntity } from '../search/lexical-index.ts';
import { findPage } from '../../common/storage/records/paging.ts';
import {
  itemFilter,
  optionalStatus,
  pageRequest,
  pageScope,
  requireId,
  requireIds,
  requireLimit,
  requireResolution,
} from './contradictions.ts';
import { notFound, requireRefs, sourceOf } from './validate.ts';

export async function askQuestion(ctx: BrainContext, req: AskQuestionRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const question = requireText('question', req.question.trim(), 2_000, { required: true });
  const refs = req.memories.length ? requireRefs('memories', req.memories, 1, 20) : [];
  const entities = requireList('entities', req.entities, 20, 200);
  const id = newItemId('q');
  const record: QuestionRecord = {
    _id: itemDocId(organizationId, id),
    id,
    organizationId,
    question,
    members: refs,
    refs: refs.map((r) => refString(r.namespace, r.key)),
    entities: entities.map(normalizeEntity),
    entityNames: entities,
    status: 'open',
    resolution: '',
    source: sourceOf(req.source),
    createdAt: ctx.now(),
    rev: 1,
  };
  await putWithEvents(ctx.events, questionSubject(ctx), record, undefined, [questionOpened(record)], { expect: null });
  return create(AskQuestionResponseSchema, { question: toQuestion(record) });
}

/** Questions naming any of the memories or any of the entities (both empty: all). */
export async function listQuestionRecords(
  ctx: BrainContext,
  organizationId: string,
  refs: RefRecord[],
  entities: string[],
  status: ItemStatusName | undefined,
  limit: number,
): Promise<QuestionRecord[]> {
  const base: Filter = { organizationId };
  if (status) base.status = status;
  const options = { sort: { field: 'createdAt', direction: 'desc' as const }, limit };
  if (!refs.length && !entities.length) return ctx.questions.find(base, options);
  const lists = await Promise.all([
    refs.length ? ctx.questions.find({ ...base, refs: { $in: refs.map((r) => refString(r.namespace, r.key)) } }, options) : [],
    entities.length ? ctx.questions.find({ ...base, entities: { $in: entities.map(normalizeEntity) } }, options) : [],
  ]);
  const byId = new Map<string, QuestionRecord>();
  for (const r of lists.flat()) byId.set(r.id, r);
  return [...byId.values()].sort((a, b) => b.createdAt - a.createdAt).slice(0, limit);
}

export async function listQuestions(ctx: BrainContext, req: ListQuestionsRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const ids = requireIds(req.ids, 'q');
  const limit = requireLimit(req.limit);
  const status = optionalStatus(req.status);
  if (ids.length) {
    const records = await ctx.questions.getMany(ids.map((id) => itemDocId(organizationId, id)));
    const byId = new Map(records.filter((r) => r.organizationId === organizationId).map((r) => [r.id, r]));
    return create(ListQuestionsResponseSchema, {
      questions: ids.filter((id) => byId.has(id)).map((id) => toQuestion(byId.get(id)!)),
      missingIds: ids.filter((id) => !byId.has(id)),
    });
  }
  const entities = requireList('entities', req.entities, 20, 200);
  if (req.memories.length && entities.length) {
    // Either of two conditions: merged in memory, one page only.
    const refs = requireRefs('memories', req.memories, 1, 100);
    const records = await listQuestionRecords(ctx, organizationId, refs, entities, status, limit);
    return create(ListQuestionsResponseSchema, { questions: records.map(toQuestion) });
  }
  const filter = itemFilter(organizationId, req, status);
  if (entities.length) filter.entities = { $in: entities.map(normalizeEntity) };
  const page = await findPage(ctx.questions, filter, pageRequest(req, limit), {
    field: 'createdAt',
    direction: 'desc',
    scope: pageScope('questions', filter),
  });
  return create(ListQuestionsResponseSchema, { questions: page.items.map(toQuestion), nextPageToken: page.nextPageToken });
}

export async function resolveQuestion(ctx: BrainContext, req: ResolveQuestionRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const id = requireId('id', req.id, 'q');
  const change = requireResolution(req.status, req.resolution);
  const record = await ctx.questions.get(itemDocId(organizationId, id));
  if (!record || record.organizationId !== organizationId) notFound(`no question ${id} in this organization`);
  if (record.status !== 'open') {
    throw new ConnectError(`question ${id} is already ${record.status}: ${record.resolution}`, Code.FailedPrecondition);
  }
  const updated: QuestionRecord = { ...record, ...change, resolvedAt: ctx.now(), resolvedBy: sourceOf(req.source), rev: record.rev + 1 };
  const events = [questionResolved(updated)];
  if (!(await putWithEvents(ctx.events, questionSubject(ctx), updated, record, events, { expect: { rev: record.rev } }))) {
    throw new ConnectError(`question ${id} changed concurrently: fetch it again`, Code.Aborted);
  }
  return create(ResolveQuestionResponseSchema, { question: toQuestion(updated) });
}
